// Outgoing-webhook bots (Zulip's outgoing webhook service, zerver/lib/outgoing_webhook.py): a message
// that mentions such a bot in a channel, or a direct message to it, is POSTed to the bot's URL after
// the send has committed, and the bot's answer is posted back where the message was. The send never
// waits: deliveries run on later turns from a bounded in-process queue. A bot server that times out
// or cannot be reached is tried again (3 retries, with backoff); after the last one, or at once for an
// error answer, an answer Parley cannot use or a refused address, the conversation gets Zulip's
// "Failure! ..." message from the bot and the bot's owner Zulip's notice, both as the bot.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { watchedCache } from '../db/watch';
import { JsonableError } from '../http/errors';
import { groupMemberIds } from '../lib/groups';
import { senderAccessFor } from '../lib/access';
import { formatMessages, type MessageRow } from '../lib/messages';
import { outboundPost, type OutboundResult } from '../lib/outbound-http';
import { BOT_TYPE } from '../lib/roles';
import { canAccessStreamHistory, type StreamRow } from '../lib/streams';
import { directMessageUrl, streamMessageUrl } from './message-move-notices';
import { findUserById, isBot, type UserRow } from '../lib/users';
import { ZULIP_VERSION } from '../version';
import { doSendMessage, type Addressee } from './messages';

/** Zulip's MAX_REQUEST_RETRIES: a timed-out or unreachable bot server is tried 1 + 3 times. */
export const MAX_REQUEST_RETRIES = 3;
const SERVICE_INTERFACE = { GENERIC: 1, SLACK: 2 } as const;
/** The client name of the bot's replies (Zulip's get_client("OutgoingWebhookResponse")). */
const REPLY_CLIENT = 'OutgoingWebhookResponse';

export type ServiceTrigger = { botId: number; trigger: 'mention' | 'direct_message' };

/**
 * The organization's active outgoing-webhook bots, from memory: a mention looked them up with a query
 * (~10 µs) in every send that mentioned anyone. Emptied by any change to a user row (watchedCache).
 */
function outgoingWebhookBotIds(app: App, realmId: number): ReadonlySet<number> {
  return watchedCache<number, ReadonlySet<number>>(app.db, 'outgoing-webhook-bots', ['user']).get(realmId, () => {
    const rows = stmt(app.db, 'SELECT id FROM user WHERE realm_id = ? AND bot_type = ? AND is_active = 1').all(realmId, BOT_TYPE.OUTGOING_WEBHOOK) as { id: number }[];
    return new Set(rows.map((r) => r.id));
  });
}

/**
 * Which outgoing-webhook bots a message triggers (Zulip's get_service_bot_events): in a channel, the
 * bots mentioned (not silently), and the subscribed bots in a group mentioned (Zulip counts a group's
 * members as mentioned); in a direct message, the bots it is addressed to. Never a bot's message
 * (bots answering bots would loop). zulip-compat: a bot mentioned in a channel whose messages it may
 * not read (a private channel it is not subscribed to) is not sent the message; Zulip sends it.
 */
export function serviceBotTriggers(
  app: App,
  sender: UserRow,
  stream: StreamRow | null,
  recipients: readonly number[],
  mentioned: ReadonlySet<number>,
  mentionedGroups: ReadonlySet<number>,
  addressees: readonly UserRow[],
): ServiceTrigger[] {
  if (isBot(sender)) return [];
  if (stream === null) {
    return addressees.filter((u) => u.bot_type === BOT_TYPE.OUTGOING_WEBHOOK && u.is_active).map((u) => ({ botId: u.id, trigger: 'direct_message' }));
  }
  if (mentioned.size === 0 && mentionedGroups.size === 0) return [];
  // Most organizations have no outgoing-webhook bot, and most mentions name none.
  const webhookBots = outgoingWebhookBotIds(app, sender.realm_id);
  if (webhookBots.size === 0) return [];
  const candidates = new Set(mentioned);
  for (const gid of mentionedGroups) for (const uid of groupMemberIds(app.db, gid)) candidates.add(uid);
  const bots = [...candidates]
    .filter((id) => webhookBots.has(id))
    .sort((a, b) => a - b)
    .map((id) => findUserById(app.db, sender.realm_id, id) as UserRow);
  const mayRead = (b: UserRow) => recipients.includes(b.id) || (mentioned.has(b.id) && canAccessStreamHistory(app.db, b, stream));
  return bots.filter(mayRead).map((b) => ({ botId: b.id, trigger: 'mention' }));
}

interface ServiceRow {
  id: number;
  name: string;
  base_url: string;
  interface: number;
  config: string;
}

interface Delivery {
  realmId: number;
  botId: number;
  trigger: ServiceTrigger['trigger'];
  /** The message as stored when it was sent (Zulip sends the message dict of the send). */
  message: MessageRow;
  /** Set once the bot's services are read: each service is delivered (and retried) on its own. */
  service?: ServiceRow;
  failedTries: number;
}

/** Queues the deliveries a committed message triggers; returns at once (call from onCommit). */
export function queueOutgoingWebhooks(app: App, message: MessageRow, triggers: readonly ServiceTrigger[]): void {
  if (triggers.length === 0) return;
  const q = webhookQueue(app);
  for (const t of triggers) q.enqueue({ realmId: message.realm_id, botId: t.botId, trigger: t.trigger, message, failedTries: 0 });
}

/** The per-app delivery queue: bounded, a few requests at a time, retries on timers that never hold the process. */
export class WebhookQueue {
  private waiting: Delivery[] = [];
  private running = 0;
  private timers = new Set<NodeJS.Timeout>();
  private readonly abort = new AbortController();
  private stopped = false;
  /** Counters for logs and tests. */
  readonly stats = { delivered: 0, retried: 0, failed: 0, dropped: 0 };

  constructor(private readonly app: App) {
    app.onShutdown(() => this.stop());
  }

  /** Deliveries waiting, waiting for a retry, or running. */
  get pending(): number {
    return this.waiting.length + this.timers.size + this.running;
  }

  enqueue(d: Delivery): void {
    if (this.stopped) return;
    if (this.pending >= this.app.config.outgoingWebhooks.maxPending) {
      this.stats.dropped++;
      console.warn(`parley: outgoing webhook for message ${d.message.id} to bot ${d.botId} dropped: ${this.pending} deliveries pending`);
      return;
    }
    this.waiting.push(d);
    // On a later turn: nothing of a delivery runs while the send that triggered it answers.
    setImmediate(() => this.pump());
  }

  stop(): void {
    this.stopped = true;
    this.abort.abort();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.waiting = [];
  }

  private pump(): void {
    while (!this.stopped && this.running < this.app.config.outgoingWebhooks.concurrency && this.waiting.length > 0) {
      const d = this.waiting.shift() as Delivery;
      this.running++;
      this.run(d)
        .catch((err) => console.error('parley: outgoing webhook delivery failed', err))
        .finally(() => {
          this.running--;
          this.pump();
        });
    }
  }

  private retryLater(d: Delivery): void {
    if (this.stopped) return;
    this.stats.retried++;
    const delay = this.app.config.outgoingWebhooks.retryBaseMs * 2 ** (d.failedTries - 1);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (this.stopped) return;
      this.waiting.push(d);
      this.pump();
    }, delay);
    timer.unref();
    this.timers.add(timer);
  }

  private async run(d: Delivery): Promise<void> {
    const bot = findUserById(this.app.db, d.realmId, d.botId);
    if (!bot || !bot.is_active) return;
    if (!d.service) {
      const services = stmt(this.app.db, 'SELECT id, name, base_url, interface, config FROM bot_service WHERE bot_id = ? ORDER BY id').all(bot.id) as ServiceRow[];
      for (const service of services) await this.run({ ...d, service });
      return;
    }
    const outcome = await callService(this.app, bot, d, d.service, this.abort.signal);
    if (this.stopped) return;
    if (outcome === 'retry') {
      d.failedTries++;
      return this.retryLater(d);
    }
    if (outcome === 'failed') this.stats.failed++;
    else this.stats.delivered++;
  }
}

const queues = new WeakMap<App, WebhookQueue>();

/** The app's outgoing-webhook queue (created on first use). */
export function webhookQueue(app: App): WebhookQueue {
  let q = queues.get(app);
  if (!q) queues.set(app, (q = new WebhookQueue(app)));
  return q;
}

// ---- one request ----------------------------------------------------------------------------------

/** The message dict bots get: GET /messages' shape with raw Markdown and the rendered HTML too. */
function messageDict(app: App, bot: UserRow, m: MessageRow): Record<string, unknown> {
  const [dict] = formatMessages(app.db, [m], { applyMarkdown: false, clientGravatar: false, allowEmptyTopicName: true, senderAccess: senderAccessFor(app, bot) });
  dict.rendered_content = m.rendered_content;
  return dict;
}

/** The request body and its content type for the service's interface. */
function requestFor(app: App, bot: UserRow, d: Delivery, token: string, iface: number): { body: string; contentType: string } | null {
  const m = d.message;
  if (iface === SERVICE_INTERFACE.SLACK) {
    if (m.stream_id === null) return null;
    const dict = messageDict(app, bot, m);
    const host = new URL(app.publicUrl).host;
    // Slack's legacy outgoing-webhook form, as Zulip fills it in.
    const form = new URLSearchParams([
      ['token', token],
      ['team_id', `T${m.realm_id}`],
      ['team_domain', host],
      ['channel_id', `C${m.stream_id}`],
      ['channel_name', String(dict.display_recipient)],
      ['thread_ts', String(m.date_sent)],
      ['timestamp', String(m.date_sent)],
      ['user_id', `U${m.sender_id}`],
      ['user_name', String(dict.sender_full_name)],
      ['text', m.content],
      ['trigger_word', d.trigger],
      ['service_id', String(bot.id)],
    ]);
    return { body: form.toString(), contentType: 'application/x-www-form-urlencoded' };
  }
  const payload = {
    data: m.content,
    message: messageDict(app, bot, m),
    bot_email: bot.email,
    bot_full_name: bot.full_name,
    token,
    trigger: d.trigger,
  };
  return { body: JSON.stringify(payload), contentType: 'application/json' };
}

type Outcome = 'done' | 'failed' | 'retry';

/** One attempt at one service; posts the reply or the failure messages. Never throws a client error. */
async function callService(app: App, bot: UserRow, d: Delivery, service: ServiceRow, signal: AbortSignal): Promise<Outcome> {
  const cfg = app.config.outgoingWebhooks;
  let token = '';
  try {
    const parsed = JSON.parse(service.config) as { token?: unknown };
    if (typeof parsed.token === 'string') token = parsed.token;
  } catch {
    /* no token */
  }
  const request = requestFor(app, bot, d, token, service.interface);
  if (request === null) {
    failWithMessage(app, bot, d.message, "Slack outgoing webhooks don't support direct messages.");
    return 'failed';
  }
  const r: OutboundResult = await outboundPost({
    url: service.base_url,
    headers: { 'content-type': request.contentType, 'user-agent': `ZulipOutgoingWebhook/${ZULIP_VERSION}` },
    body: request.body,
    timeoutMs: cfg.timeoutMs,
    maxResponseBytes: cfg.maxResponseBytes,
    allowPrivate: cfg.allowPrivate,
    signal,
  });
  if (signal.aborted) return 'failed';
  // failedTries counts the attempts that failed before this one: the fourth attempt is the last.
  const lastTry = d.failedTries >= MAX_REQUEST_RETRIES;
  switch (r.kind) {
    case 'timeout':
    case 'connection': {
      const why = r.kind === 'timeout' ? `Request timed out after ${cfg.timeoutMs / 1000} seconds.` : 'A connection error occurred. Is my bot server down?';
      if (!lastTry) return 'retry';
      console.warn(`parley: outgoing webhook of bot ${bot.email}: maximum retries exceeded (${r.kind})`);
      failWithMessage(app, bot, d.message, 'Bot is unavailable');
      notifyBotOwner(app, bot, d.message, { failureMessage: why });
      return 'failed';
    }
    case 'refused':
      // zulip-compat: what Zulip's outgoing proxy (smokescreen) makes of a private address: a 407.
      console.warn(`parley: outgoing webhook of bot ${bot.email}: ${service.base_url} resolves to ${r.address}, which outgoing webhooks may not reach`);
      failWithMessage(app, bot, d.message, 'Third party responded with 407');
      notifyBotOwner(app, bot, d.message, { statusCode: 407 });
      return 'failed';
    case 'too_large':
    case 'error': {
      // zulip-compat: Zulip reads answers of any size; a larger one than Parley reads is an exception.
      const name = r.kind === 'too_large' ? 'ResponseTooLarge' : r.name;
      const text = r.kind === 'too_large' ? `The response is larger than ${cfg.maxResponseBytes} bytes.` : r.message;
      failWithMessage(app, bot, d.message, `An exception of type *${name}* occurred for message \`${d.message.content}\`! See the Zulip server logs for more information.`);
      notifyBotOwner(app, bot, d.message, { exception: { name, message: text } });
      return 'failed';
    }
    case 'response':
      break;
  }
  if (r.status < 200 || r.status > 299) {
    console.warn(`parley: message ${d.message.id} triggered an outgoing webhook of bot ${bot.email}, returning status code ${r.status}`);
    failWithMessage(app, bot, d.message, `Third party responded with ${r.status}`);
    notifyBotOwner(app, bot, d.message, { statusCode: r.status, responseContent: r.body.length > 0 ? pyBytesRepr(r.body) : null });
    return 'failed';
  }
  const text = r.body.toString('utf8');
  try {
    const content = replyContent(text, service.interface);
    if (content !== null) sendAsBot(app, bot, replyAddressee(app, d.message), content);
    return 'done';
  } catch (err) {
    if (!(err instanceof JsonableError)) throw err;
    failWithMessage(app, bot, d.message, err.message);
    notifyBotOwner(app, bot, d.message, {
      failureMessage: `The outgoing webhook server attempted to send a message in Zulip, but that request resulted in the following error:\n> ${err.message}`,
      responseContent: text === '' ? null : pyStrRepr(text),
    });
    return 'failed';
  }
}

/**
 * The content to post from a bot's successful answer, or null for none (Zulip's
 * process_success_response and the interfaces' process_success). Throws Zulip's errors for an answer
 * that is not JSON or not an object.
 */
export function replyContent(text: string, iface: number): string | null {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new JsonableError('Invalid JSON in response');
  }
  // The old bot server's "no response required".
  if (json === '') return null;
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new JsonableError('Invalid response format');
  const o = json as Record<string, unknown>;
  let content: string | null = null;
  if (iface === SERVICE_INTERFACE.SLACK) {
    if ('text' in o && o.text !== null) content = pyStr(o.text);
  } else if (pyTruthy(o.response_not_required)) {
    return null;
  } else if ('response_string' in o) {
    content = pyStr(o.response_string);
  } else if ('content' in o) {
    content = pyStr(o.content);
  }
  // widget_content is not passed on: Parley's widgets are made from /poll and /todo messages only.
  if (content === null || content.trim() === '') return null;
  return content;
}

/** Where the answer to `m` goes: the same channel and topic, or the same direct-message conversation. */
function replyAddressee(app: App, m: MessageRow): Addressee {
  if (m.stream_id !== null) return { kind: 'channel', streamId: m.stream_id, topic: m.topic };
  const ids = stmt(app.db, 'SELECT user_id FROM direct_group_member WHERE group_id = ? ORDER BY user_id').all(m.direct_group_id) as { user_id: number }[];
  return { kind: 'direct', userIds: ids.map((r) => r.user_id) };
}

/** Posts `content` as the bot through the normal send path, with the bot's permissions. */
function sendAsBot(app: App, bot: UserRow, to: Addressee, content: string): void {
  doSendMessage(app, bot, { to, content, client: REPLY_CLIENT });
}

/** Zulip's fail_with_message: "Failure! ..." from the bot where the message was; a refusal is only logged. */
function failWithMessage(app: App, bot: UserRow, m: MessageRow, failure: string): void {
  try {
    sendAsBot(app, bot, replyAddressee(app, m), `Failure! ${failure}`);
  } catch (err) {
    if (!(err instanceof JsonableError)) throw err;
    console.warn(`parley: outgoing webhook of bot ${bot.email}: could not post its failure message: ${err.message}`);
  }
}

/** Zulip's message_link_url: the "near" link to a message. */
function messageUrl(app: App, m: MessageRow): string {
  if (m.stream_id !== null) {
    const name = (stmt(app.db, 'SELECT name FROM stream WHERE id = ?').get(m.stream_id) as { name: string } | undefined)?.name ?? '';
    return streamMessageUrl(app, m.stream_id, name, m.topic, m.id);
  }
  const ids = (stmt(app.db, 'SELECT user_id FROM direct_group_member WHERE group_id = ?').all(m.direct_group_id) as { user_id: number }[]).map((r) => r.user_id);
  return directMessageUrl(app, ids, m.id);
}

interface OwnerNotice {
  statusCode?: number;
  responseContent?: string | null;
  failureMessage?: string;
  exception?: { name: string; message: string };
}

/** Zulip's notify_bot_owner: a direct message from the bot to its owner saying what went wrong. */
function notifyBotOwner(app: App, bot: UserRow, m: MessageRow, n: OwnerNotice): void {
  if (bot.bot_owner_id === null) return;
  let text = `[A message](${messageUrl(app, m)}) to your bot @_**${bot.full_name}** triggered an outgoing webhook.`;
  if (n.exception) {
    text += `\nWhen trying to send a request to the webhook service, an exception of type ${n.exception.name} occurred:\n\`\`\`\n${n.exception.message}\n\`\`\``;
  } else if (n.failureMessage) {
    text += '\n' + n.failureMessage;
  } else if (n.statusCode === 407) {
    text += '\nThe URL configured for the webhook is for a private or disallowed network.';
  } else if (n.statusCode) {
    text += `\nThe webhook got a response with status code *${n.statusCode}*.`;
  }
  if (n.responseContent) text += `\nThe response contains the following payload:\n\`\`\`\n${n.responseContent}\n\`\`\``;
  try {
    sendAsBot(app, bot, { kind: 'direct', userIds: [bot.bot_owner_id] }, text);
  } catch (err) {
    // An owner who has been deactivated since cannot be told (Zulip's send fails the same way).
    if (!(err instanceof JsonableError)) throw err;
    console.warn(`parley: outgoing webhook of bot ${bot.email}: could not tell its owner: ${err.message}`);
  }
}

// ---- Python's str() and repr(), which Zulip's texts show ------------------------------------------

/** Python's truthiness of a JSON value. */
function pyTruthy(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v as object).length > 0;
  return true;
}

/** Python's str() of a value parsed from JSON (str(5) is "5", str(None) "None", str([1]) "[1]"). */
export function pyStr(v: unknown): string {
  return typeof v === 'string' ? v : pyRepr(v);
}

function pyRepr(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number') return Number.isInteger(v) && Math.abs(v) < 1e16 ? String(v) : pyFloat(v);
  if (typeof v === 'string') return pyStrRepr(v);
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(', ')}]`;
  return `{${Object.entries(v as Record<string, unknown>)
    .map(([k, x]) => `${pyStrRepr(k)}: ${pyRepr(x)}`)
    .join(', ')}}`;
}

function pyFloat(v: number): string {
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  return String(v).replace(/e\+?/, 'e+').replace('e+-', 'e-');
}

const hex2 = (n: number) => n.toString(16).padStart(2, '0');

/** Python's repr() of a str: quoted, with control and non-printable characters escaped. */
export function pyStrRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = '';
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || (c >= 0x7f && c < 0xa0)) out += '\\x' + hex2(c);
    else if (ch !== ' ' && /[\p{C}\p{Z}]/u.test(ch)) out += c > 0xffff ? '\\U' + c.toString(16).padStart(8, '0') : c > 0xff ? '\\u' + c.toString(16).padStart(4, '0') : '\\x' + hex2(c);
    else out += ch;
  }
  return quote + out + quote;
}

/** Python's repr() of bytes: b'...' with every byte outside printable ASCII as \xNN. */
export function pyBytesRepr(b: Buffer): string {
  const quote = b.includes(0x27) && !b.includes(0x22) ? '"' : "'";
  let out = '';
  for (const c of b) {
    if (c === 0x5c) out += '\\\\';
    else if (c === quote.charCodeAt(0)) out += '\\' + quote;
    else if (c === 0x0a) out += '\\n';
    else if (c === 0x0d) out += '\\r';
    else if (c === 0x09) out += '\\t';
    else if (c < 0x20 || c >= 0x7f) out += '\\x' + hex2(c);
    else out += String.fromCharCode(c);
  }
  return 'b' + quote + out + quote;
}
