// Rendering messages and descriptions for an organization: builds the markdown renderer's lookup
// context from the database (users, groups, channels, custom emoji, linkifiers) and calls it.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { watchedCache } from '../db/watch';
import { accessibleUsers } from './access';
import type { RealmEmojiInfo } from './emoji';
import { renderMarkdown, type RenderContext, type RenderResult } from './markdown';
import { getRealmById, type RealmRow } from './realm';
import { findRealmEmojiByName } from './realm-emoji';
import { realmExtraSettings } from './realm-settings';
import { topicKey } from './narrow';
import { realmLinkifiers } from './linkifiers';
import { canAccessStreamContent, findStreamById } from './streams';
import { firstReceivedInTopic, firstTopicMessage } from './user-messages';
import { NOT_SYSTEM_BOT_SQL, type UserRow } from './users';

/**
 * The first message of a topic that `sender` can read, for #**channel>topic** permalinks (Zulip's
 * get_first_message_for_user_in_topic): the topic's first message when the channel's history is open
 * to its subscribers, else the first the sender received (written or implied row). Null without
 * content access, or when the topic has no such message.
 */
function firstTopicMessageFor(app: App, sender: UserRow, streamId: number, topic: string): number | null {
  const s = findStreamById(app.db, sender.realm_id, streamId);
  if (!s || !canAccessStreamContent(app.db, sender, s)) return null;
  const key = topicKey(topic);
  return s.history_public_to_subscribers ? firstTopicMessage(app.db, streamId, key) : firstReceivedInTopic(app.db, sender.id, streamId, key);
}

// The organization's inline_image_preview (kept in extra_settings), read once per realm row: the row
// object is replaced whenever the realm table changes (lib/realm.ts), so this never goes stale.
const imagePreviewByRealm = new WeakMap<RealmRow, boolean>();
function inlineImagePreview(realm: RealmRow | null): boolean {
  if (!realm) return true;
  let on = imagePreviewByRealm.get(realm);
  if (on === undefined) imagePreviewByRealm.set(realm, (on = realmExtraSettings(realm).inline_image_preview !== false));
  return on;
}

/**
 * The renderer's view of the organization (lazy lookups through prepared statements), and of the
 * sender when there is one: their emoticon setting and which topics they can link to by message.
 * A class rather than an object of closures: one is made for every message sent, and its methods
 * are made once (each closure cost an allocation, and under tsx a defineProperty for its name).
 */
// Built once: a template literal in the method made a new 300-character string per mention, which the
// statement cache then hashed again.
const USER_BY_NAME_SQL = `SELECT id, full_name FROM user u WHERE realm_id = ? AND full_name = ? COLLATE NOCASE AND is_active = 1 AND ${NOT_SYSTEM_BOT_SQL} ORDER BY id LIMIT 1`;
const USER_BY_ID_SQL = `SELECT id, full_name FROM user u WHERE realm_id = ? AND id = ? AND ${NOT_SYSTEM_BOT_SQL}`;

type NamedUser = Readonly<{ id: number; full_name: string }>;
type NamedStream = Readonly<{ id: number; name: string }>;

// The name and id lookups, from memory: each was a query (~4-5 µs with its statement lookup) per
// @-mention, #channel link and :emoji: of every message sent. The rows as the queries return them, before the
// sender's access is checked (per message, below); null for no match. Emptied by any change to the
// table read (watchedCache), so a rename, a deactivation, a new user or emoji is seen by the next message.
// Bounded: names come from message text, so a name longer than any user's or channel's (Zulip allows
// 60 characters) is looked up without being remembered, and each cache holds 2,000 names at most.
const MAX_CACHED_NAME = 100;
const CACHED_NAMES = 2000;
const userByNameCache = (app: App) => watchedCache<string, NamedUser | null>(app.db, 'render-user-by-name', ['user'], CACHED_NAMES);
const userByIdCache = (app: App) => watchedCache<string, NamedUser | null>(app.db, 'render-user-by-id', ['user'], CACHED_NAMES);
const realmEmojiCache = (app: App) => watchedCache<string, Readonly<RealmEmojiInfo> | null>(app.db, 'render-realm-emoji-by-name', ['realm_emoji'], CACHED_NAMES);
const streamByNameCache = (app: App) => watchedCache<string, NamedStream | null>(app.db, 'render-stream-by-name', ['stream'], CACHED_NAMES);

class OrganizationRenderContext implements RenderContext {
  readonly linkifiers: readonly { pattern: string; url_template: string }[];
  readonly realmUrl: string | undefined;
  readonly inlineImagePreview: boolean;
  readonly translateEmoticons: boolean;
  /** The users the sender may mention; null: all; undefined: not read yet. */
  private access: Set<number> | null | undefined;

  constructor(
    private readonly app: App,
    private readonly realmId: number,
    private readonly sender: UserRow | undefined,
  ) {
    this.linkifiers = realmLinkifiers(app.db, realmId);
    this.realmUrl = app.publicUrl;
    this.inlineImagePreview = inlineImagePreview(getRealmById(app.db, realmId));
    this.translateEmoticons = sender?.translate_emoticons === 1;
  }

  // What the sender may name (Zulip's MentionBackend with message_sender): users it can access
  // (can_access_all_users_group) and channels whose content it can read. Anything else renders as a
  // name matching nothing would, so rendering cannot confirm that a hidden user or channel exists.
  private mayMention<U extends { id: number }>(u: U | undefined): U | null {
    if (!u || !this.sender) return u ?? null;
    if (this.access === undefined) this.access = accessibleUsers(this.app.db, this.sender);
    return this.access === null || this.access.has(u.id) ? u : null;
  }

  private mayLink(s: { id: number; name: string } | undefined): { id: number; name: string } | null {
    if (!s || !this.sender) return s ?? null;
    const row = findStreamById(this.app.db, this.realmId, s.id);
    return row && canAccessStreamContent(this.app.db, this.sender, row) ? s : null;
  }

  userByName(name: string): { id: number; full_name: string } | null {
    const cache = name.length > MAX_CACHED_NAME ? null : userByNameCache(this.app);
    const key = `${this.realmId}\n${name}`;
    let row = cache?.peek(key);
    if (row === undefined) {
      row = Object.freeze((stmt(this.app.db, USER_BY_NAME_SQL).get(this.realmId, name) as NamedUser | undefined) ?? null);
      cache?.put(key, row);
    }
    return this.mayMention(row ?? undefined);
  }

  // The system bots are not the organization's (cross-realm in Zulip): mentioning them mentions nobody.
  userById(id: number): { id: number; full_name: string } | null {
    const cache = userByIdCache(this.app);
    const key = `${this.realmId}\n${id}`;
    let row = cache.peek(key);
    if (row === undefined) {
      row = Object.freeze((stmt(this.app.db, USER_BY_ID_SQL).get(this.realmId, id) as NamedUser | undefined) ?? null);
      cache.put(key, row);
    }
    return this.mayMention(row ?? undefined);
  }

  groupByName(name: string): { id: number; name: string } | null {
    return (
      (stmt(this.app.db, 'SELECT id, name FROM user_group WHERE realm_id = ? AND name = ? AND named = 1 AND deactivated = 0').get(this.realmId, name) as
        | { id: number; name: string }
        | undefined) ?? null
    );
  }

  // As Zulip's get_stream_name_info: the exact name, among channels not archived.
  streamByName(name: string): { id: number; name: string } | null {
    const cache = name.length > MAX_CACHED_NAME ? null : streamByNameCache(this.app);
    const key = `${this.realmId}\n${name}`;
    let row = cache?.peek(key);
    if (row === undefined) {
      row = Object.freeze(
        (stmt(this.app.db, 'SELECT id, name FROM stream WHERE realm_id = ? AND name = ? COLLATE BINARY AND deactivated = 0').get(this.realmId, name) as
          | NamedStream
          | undefined) ?? null,
      );
      cache?.put(key, row);
    }
    return this.mayLink(row ?? undefined);
  }

  realmEmojiByName(name: string): ReturnType<RenderContext['realmEmojiByName'] & object> {
    const cache = name.length > MAX_CACHED_NAME ? null : realmEmojiCache(this.app);
    const key = `${this.realmId}\n${name}`;
    let e = cache?.peek(key);
    if (e === undefined) {
      e = Object.freeze(findRealmEmojiByName(this.app.db, this.realmId, name));
      cache?.put(key, e);
    }
    return e && !e.deactivated ? e : null;
  }

  // Without a sender there is nothing to link to by message (as the renderer's default, null).
  topicPermalinkMessageId(streamId: number, topic: string): number | null {
    return this.sender ? firstTopicMessageFor(this.app, this.sender, streamId, topic) : null;
  }

  // <time:...> fills what the text leaves out from today, on the app's clock (a test's fake one too).
  nowMs(): number {
    return this.app.clock.nowMs();
  }
}

/**
 * The renderer's view of the organization (lazy lookups through prepared statements), and of the
 * sender when there is one: their emoticon setting and which topics they can link to by message.
 */
export function renderContext(app: App, realmId: number, sender?: UserRow): RenderContext {
  return new OrganizationRenderContext(app, realmId, sender);
}

// Precomputed HTML for known plain contents, per App (the demo seed uses it so that start-up does no
// Markdown work: loading and warming the renderer costs tens of ms). Only for contents without
// mentions, links or images; test/clients/demo-render.test.ts checks it against the renderer.
const prerendered = new WeakMap<App, ReadonlyMap<string, string>>();

/** Sets (or with null clears) the precomputed HTML renderMessage uses for `app`. */
export function setPrerendered(app: App, html: ReadonlyMap<string, string> | null): void {
  if (html) prerendered.set(app, html);
  else prerendered.delete(app);
}

/** Renders message content in the organization's context, as `sender` writes it (when there is one). */
export function renderMessage(app: App, realmId: number, content: string, sender?: UserRow): RenderResult {
  const html = prerendered.get(app)?.get(content);
  if (html !== undefined) {
    return { html, mentionedUserIds: new Set(), mentionedGroupIds: new Set(), wildcardChannel: false, wildcardTopic: false, hasLink: false, hasImage: false, hasAttachment: false, linkedUploadPaths: [] };
  }
  return renderMarkdown(content, renderContext(app, realmId, sender));
}

/** Renders a description (channel, profile field) to HTML. */
export function renderPlain(app: App, realmId: number, text: string): string {
  if (text === '') return '';
  return renderMessage(app, realmId, text).html;
}
