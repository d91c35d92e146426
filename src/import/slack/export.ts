// The Slack workspace export (Slack's "Export data", a .zip): its listing checked against the layout
// Slack writes, and its top-level files read and checked. Layout (as Zulip's importer accepts it):
//   users.json channels.json [groups.json mpims.json dms.json ...]   top-level .json files
//   CHANNEL/YYYY-MM-DD.json                                          a folder per conversation
//   __uploads/FILE_ID/NAME                                           file contents, where the export has them
// Channels and private channels have folders named after them; group DMs after their name; DMs after their id.
import { ImportError } from '../errors';
import { At } from '../shape';
import type { ZipArchive, ZipEntry } from '../zip';

/** Most bytes of one JSON file of the export (users.json of a big workspace is a few MB). */
export const MAX_JSON_BYTES = 256 * 1024 * 1024;

export interface SlackUser {
  id: string;
  /** The handle (Slack's "name"). */
  name: string;
  realName: string;
  deleted: boolean;
  isBot: boolean;
  isAdmin: boolean;
  isOwner: boolean;
  isPrimaryOwner: boolean;
  isGuest: boolean;
  tz: string | null;
  email: string | null;
  /** A bot's Slack bot id (profile.bot_id), which names it in bot messages. */
  botId: string | null;
  /** What Zulip names a bot's address after (profile.real_name_normalized or first_name). */
  botName: string | null;
  /** Profile fields (Zulip's process_slack_custom_fields): profile.fields by Slack's field id, then phone and skype. */
  profileFields: [key: string, value: string][];
}

export interface SlackChannel {
  id: string;
  name: string;
  created: number;
  archived: boolean;
  members: string[];
  purpose: string;
  topic: string;
  isPrivate: boolean;
}

export interface SlackConversation {
  id: string;
  /** The folder holding its messages: the name for a group DM, the id for a DM. */
  folder: string;
  members: string[];
}

export interface SlackExport {
  archive: ZipArchive;
  users: SlackUser[];
  channels: SlackChannel[];
  mpims: SlackConversation[];
  dms: SlackConversation[];
  /** Day files per folder ("general" → ["2024-01-02.json", ...]). */
  days: Map<string, string[]>;
  /** File contents by Slack file id. */
  uploads: Map<string, ZipEntry>;
}

const UPLOAD_ENTRY = /^__uploads\/([^/]+)\/([^/]+)$/;
// Zulip's check of a Slack export's listing: top-level .json files, folders, and .json files in folders.
const SLACK_ENTRY = /^[^/]+(\.json|\/([^/]+\.json)?)$/;

function readUser(u: At): SlackUser {
  const profile = u.get('profile').present ? u.get('profile') : new At(`${u.where}.profile`, {});
  const deleted = u.get('deleted').bool();
  const name = u.get('name').string();
  const realName = u.get('real_name').optString() ?? profile.get('real_name').optString() ?? '';
  return {
    id: u.get('id').string(),
    name,
    realName,
    deleted,
    isBot: u.get('is_bot').bool(),
    isAdmin: u.get('is_admin').bool(),
    isOwner: u.get('is_owner').bool(),
    isPrimaryOwner: u.get('is_primary_owner').bool(),
    isGuest: u.get('is_restricted').bool() || u.get('is_ultra_restricted').bool(),
    tz: u.get('tz').optString() ?? null,
    email: profile.get('email').optString() ?? null,
    botId: profile.get('bot_id').optString() ?? null,
    botName: profile.get('real_name_normalized').optString() ?? profile.get('first_name').optString() ?? null,
    profileFields: readProfileFields(profile),
  };
}

function readProfileFields(profile: At): [string, string][] {
  const out: [string, string][] = [];
  const fields = profile.get('fields');
  if (fields.present && !(Array.isArray(fields.value) && fields.value.length === 0)) {
    for (const key of Object.keys(fields.object())) out.push([key, fields.get(key).get('value').optString() ?? '']);
  }
  for (const key of ['phone', 'skype']) if (profile.get(key).present) out.push([key, profile.get(key).string()]);
  return out;
}

function readChannel(c: At, isPrivate: boolean): SlackChannel {
  const text = (key: string) => (c.get(key).present ? (c.get(key).get('value').optString() ?? '') : '');
  return {
    id: c.get('id').string(),
    name: c.get('name').string(),
    created: c.get('created').present ? c.get('created').number() : 0,
    archived: c.get('is_archived').bool(),
    members: c.get('members').present ? c.get('members').strings() : [],
    purpose: text('purpose'),
    topic: text('topic'),
    isPrivate,
  };
}

function readConversation(c: At, folderKey: 'name' | 'id'): SlackConversation {
  return { id: c.get('id').string(), folder: c.get(folderKey).string(), members: c.get('members').strings() };
}

/** Lists and checks the archive, reads the top-level files; throws ImportError naming what is wrong. */
export async function readSlackExport(archive: ZipArchive): Promise<SlackExport> {
  const days = new Map<string, string[]>();
  const uploads = new Map<string, ZipEntry>();
  for (const entry of archive.entries.values()) {
    const upload = UPLOAD_ENTRY.exec(entry.name);
    if (upload) {
      uploads.set(upload[1], entry);
      continue;
    }
    if (!SLACK_ENTRY.test(entry.name)) {
      throw new ImportError(`${archive.file} is not a Slack export: unexpected entry ${JSON.stringify(entry.name)}`);
    }
    const slash = entry.name.indexOf('/');
    if (slash > 0) {
      const folder = entry.name.slice(0, slash);
      const list = days.get(folder) ?? [];
      list.push(entry.name.slice(slash + 1));
      days.set(folder, list);
    }
  }
  const top = async (name: string, required: boolean): Promise<At[]> => {
    const entry = archive.entries.get(name);
    if (!entry) {
      if (required) throw new ImportError(`${archive.file} is not a Slack export: it has no ${name}`);
      return [];
    }
    return new At(name, await archive.readJson(entry, MAX_JSON_BYTES)).list();
  };
  const users = (await top('users.json', true)).map(readUser);
  const channels = [...(await top('channels.json', true)).map((c) => readChannel(c, false)), ...(await top('groups.json', false)).map((c) => readChannel(c, true))];
  const mpims = (await top('mpims.json', false)).map((c) => readConversation(c, 'name'));
  const dms = (await top('dms.json', false)).map((c) => readConversation(c, 'id'));
  checkReferences(users, channels, mpims, dms);
  for (const list of days.values()) list.sort();
  return { archive, users, channels, mpims, dms, days, uploads };
}

/** Every id the export's conversations name must be a user of users.json; names and ids unique. */
function checkReferences(users: SlackUser[], channels: SlackChannel[], mpims: SlackConversation[], dms: SlackConversation[]): void {
  const userIds = new Set<string>();
  for (const u of users) {
    if (userIds.has(u.id)) throw new ImportError(`users.json lists user ${u.id} twice`);
    userIds.add(u.id);
  }
  const seen = new Set<string>();
  const folders = new Set<string>();
  const check = (file: string, id: string, folder: string, members: string[]) => {
    if (seen.has(id)) throw new ImportError(`${file}: conversation ${id} appears twice in the export`);
    seen.add(id);
    if (folders.has(folder)) throw new ImportError(`${file}: two conversations are named ${JSON.stringify(folder)}`);
    folders.add(folder);
    for (const m of members) {
      if (!userIds.has(m)) throw new ImportError(`${file}: ${JSON.stringify(folder)} (${id}) lists member ${m}, who is not in users.json`);
    }
  };
  for (const c of channels) check(c.isPrivate ? 'groups.json' : 'channels.json', c.id, c.name, c.members);
  for (const c of mpims) check('mpims.json', c.id, c.folder, c.members);
  for (const c of dms) {
    check('dms.json', c.id, c.folder, c.members);
    if (c.members.length < 1 || c.members.length > 2) throw new ImportError(`dms.json: DM ${c.id} must have one or two members, not ${c.members.length}`);
  }
}
