// POST /messages without HTTP: doSendMessage in batches of 16 per commit (as 16 concurrent clients
// share a turn), to a channel of 50 subscribers. Run by hand:
//   node --import tsx bench/send-inprocess.ts          N=4000 messages, plain, flat and mix contents
//   DROP=usermessage_unread node --import tsx bench/send-inprocess.ts   (what an index costs)
// For each content (bench/send-content.ts) it prints the rate and µs per message split into stages,
// from a CPU profile taken in process (node:inspector, 100 µs samples) of a second, equal run: each
// sample goes to the stage of the innermost function of its stack that names one (STAGES below),
// and a stage's share of the samples is its share of the unprofiled run's CPU time per message (the
// profiler slows the run it watches). better-sqlite3's statements
// run in native code that the profiler shows as its JavaScript caller, so a statement counts in the
// stage of the function that runs it (see sendSplit for inlined functions). bench/messages.ts send --content both prints it too.
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { createApp, type App } from '../src/app';
import { configFromEnv } from '../src/config';
import { doCreateRealm } from '../src/actions/realm';
import { doCreateUser } from '../src/actions/users';
import { doCreateChannel } from '../src/actions/streams';
import { doSendMessage } from '../src/actions/messages';
import { ROLE } from '../src/lib/roles';
import { findUserById, type UserRow } from '../src/lib/users';
import { sendContent, type ContentKind } from './send-content';

/** Stage of a function name (as V8 names them, tsx keeps src's names); the innermost match wins. */
const STAGES: Record<string, string> = {
  renderMessage: 'parse and render',
  // Below renderMessage, in case V8 inlined it (a profile shows no frame for an inlined function).
  renderMarkdown: 'parse and render',
  renderContext: 'parse and render',
  OrganizationRenderContext: 'parse and render',
  channelForSend: 'access checks',
  checkCanSendToChannel: 'access checks',
  checkCanCreateTopic: 'access checks',
  checkWildcardMentions: 'access checks',
  checkGroupMentions: 'access checks',
  topicWildcardParticipants: 'access checks',
  userIdsWhoCannotAccess: 'access checks',
  subscriberIds: 'access checks',
  getRealmById: 'access checks',
  normalizeContent: 'access checks',
  normalizeTopic: 'access checks',
  applyAutomaticVisibility: 'writes: topic follow',
  sendTimeFlags: 'writes: flags',
  mentionBits: 'writes: flags',
  claimUploads: 'writes',
  addWidgetSubmessage: 'writes',
  serviceBotTriggers: 'delivery',
  announceMessage: 'delivery',
  queueMessagePush: 'delivery',
  queueOutgoingWebhooks: 'delivery',
  commit: 'commit',
  doSendMessage: 'writes',
  // doSendMessage's body, under which V8 often inlines doSendMessage and WriteBatch.write away.
  'app.batch.write.checksFirst': 'writes',
};
const ORDER = ['parse and render', 'access checks', 'writes', 'writes: flags', 'writes: topic follow', 'commit', 'delivery', 'other'];

interface ProfileNode {
  id: number;
  callFrame: { functionName: string };
  children?: number[];
}

/** µs per message of each stage: `ms` (of `n` sends) split as the profile's samples are. */
function splitProfile(profile: { nodes: ProfileNode[]; samples: number[] }, ms: number, n: number): Map<string, number> {
  const parent = new Map<number, number>();
  const byId = new Map<number, ProfileNode>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const c of node.children ?? []) parent.set(c, node.id);
  }
  const stageOf = new Map<number, string>();
  const stage = (id: number): string => {
    let s = stageOf.get(id);
    if (s === undefined) {
      const name = byId.get(id)?.callFrame.functionName ?? '';
      const p = parent.get(id);
      s = STAGES[name] ?? (p === undefined ? 'other' : stage(p));
      stageOf.set(id, s);
    }
    return s;
  };
  const counts = new Map<string, number>();
  for (const id of profile.samples) counts.set(stage(id), (counts.get(stage(id)) ?? 0) + 1);
  const total = profile.samples.length;
  const out = new Map<string, number>();
  for (const k of ORDER) out.set(k, (((counts.get(k) ?? 0) / total) * ms * 1000) / n);
  return out;
}

export interface SendSplit {
  kind: ContentKind;
  rate: number;
  /** µs per message by stage (ORDER). */
  stages: Map<string, number>;
}

/**
 * Sends `n` messages of each kind (after a warm-up of each) and splits their time into stages.
 * Optimised code inlines small functions into their callers, and a profile then shows their time
 * as the caller's: STAGES names the big functions below each stage too (renderMarkdown below
 * renderMessage), and a small check inlined into doSendMessage's body counts as a write. (Turning
 * inlining off instead made markdown-it three times slower: the split would be of another program.)
 */
/** A temporary organization of 50 users, all subscribed to channel "bench", as the send benchmarks use. */
export function benchApp(): { app: App; dir: string; ownerRow: UserRow; stream: { id: number }; mix: { mentionable: string[]; channel: string } } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-send-'));
  const config = configFromEnv({});
  config.dataDir = dir;
  const app = createApp(config);
  const { realmId, owner } = doCreateRealm(app, { name: 'Bench', ownerEmail: 'owner@bench.example.com', ownerPassword: 'benchmark-pw', ownerFullName: 'Owner' });
  const ids = [owner.userId];
  const mentionable: string[] = [];
  for (let i = 1; i < 50; i++) {
    ids.push(doCreateUser(app, { realmId, email: `user${i}@bench.example.com`, password: null, fullName: `User ${i}`, role: ROLE.MEMBER, acting: null }).userId);
    mentionable.push(`User ${i}`);
  }
  const ownerRow = findUserById(app.db, realmId, owner.userId) as UserRow;
  const stream = doCreateChannel(app, ownerRow, realmId, { name: 'bench' });
  const sub = app.db.prepare('INSERT INTO subscription (user_id, stream_id) VALUES (?, ?)');
  app.batch.write(() => {
    for (const id of ids) if (id !== owner.userId) sub.run(id, stream.id);
  });
  app.batch.commit();
  return { app, dir, ownerRow, stream, mix: { mentionable, channel: 'bench' } };
}

export async function sendSplit(kinds: ContentKind[], n: number): Promise<SendSplit[]> {
  const { app, dir, ownerRow, stream, mix } = benchApp();
  if (process.env.DROP) for (const ix of process.env.DROP.split(',')) app.db.exec(`DROP INDEX ${ix}`);
  let next = 0;
  const run = (kind: ContentKind, count: number) => {
    for (let i = 0; i < count; i += 16) {
      for (let j = 0; j < 16; j++) {
        doSendMessage(app, ownerRow, { to: { kind: 'channel', streamId: stream.id, topic: `topic ${j % 4}` }, content: sendContent(kind, next++, mix) });
      }
      app.batch.commit();
    }
  };
  for (const k of kinds) run(k, 2000);
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  const out: SendSplit[] = [];
  for (const kind of kinds) {
    // CPU time, not wall time: on a shared machine the process waits for a core, and wall time
    // doubled from one run to the next with other work around.
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    run(kind, n);
    const used = process.cpuUsage(c0);
    const wall = performance.now() - t0;
    const cpuMs = (used.user + used.system) / 1000;
    await session.post('Profiler.start');
    run(kind, n);
    const { profile } = await session.post('Profiler.stop');
    out.push({ kind, rate: (n / wall) * 1000, stages: splitProfile(profile as unknown as { nodes: ProfileNode[]; samples: number[] }, cpuMs, n) });
  }
  session.disconnect();
  app.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return out;
}

/** The split as a table: one column per content. */
export function splitTable(splits: SendSplit[]): string {
  // With flat and mix, a column of their difference: what the markup costs at each stage.
  const flat = splits.find((s) => s.kind === 'flat');
  const mix = splits.find((s) => s.kind === 'mix');
  const markup = flat && mix ? (k: string) => ((mix.stages.get(k) as number) - (flat.stages.get(k) as number)).toFixed(1).padStart(10) : null;
  const rows = [`  ${'CPU µs per message'.padEnd(22)}${splits.map((s) => s.kind.padStart(9)).join('')}${markup ? 'mix−flat'.padStart(10) : ''}`];
  for (const k of ORDER) rows.push(`  ${k.padEnd(22)}${splits.map((s) => (s.stages.get(k) as number).toFixed(1).padStart(9)).join('')}${markup?.(k) ?? ''}`);
  const total = (s: SendSplit) => [...s.stages.values()].reduce((a, b) => a + b, 0);
  const totals = `${splits.map((s) => total(s).toFixed(1).padStart(9)).join('')}${flat && mix ? (total(mix) - total(flat)).toFixed(1).padStart(10) : ''}`;
  rows.push(`  ${'total'.padEnd(22)}${totals}`);
  rows.push(`  ${'messages/s (wall)'.padEnd(22)}${splits.map((s) => s.rate.toFixed(0).padStart(9)).join('')}`);
  return rows.join('\n');
}

if (process.argv[1] && path.basename(process.argv[1]) === 'send-inprocess.ts') {
  const N = Number(process.env.N ?? 4000);
  sendSplit(['plain', 'flat', 'mix'], N).then((splits) => {
    console.log(`${N} messages of each content in process (50 subscribers, 16 per commit, load average ${os.loadavg()[0].toFixed(2)}):\n${splitTable(splits)}`);
  });
}
