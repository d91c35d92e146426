// Query plans of narrows: every window and first-unread query reads its rows in the order it returns
// them, so it stops after the window instead of sorting everything that matches, and none reads the
// whole usermessage table. Checked with EXPLAIN QUERY PLAN on the exact SQL GET /messages runs (speed
// itself is measured in bench/narrow-shapes.ts, never in tests).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server';
import { createChannel, sendDirect, sendToChannel } from '../helpers/chat';
import { findUserById, type UserRow } from '../../src/lib/users';
import { narrowToSql, parseNarrow } from '../../src/lib/narrow';
import { firstUnreadParams, firstUnreadSql, windowSql } from '../../src/lib/fetch';

let t: TestServer;
let hamlet: UserRow;
const ch: Record<string, number> = {};
let someMessage = 0;

before(async () => {
  t = await startTestServer();
  const u = t.users;
  ch.pub = await createChannel(t, u.hamlet, 'plans', [u.hamlet, u.othello]);
  ch.protected = await createChannel(t, u.othello, 'plans-protected', [u.othello, u.hamlet], { invite_only: true, history_public_to_subscribers: false });
  someMessage = await sendToChannel(t, u.othello, ch.pub, 'topic', 'hello world');
  await sendToChannel(t, u.othello, ch.protected, 'topic', 'hello again');
  await sendDirect(t, u.othello, [u.hamlet], 'direct');
  await sendDirect(t, u.othello, [u.hamlet, u.admin], 'group');
  hamlet = findUserById(t.app.db, t.app.realmId(), u.hamlet.id) as UserRow;
});
after(() => t.close());

function narrows(): [string, unknown[]][] {
  const o = (operator: string, operand: unknown, negated = false) => ({ operator, operand, negated });
  const u = t.users;
  return [
    ['no narrow', []],
    ['channel', [o('channel', ch.pub)]],
    ['channel + topic', [o('channel', ch.pub), o('topic', 'topic')]],
    ['protected channel', [o('channel', ch.protected)]],
    ['protected channel + topic', [o('channel', ch.protected), o('topic', 'topic')]],
    ['topic', [o('topic', 'topic')]],
    ['sender', [o('sender', u.othello.id)]],
    ['dm', [o('dm', [u.othello.id])]],
    ['dm-including', [o('dm-including', u.othello.id)]],
    ['group-pm-with', [o('group-pm-with', u.admin.id)]],
    ['is:dm', [o('is', 'dm')]],
    ['is:starred', [o('is', 'starred')]],
    ['is:unread', [o('is', 'unread')]],
    ['is:mentioned', [o('is', 'mentioned')]],
    ['is:alerted', [o('is', 'alerted')]],
    ['is:resolved', [o('is', 'resolved')]],
    ['is:followed', [o('is', 'followed')]],
    ['is:muted', [o('is', 'muted')]],
    ['in:home', [o('in', 'home')]],
    ['in:all', [o('in', 'all')]],
    ['has:link', [o('has', 'link')]],
    ['has:reaction', [o('has', 'reaction')]],
    ['search', [o('search', 'hello')]],
    ['channel + search', [o('channel', ch.pub), o('search', 'hello world')]],
    ['search with a phrase', [o('search', '"hello world" again')]],
    ['search of stop words', [o('search', 'the')]],
    ['channel + is:followed', [o('channel', ch.pub), o('is', 'followed')]],
    ['dm []', [o('dm', [])]],
    ['not channel', [o('channel', ch.pub, true)]],
    ['is:starred + search', [o('is', 'starred'), o('search', 'hello')]],
    ['near', [o('near', String(someMessage))]],
    ['id', [o('id', someMessage)]],
    ['with', [o('with', someMessage)]],
    ['mentions', [o('mentions', u.othello.id)]],
    ['channels:public', [o('channels', 'public')]],
    ['channel + is:unread', [o('channel', ch.pub), o('is', 'unread')]],
    ['dm + is:starred', [o('dm', [u.othello.id]), o('is', 'starred')]],
    ['not is:dm', [o('is', 'dm', true)]],
    ['channel, not topic', [o('channel', ch.pub), o('topic', 'topic', true)]],
    ['not search', [o('search', 'hello', true)]],
  ];
}

function plan(sql: string, params: unknown[]): string[] {
  return (t.app.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail);
}

describe('narrow query plans', () => {
  it('read rows in window order (no sort) and never scan usermessage whole', () => {
    const problems: string[] = [];
    for (const [label, raw] of narrows()) {
      const n = narrowToSql(t.app.db, hamlet, parseNarrow(raw));
      const queries: [string, string, unknown[]][] = [
        ['before', windowSql(n, 'before'), [hamlet.id, ...n.params, 1_000_000, 100]],
        ['after', windowSql(n, 'after', true), [hamlet.id, ...n.params, 0, 100]],
        ['first unread', firstUnreadSql(n), firstUnreadParams(n, hamlet.id)],
      ];
      for (const [which, sql, params] of queries) {
        let lines: string[];
        try {
          lines = plan(sql, params);
        } catch (e) {
          problems.push(`${label} (${which}): ${String(e)}`);
          continue;
        }
        const bad = lines.filter((l) => /USE TEMP B-TREE FOR ORDER BY/.test(l) || /^SCAN (um|usermessage)\b/.test(l));
        if (bad.length) problems.push(`${label} (${which}): ${lines.join(' | ')}`);
      }
    }
    assert.deepEqual(problems, []);
  });
});
