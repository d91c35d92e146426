import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { buildNarrowPredicate, checkNarrowForEvents, narrowSchema, type NarrowTerm } from '../../src/events/narrow-match';
import { JsonableError } from '../../src/http/errors';

const streamMsg = { type: 'stream', stream_id: 7, display_recipient: 'Denmark', subject: 'Castle walls', sender_email: 'Hamlet@example.com', sender_id: 4 };
const resolvedMsg = { ...streamMsg, subject: '✔ Castle walls' };
const dm = { type: 'private', display_recipient: [], subject: '', sender_email: 'othello@example.com', sender_id: 5 };

const cases: [string, NarrowTerm[], Record<string, unknown>, string[], boolean][] = [
  ['empty narrow matches everything', [], dm, [], true],
  ['channel by name, case-insensitive', [{ operator: 'channel', operand: 'denmark' }], streamMsg, [], true],
  ['legacy stream alias', [{ operator: 'stream', operand: 'Denmark' }], streamMsg, [], true],
  ['channel by id', [{ operator: 'channel', operand: 7 }], streamMsg, [], true],
  ['other channel', [{ operator: 'channel', operand: 'Verona' }], streamMsg, [], false],
  ['channel never matches a DM', [{ operator: 'channel', operand: 'Denmark' }], dm, [], false],
  ['topic, whole', [{ operator: 'topic', operand: 'castle walls' }], streamMsg, [], true],
  ['topic, one word of it (Zulip quirk)', [{ operator: 'topic', operand: 'Walls' }], streamMsg, [], true],
  ['topic, other', [{ operator: 'topic', operand: 'moat' }], streamMsg, [], false],
  ['exact-topic is case-sensitive', [{ operator: 'exact-topic', operand: 'castle walls' }], streamMsg, [], false],
  ['exact-topic', [{ operator: 'exact-topic', operand: 'Castle walls' }], streamMsg, [], true],
  ['sender by email', [{ operator: 'sender', operand: 'hamlet@EXAMPLE.com' }], streamMsg, [], true],
  ['sender by id', [{ operator: 'sender', operand: 5 }], dm, [], true],
  ['is:dm', [{ operator: 'is', operand: 'dm' }], dm, [], true],
  ['is:private on a channel message', [{ operator: 'is', operand: 'private' }], streamMsg, [], false],
  ['is:starred', [{ operator: 'is', operand: 'starred' }], dm, ['read', 'starred'], true],
  ['is:starred without the flag', [{ operator: 'is', operand: 'starred' }], dm, ['read'], false],
  ['is:unread', [{ operator: 'is', operand: 'unread' }], dm, [], true],
  ['is:unread when read', [{ operator: 'is', operand: 'unread' }], dm, ['read'], false],
  ['is:alerted uses the mentioned flag', [{ operator: 'is', operand: 'alerted' }], dm, ['mentioned'], true],
  ['is:resolved', [{ operator: 'is', operand: 'resolved' }], resolvedMsg, [], true],
  ['is:resolved on an open topic', [{ operator: 'is', operand: 'resolved' }], streamMsg, [], false],
  [
    'all terms must hold',
    [
      { operator: 'channel', operand: 'Denmark' },
      { operator: 'topic', operand: 'moat' },
    ],
    streamMsg,
    [],
    false,
  ],
];

describe('buildNarrowPredicate', () => {
  for (const [name, narrow, message, flags, expected] of cases) {
    it(name, () => assert.equal(buildNarrowPredicate(narrow)(message, flags), expected));
  }
});

describe('checkNarrowForEvents', () => {
  const refuse = (terms: { operator: string; operand: string | number; negated?: boolean }[], msg: string) =>
    assert.throws(
      () => checkNarrowForEvents(terms),
      (e: unknown) => e instanceof JsonableError && e.message === msg,
    );

  it('refuses operators Zulip does not filter events by', () => refuse([{ operator: 'search', operand: 'x' }], 'Operator search not supported.'));
  it('refuses is:followed', () => refuse([{ operator: 'is', operand: 'followed' }], 'Operand followed not supported.'));
  it('refuses negated terms', () =>
    refuse([{ operator: 'channel', operand: 'Denmark', negated: true }], 'Negated narrow terms are not supported for event queues.'));
  it('accepts and strips supported terms', () =>
    assert.deepEqual(checkNarrowForEvents([{ operator: 'topic', operand: 'x', negated: false }]), [{ operator: 'topic', operand: 'x' }]));
});

describe('narrowSchema', () => {
  it('reads legacy pairs and objects alike', () => {
    const out = v.parse(narrowSchema, [['stream', 'Denmark'], { operator: 'is', operand: 'dm' }]);
    assert.deepEqual(out, [
      { operator: 'stream', operand: 'Denmark', negated: false },
      { operator: 'is', operand: 'dm', negated: false },
    ]);
  });

  it('rejects other shapes', () => {
    assert.equal(v.safeParse(narrowSchema, [['stream']]).success, false);
    assert.equal(v.safeParse(narrowSchema, 'stream').success, false);
    assert.equal(v.safeParse(narrowSchema, [{ operand: 'x' }]).success, false);
  });
});
