// `parley import --from slack`: a Slack workspace export into a new organization, mapped as Zulip's
// own Slack importer (zerver/data_import/slack.py) maps it:
// - users: the primary owner owns the organization; owners, admins, guests (restricted and
//   ultra-restricted) keep their role; deleted users are deactivated; bots (and the integrations that
//   posted without a user) become bots; people sharing an email address become one account.
// - public channels (channels.json) and private ones (groups.json, hidden history) with their
//   members as subscribers and their purpose (else topic) as description; archived ones archived;
//   #general and #random are default channels, #general the announcements channel.
// - group DMs (mpims.json) and DMs (dms.json) as direct-message conversations.
// - messages in time order, all read; threads as topics (threads.ts), the rest in "imported from
//   Slack"; text to Zulip Markdown (markdown.ts, blocks.ts) rendered by Parley's renderer; reactions;
//   files as uploads when the export holds their contents (__uploads/ID/NAME), else linked.
import fs from 'node:fs';
import path from 'node:path';
import type { App } from '../../app';
import { stmt } from '../../db/stmt';
import { JsonableError } from '../../http/errors';
import { doCreateRealm } from '../../actions/realm';
import { doCreateChannel } from '../../actions/streams';
import { doCreateUser } from '../../actions/users';
import { doCreateField, updateProfileData } from '../../actions/profile-fields';
import { FIELD_TYPE } from '../../lib/profile-fields';
import { findUserById, type UserRow } from '../../lib/users';
import { directGroupFor, normalizeContent } from '../../actions/messages';
import { ROLE, BOT_TYPE } from '../../lib/roles';
import { MAX_NAME_LENGTH } from '../../lib/validate';
import { realmExtraSettings } from '../../lib/realm-settings';
import { getRealmById } from '../../lib/realm';
import { newPathId, pathIdName, sanitizeName, storePath, uploadUrl } from '../../uploads/store';
import { ImportError } from '../errors';
import { At } from '../shape';
import { openZip, type ZipArchive } from '../zip';
import type { Importer } from '../run';
import { finishImportedMessages, insertImportedAttachment, insertImportedMessage, insertImportedReaction, insertImportedSubscriptions } from '../write';
import { blocksAndAttachments } from './blocks';
import { zulipEmoji } from './emoji';
import { MAX_JSON_BYTES, readSlackExport, type SlackUser } from './export';
import { convertText } from './markdown';
import { ThreadTopics, UNTHREADED_TOPIC } from './threads';

/** Most bytes of one file copied out of the export. */
export const MAX_FILE_BYTES = 1024 ** 3;

interface ImportSummary {
  realmId: number;
  users: number;
  channels: number;
  direct_conversations: number;
  messages: number;
  reactions: number;
  uploads: number;
  warnings: string[];
}

// Slack's notices Zulip leaves out: pins, and the joins, leaves and renames that are noise in a history.
const SKIPPED_SUBTYPES = new Set(['pinned_item', 'unpinned_item', 'channel_join', 'channel_leave', 'channel_name']);
// Subtypes whose text is an action: "/me started a call".
const ME_SUBTYPES = new Set(['bot_add', 'sh_room_created', 'me_message']);
const DEFAULT_CHANNELS = new Set(['general', 'random']);
const ANNOUNCEMENTS_CHANNEL = 'general';

/** The user a message comes from (Zulip's get_message_sending_user): user, the file's user, or the bot id. */
function sendingUser(m: At): string | null {
  if (m.get('user').present) return m.get('user').string();
  if (m.get('file').present && m.get('file').get('user').present) return m.get('file').get('user').string();
  if (m.get('bot_id').present) return m.get('bot_id').string();
  return null;
}

/** A Slack timestamp as written ("1700000000.000100"): threads are matched on the text. */
function tsText(v: At): string | undefined {
  if (!v.present) return undefined;
  v.number();
  return String(v.value);
}

/** A bot message without a user: an integration, which Zulip's importer turns into a bot of its own. */
function isIntegrationBotMessage(m: At): boolean {
  return m.get('subtype').optString() === 'bot_message' && !m.get('user').present && m.get('bot_id').present;
}

/** Zulip's get_user_full_name: a deleted user is known by their handle. */
function fullNameOf(u: SlackUser): string {
  return u.deleted ? u.name : u.realName || u.name;
}

/**
 * A name Parley can store. Slack allows characters Zulip's names may not hold (they would break
 * mention syntax: * ` \ > " @, control characters, a trailing "|123"); Zulip's importer copies names
 * unchecked, Parley leaves those characters out (and says so) rather than refuse the whole import.
 */
function storableName(raw: string, fallback: string): string {
  const clean = (s: string) =>
    Array.from(
      s
        .replace(/[*`\\>"@\u0000-\u001f\u007f]/g, ' ')
        .replace(/\|\d+$/, '')
        .replace(/\s+/g, ' ')
        .trim(),
    )
      .slice(0, MAX_NAME_LENGTH)
      .join('')
      .trim();
  const name = clean(raw);
  if (Array.from(name).length >= 2) return name;
  const other = clean(fallback);
  return Array.from(other).length >= 2 ? other : `Slack user ${fallback}`;
}

interface Conversation {
  kind: 'channel' | 'direct';
  folder: string;
  streamId: number | null;
  directGroupId: number | null;
  /** Zulip user ids that get a row for each message. */
  recipients: number[];
}

interface IntegrationBot {
  botId: string;
  name: string;
  deleted: boolean;
}

async function importSlack(app: App, archive: ZipArchive, opts: { realmName: string }): Promise<ImportSummary> {
  const exp = await readSlackExport(archive);
  const warnings: string[] = [];
  const conversations = new Map<string, { kind: 'channel' | 'direct'; slackId: string }>();
  for (const c of exp.channels) conversations.set(c.name, { kind: 'channel', slackId: c.id });
  for (const c of [...exp.mpims, ...exp.dms]) conversations.set(c.folder, { kind: 'direct', slackId: c.id });

  const readDay = async (folder: string, day: string): Promise<At[]> => {
    const name = `${folder}/${day}`;
    const entry = archive.entries.get(name) as NonNullable<ReturnType<typeof archive.entries.get>>;
    return new At(name, await archive.readJson(entry, MAX_JSON_BYTES)).list();
  };
  const folders = [...exp.days.keys()].filter((f) => conversations.has(f));
  const dayNames = [...new Set(folders.flatMap((f) => exp.days.get(f) as string[]))].filter((d) => d.endsWith('.json')).sort();

  // First pass over every message: its shape, its sender, and the integrations that need a bot user.
  const userIds = new Set(exp.users.map((u) => u.id));
  const botIdToUser = new Map<string, string>();
  for (const u of exp.users) if (u.botId) botIdToUser.set(u.botId, u.id);
  const integrations = new Map<string, IntegrationBot>();
  for (const folder of folders) {
    for (const day of exp.days.get(folder) as string[]) {
      if (!day.endsWith('.json')) continue;
      for (const m of await readDay(folder, day)) {
        m.object();
        m.get('ts').number();
        if (m.get('text').present) m.get('text').string();
        const sender = sendingUser(m);
        if (sender === null || sender === 'U00') continue;
        if (isIntegrationBotMessage(m) && !botIdToUser.has(sender)) {
          if (!integrations.has(sender)) {
            const profile = m.get('bot_profile');
            const name = (profile.present ? profile.get('name').optString() : undefined) ?? m.get('username').optString() ?? `Deleted Slack Bot ${sender}`;
            integrations.set(sender, { botId: sender, name, deleted: profile.present ? profile.get('deleted').bool() : false });
          }
          continue;
        }
        if (!userIds.has(sender) && !botIdToUser.has(sender)) m.fail(`is sent by ${sender}, who is not in users.json`);
      }
    }
  }

  // ---- the organization, its people, channels and conversations ----
  const owner = exp.users.find((u) => u.isPrimaryOwner) ?? exp.users.find((u) => u.isOwner && !u.deleted);
  if (!owner) throw new ImportError('users.json has no primary owner (is_primary_owner) to own the organization');
  if (!owner.email) throw new ImportError(`users.json: the primary owner ${owner.id} has no email address (profile.email)`);
  const domain = owner.email.slice(owner.email.lastIndexOf('@') + 1);
  const botEmails = new Map<string, number>();
  /** Zulip's SlackBotEmail: "<name without Bot and spaces>-bot@domain", numbered when taken. */
  const botEmail = (name: string): string => {
    const base = `${name.replace(/Bot/g, '').replace(/ /g, '').toLowerCase()}-bot`;
    const n = (botEmails.get(base) ?? 0) + 1;
    botEmails.set(base, n);
    return n === 1 ? `${base}@${domain}` : `${base}-${n}@${domain}`;
  };
  const emailOf = (u: SlackUser): string => {
    if (u.email) return u.email;
    if (u.botId) return botEmail(u.botName ?? u.name);
    if (fullNameOf(u).toLowerCase() === 'slackbot') return `imported-slackbot-bot@${domain}`;
    throw new ImportError(`users.json: user ${u.id} (${u.name}) has no email address (profile.email)`);
  };
  const roleOf = (u: SlackUser): number => {
    if (u.isGuest) return ROLE.GUEST;
    if (u.isOwner || u.isPrimaryOwner) return ROLE.OWNER;
    if (u.isAdmin) return ROLE.ADMINISTRATOR;
    return ROLE.MEMBER;
  };
  // Zulip's get_user_timezone: a zone without a "/" (or none) is America/New_York.
  const timezoneOf = (tz: string | null) => (tz && tz.includes('/') ? tz : 'America/New_York');

  const zulipId = new Map<string, number>(); // Slack user id or bot id → Parley user id
  const nameOf = (u: SlackUser): string => {
    const raw = fullNameOf(u);
    const name = storableName(raw, u.name);
    if (name !== raw) warnings.push(`users.json: the name of ${u.id} (${JSON.stringify(raw)}) is imported as ${JSON.stringify(name)}`);
    return name;
  };
  const fullNames = new Map<number, string>();
  let realmId = 0;
  const summary: ImportSummary = { realmId: 0, users: 0, channels: 0, direct_conversations: 0, messages: 0, reactions: 0, uploads: 0, warnings };
  const convs = new Map<string, Conversation>();
  const channelNames = new Map<string, string>(); // Slack channel id → name

  app.batch.write(() => {
    const described = (what: string, fn: () => void) => {
      try {
        fn();
      } catch (err) {
        if (err instanceof JsonableError) throw new ImportError(`${what}: ${err.message}`);
        throw err;
      }
    };
    const byEmail = new Map<string, number>();
    /** The accounts made for users.json's people (not the merged duplicates): who has profile fields. */
    const createdUsers: { u: SlackUser; id: number }[] = [];
    const ownerName = nameOf(owner);
    const ownerEmail = emailOf(owner);
    let created!: ReturnType<typeof doCreateRealm>;
    described(`users.json: the primary owner ${owner.id}`, () => {
      created = doCreateRealm(app, { name: opts.realmName, ownerEmail, ownerPassword: null, ownerFullName: ownerName });
    });
    realmId = created.realmId;
    summary.realmId = realmId;
    // Zulip's build_zerver_realm.
    stmt(app.db, 'UPDATE realm SET description = ? WHERE id = ?').run('Organization imported from Slack!', realmId);
    /** What every imported account gets besides its row: time zone, the imported mark, deactivation. */
    const after = (slackId: string, uid: number, tz: string | null, deleted: boolean) => {
      zulipId.set(slackId, uid);
      stmt(app.db, 'UPDATE user SET timezone = ?, first_login_pending = 1 WHERE id = ?').run(timezoneOf(tz), uid);
      if (deleted) stmt(app.db, 'UPDATE user SET is_active = 0 WHERE id = ?').run(uid);
    };
    byEmail.set(ownerEmail.toLowerCase(), created.owner.userId);
    after(owner.id, created.owner.userId, owner.tz, owner.deleted);
    fullNames.set(created.owner.userId, ownerName);
    createdUsers.push({ u: owner, id: created.owner.userId });
    for (const u of exp.users) {
      if (u === owner) continue;
      const email = emailOf(u);
      const merged = byEmail.get(email.toLowerCase());
      if (merged !== undefined) {
        zulipId.set(u.id, merged);
        continue;
      }
      const isBot = u.isBot || u.botId !== null || fullNameOf(u).toLowerCase() === 'slackbot';
      const fullName = nameOf(u);
      described(`users.json: user ${u.id} (${u.name})`, () => {
        const c = doCreateUser(app, {
          realmId,
          email,
          password: null,
          fullName,
          role: isBot ? ROLE.MEMBER : roleOf(u),
          botType: isBot ? BOT_TYPE.GENERIC : null,
          acting: null,
          firstLoginPending: true,
        });
        byEmail.set(email.toLowerCase(), c.userId);
        after(u.id, c.userId, u.tz, u.deleted);
        fullNames.set(c.userId, fullName);
        createdUsers.push({ u, id: c.userId });
      });
      if (u.botId) zulipId.set(u.botId, zulipId.get(u.id) as number);
    }
    importProfileFields(createdUsers);
    for (const b of integrations.values()) {
      const fullName = storableName(b.name, b.botId);
      described(`the integration bot ${b.botId} (${b.name})`, () => {
        const c = doCreateUser(app, { realmId, email: botEmail(b.name), password: null, fullName, role: ROLE.MEMBER, botType: BOT_TYPE.GENERIC, acting: null });
        after(b.botId, c.userId, null, b.deleted);
        fullNames.set(c.userId, fullName);
      });
    }
    summary.users = new Set(zulipId.values()).size;

    for (const c of exp.channels) {
      described(`${c.isPrivate ? 'groups.json' : 'channels.json'}: channel ${JSON.stringify(c.name)} (${c.id})`, () => {
        const s = doCreateChannel(app, null, realmId, {
          name: c.name,
          // Zulip's build_stream: the purpose, on one line. (Parley falls back to the topic.)
          description: (c.purpose || c.topic).replace(/\n/g, ' '),
          inviteOnly: c.isPrivate,
          historyPublicToSubscribers: !c.isPrivate,
          isDefaultStream: DEFAULT_CHANNELS.has(c.name) && !c.archived && !c.isPrivate,
        });
        if (c.created > 0) stmt(app.db, 'UPDATE stream SET date_created = ? WHERE id = ?').run(Math.floor(c.created), s.id);
        const members = [...new Set(c.members.map((m) => zulipId.get(m) as number))];
        insertImportedSubscriptions(app, s.id, members);
        convs.set(c.name, { kind: 'channel', folder: c.name, streamId: s.id, directGroupId: null, recipients: members });
        channelNames.set(c.id, s.name);
      });
    }
    summary.channels = exp.channels.length;
    const general = exp.channels.find((c) => c.name === ANNOUNCEMENTS_CHANNEL && !c.isPrivate && !c.archived);
    if (general) {
      const extra = realmExtraSettings(getRealmById(app.db, realmId));
      const id = (convs.get(general.name) as Conversation).streamId;
      extra.new_stream_announcements_stream_id = id;
      extra.zulip_update_announcements_stream_id = id;
      stmt(app.db, 'UPDATE realm SET extra_settings = ? WHERE id = ?').run(JSON.stringify(extra), realmId);
    }
    for (const c of [...exp.mpims, ...exp.dms]) {
      const members = [...new Set(c.members.map((m) => zulipId.get(m) as number))];
      convs.set(c.folder, { kind: 'direct', folder: c.folder, streamId: null, directGroupId: directGroupFor(app.db, realmId, members), recipients: members });
    }
    summary.direct_conversations = exp.mpims.length + exp.dms.length;
  });

  // ---- messages, a day at a time across every conversation, in time order ----
  const nameCount = new Map<string, number>();
  for (const n of fullNames.values()) nameCount.set(n.toLowerCase(), (nameCount.get(n.toLowerCase()) ?? 0) + 1);
  const ctx = {
    mention(slackId: string) {
      const uid = zulipId.get(slackId);
      if (uid === undefined) return null;
      const name = fullNames.get(uid) as string;
      // A name two people share gets the id that tells them apart (Zulip's @**Name|id**).
      return { markdown: (nameCount.get(name.toLowerCase()) ?? 0) > 1 ? `@**${name}|${uid}**` : `@**${name}**`, userId: uid };
    },
    channelName: (slackId: string) => channelNames.get(slackId) ?? null,
  };
  const threads = new ThreadTopics();
  let skippedEmoji = 0;
  for (const day of dayNames) {
    const batch: { m: At; conv: Conversation }[] = [];
    for (const folder of folders) {
      if (!(exp.days.get(folder) as string[]).includes(day)) continue;
      const conv = convs.get(folder) as Conversation;
      for (const m of await readDay(folder, day)) {
        const sender = sendingUser(m);
        if (sender === null || sender === 'U00') continue;
        if (m.get('mimetype').optString() === 'application/vnd.slack-docs') continue;
        if (SKIPPED_SUBTYPES.has(m.get('subtype').optString() ?? '')) continue;
        batch.push({ m, conv });
      }
    }
    // Stable: messages of the same second keep their files' order.
    batch.sort((a, b) => a.m.get('ts').number() - b.m.get('ts').number());
    // Files first (copying is asynchronous); the day's rows are then written in one synchronous write.
    const stored = new Map<string, { pathId: string; size: number }>();
    for (const { m } of batch) {
      for (const f of filesOf(m)) {
        const id = f.get('id').optString();
        if (!id || stored.has(id) || !usableFile(f)) continue;
        const entry = exp.uploads.get(id);
        if (!entry) continue;
        const name = sanitizeName(f.get('name').optString() ?? entry.name.slice(entry.name.lastIndexOf('/') + 1));
        const pathId = newPathId(realmId, name);
        const dest = storePath(app.uploadsDir, pathId);
        fs.mkdirSync(path.dirname(dest), { recursive: true });
        const size = await archive.copyTo(entry, dest, MAX_FILE_BYTES);
        stored.set(id, { pathId, size });
      }
    }
    app.batch.write(() => {
      for (const { m, conv } of batch) writeMessage(m, conv, stored);
    });
  }
  app.batch.write(() => {
    for (const c of exp.channels) {
      if (c.archived) stmt(app.db, 'UPDATE stream SET deactivated = 1 WHERE id = ?').run((convs.get(c.name) as Conversation).streamId);
    }
    finishImportedMessages(app, realmId);
  });
  app.batch.commit();
  if (skippedEmoji > 0) warnings.push(`${skippedEmoji} reactions with emoji Zulip does not have (custom Slack emoji) were left out`);
  return summary;

  /**
   * Zulip's custom profile fields from Slack's profiles: "phone" and "skype" by name, the workspace's
   * own fields (whose names the export does not hold) as "Slack custom field N"; a field becomes long
   * text when a value is longer than 50 characters. Empty values are left out.
   */
  function importProfileFields(people: { u: SlackUser; id: number }[]): void {
    const fieldFor = new Map<string, { name: string; values: [number, string][] }>();
    for (const { u, id } of people) {
      for (const [key, value] of u.profileFields) {
        let f = fieldFor.get(key);
        if (!f) fieldFor.set(key, (f = { name: key === 'phone' || key === 'skype' ? key : `Slack custom field ${fieldFor.size + 1}`, values: [] }));
        if (value !== '') f.values.push([id, value]);
      }
    }
    if (fieldFor.size === 0) return;
    const admin = findUserById(app.db, realmId, zulipId.get(owner!.id) as number) as UserRow;
    for (const [key, f] of fieldFor) {
      const long = f.values.some(([, v]) => Array.from(v).length > 50);
      let fieldId = 0;
      const where = `users.json: the profile field ${JSON.stringify(key)}`;
      try {
        fieldId = doCreateField(app, admin, { name: f.name, hint: '', fieldType: long ? FIELD_TYPE.LONG_TEXT : FIELD_TYPE.SHORT_TEXT, displayInProfileSummary: false, required: false, editableByUser: true });
        for (const [uid, value] of f.values) updateProfileData(app, admin, findUserById(app.db, realmId, uid) as UserRow, [{ id: fieldId, value }]);
      } catch (err) {
        if (err instanceof JsonableError) throw new ImportError(`${where}: ${err.message}`);
        throw err;
      }
    }
  }

  function filesOf(m: At): At[] {
    if (m.get('subtype').optString() === 'file_share' && m.get('file').present) return [m.get('file')];
    return m.get('files').present ? m.get('files').list() : [];
  }

  /** Zulip skips deleted files, files hidden by the free plan's limit, and stubs Slack denies access to. */
  function usableFile(f: At): boolean {
    const mode = f.get('mode').optString() ?? '';
    const access = f.get('file_access').optString() ?? '';
    return mode !== 'tombstone' && mode !== 'hidden_by_limit' && access !== 'access_denied' && access !== 'file_not_found';
  }

  function writeMessage(m: At, conv: Conversation, stored: Map<string, { pathId: string; size: number }>): void {
    const sender = zulipId.get(sendingUser(m) as string) as number;
    const subtype = m.get('subtype').optString() ?? null;
    const formatted = blocksAndAttachments(m);
    const text = formatted !== '' ? formatted : (m.get('text').optString() ?? '');
    const converted = convertText(text, ctx);
    let content = converted.content;
    if (subtype !== null && ME_SUBTYPES.has(subtype)) content = `/me ${content}`;
    const links: string[] = [];
    const attachmentIds: number[] = [];
    let hasLink = converted.hasLink;
    let hasImage = false;
    for (const f of filesOf(m)) {
      if (!usableFile(f)) continue;
      const title = f.get('title').optString() ?? f.get('name').optString() ?? 'file';
      const id = f.get('id').optString();
      const file = id ? stored.get(id) : undefined;
      if (file) {
        attachmentIds.push(
          insertImportedAttachment(app, {
            realmId,
            ownerId: sender,
            pathId: file.pathId,
            // The sanitized name the file is stored under, as an upload's (bounded, no control
            // characters): the export's own name can be anything, of any length.
            fileName: pathIdName(file.pathId),
            contentType: f.get('mimetype').optString() ?? null,
            size: file.size,
            createTime: f.get('created').present ? Math.floor(f.get('created').number()) : Math.floor(m.get('ts').number()),
          }),
        );
        links.push(`[${title}](${uploadUrl(file.pathId)})`);
        hasImage ||= (f.get('mimetype').optString() ?? '').includes('image');
      } else if (f.get('url_private').present) {
        // Contents not in the export: a link to where Slack keeps the file.
        links.push(`[${title}](${f.get('url_private').string()})`);
      }
      hasLink = true;
    }
    content = [content, ...links].filter((p) => p !== '').join('\n');
    let normalized: string;
    try {
      normalized = normalizeContent(content.replace(/\0/g, ''));
    } catch {
      return; // nothing to show (an empty message); Zulip's clients cannot show an empty one either
    }
    let topic = '';
    if (conv.kind === 'channel') {
      topic = UNTHREADED_TOPIC;
      const threadTs = tsText(m.get('thread_ts'));
      if (threadTs !== undefined) {
        const root = m.get('root');
        topic = threads.topicFor(
          {
            threadTs,
            ts: tsText(m.get('ts')) as string,
            subtype,
            sender: m.get('user').optString() ?? m.get('bot_id').optString() ?? null,
            parentUser:
              subtype === 'thread_broadcast' && root.present
                ? (root.get('user').optString() ?? root.get('bot_id').optString() ?? null)
                : (m.get('parent_user_id').optString() ?? m.get('bot_id').optString() ?? null),
          },
          normalized,
        );
      }
    }
    const messageId = insertImportedMessage(app, realmId, {
      senderId: sender,
      streamId: conv.streamId,
      directGroupId: conv.directGroupId,
      topic,
      content: normalized,
      dateSent: Math.floor(m.get('ts').number()),
      recipients: conv.recipients,
      mentionedUserIds: converted.mentionedUserIds,
      hasLink,
      hasImage,
      hasAttachment: attachmentIds.length > 0,
      attachmentIds,
    });
    summary.messages++;
    summary.uploads += attachmentIds.length;
    if (m.get('reactions').present) {
      // Skin tones merged into their base emoji (Zulip's build_reactions), users unioned.
      const merged = new Map<string, Set<string>>();
      for (const r of m.get('reactions').list()) {
        const base = r.get('name').string().split('::')[0];
        const users = merged.get(base) ?? new Set<string>();
        for (const u of r.get('users').strings()) users.add(u);
        merged.set(base, users);
      }
      for (const [name, users] of merged) {
        const emoji = zulipEmoji(name);
        if (!emoji) {
          skippedEmoji++;
          continue;
        }
        for (const u of users) {
          const uid = zulipId.get(u);
          if (uid === undefined) continue; // deleted users keep reactions in Slack's data but have no profile
          if (insertImportedReaction(app, { messageId, userId: uid, emojiName: emoji.name, emojiCode: emoji.code })) summary.reactions++;
        }
      }
    }
  }
}

/** `parley import --from slack`: the .zip at `file`, opened here and closed whatever happens. */
export const importSlackExport: Importer = async (app, file, opts) => {
  const archive = await openZip(file);
  try {
    const { realmId, warnings, ...counts } = await importSlack(app, archive, opts);
    return { realmId, counts, warnings };
  } finally {
    archive.close();
  }
};
