import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { capabilities, EventQueue, openJson, type QueueSpec } from '../../src/events/queue';

const spec: QueueSpec = {
  userId: 1,
  realmId: 1,
  eventTypes: null,
  narrow: [],
  allPublicStreams: false,
  applyMarkdown: true,
  clientGravatar: false,
  slimPresence: false,
  capabilities: capabilities({}),
  lifespanSeconds: 600,
};

describe('EventQueue serialised contents', () => {
  it('is JSON.stringify of each event with its id appended, byte for byte', () => {
    const q = new EventQueue('q1', spec, 0);
    const events = [
      { type: 'message', message: { id: 5, content: '<p>"é" \u2028</p>' }, flags: ['read'] },
      { type: 'x', gone: undefined, nested: { a: [1, null] } },
      { type: 'attachment', id: 77, op: 'remove' },
    ];
    for (const e of events) q.push(openJson(e));
    assert.equal(q.acknowledge(-1), 'ok');
    const expected = events.map((e, i) => {
      const { id: _id, ...rest } = e as Record<string, unknown>;
      return { ...rest, id: i };
    });
    assert.equal(q.contentsJson(), JSON.stringify(expected));
    assert.deepEqual(q.contents(), JSON.parse(JSON.stringify(expected)));
    assert.equal(q.acknowledge(1), 'ok');
    assert.equal(q.contentsJson(), JSON.stringify(expected.slice(2)));
    assert.equal(q.acknowledge(2), 'ok');
    assert.equal(q.contentsJson(), '[]');
  });

  it('answers the parked poll with the JSON at the first push, and only once', () => {
    const q = new EventQueue('q2', spec, 0);
    const answers: string[] = [];
    q.park((json) => answers.push(json), 60_000, 0);
    assert.equal(q.parked, true);
    q.push(openJson({ type: 'a' }));
    q.push(openJson({ type: 'b' }));
    assert.equal(q.parked, false);
    assert.deepEqual(answers, ['[{"type":"a","id":0}]']);
    const gone = (json: string) => answers.push(`abandoned ${json}`);
    q.park(gone, 60_000, 0);
    q.abandonPoll(gone, 0);
    q.push(openJson({ type: 'c' }));
    assert.deepEqual(answers, ['[{"type":"a","id":0}]']);
  });
});
