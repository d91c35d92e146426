// Shared fixtures for the channel and message tests: system group ids, quick channel creation and
// sending, all over the real API (or the actions, where a test needs many rows fast).
import assert from 'node:assert/strict';
import type { TestServer, TestUser } from './server';

export type SystemGroupName =
  | 'role:internet'
  | 'role:everyone'
  | 'role:members'
  | 'role:fullmembers'
  | 'role:moderators'
  | 'role:administrators'
  | 'role:owners'
  | 'role:nobody';

/** Ids of the organization's system groups, by name. */
export function systemGroups(t: TestServer): Record<SystemGroupName, number> {
  const rows = t.app.db.prepare('SELECT id, name FROM user_group WHERE is_system_group = 1').all() as { id: number; name: SystemGroupName }[];
  return Object.fromEntries(rows.map((r) => [r.name, r.id])) as Record<SystemGroupName, number>;
}

/** Creates a channel through POST /channels/create and returns its id. */
export async function createChannel(
  t: TestServer,
  user: TestUser,
  name: string,
  subscribers: TestUser[],
  opts: Record<string, unknown> = {},
): Promise<number> {
  const res = await t.api(user, 'POST', '/channels/create', { name, subscribers: subscribers.map((u) => u.id), ...opts });
  assert.equal(res.status, 200, res.text);
  return res.body.id as number;
}

/** Sends a channel message and returns its id. */
export async function sendToChannel(t: TestServer, user: TestUser, channel: number | string, topic: string, content: string): Promise<number> {
  const res = await t.api(user, 'POST', '/messages', { type: 'channel', to: channel, topic, content });
  assert.equal(res.status, 200, res.text);
  return res.body.id as number;
}

/** Sends a direct message to the given users and returns its id. */
export async function sendDirect(t: TestServer, user: TestUser, to: TestUser[], content: string): Promise<number> {
  const res = await t.api(user, 'POST', '/messages', { type: 'direct', to: to.map((u) => u.id), content });
  assert.equal(res.status, 200, res.text);
  return res.body.id as number;
}

/** Ids of the messages in a GET /messages response. */
export const ids = (body: { messages: { id: number }[] }) => body.messages.map((m) => m.id);

export const SUCCESS = { result: 'success', msg: '' } as const;

/** A Zulip error body. */
export function err(msg: string, code = 'BAD_REQUEST', extra: Record<string, unknown> = {}) {
  return { result: 'error', msg, code, ...extra };
}

/**
 * The messages of a channel topic as `user` sees them, oldest first, with raw Markdown content and the
 * topic as stored (allow_empty_topic_name).
 */
export async function topicMessages(t: TestServer, user: TestUser, channelId: number, topic: string): Promise<Record<string, any>[]> {
  const res = await t.api(user, 'GET', '/messages', {
    anchor: 'oldest',
    num_before: 0,
    num_after: 100,
    apply_markdown: false,
    allow_empty_topic_name: true,
    narrow: [
      { operator: 'channel', operand: channelId },
      { operator: 'topic', operand: topic },
    ],
  });
  assert.equal(res.status, 200, res.text);
  return res.body.messages;
}
