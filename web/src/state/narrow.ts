// Narrows: what the message list shows, how it is named in the address bar (Zulip's own
// "#narrow/channel/12-general/topic/lunch" form, so links are shareable between Parley and Zulip), how it
// is asked of the server (narrow terms) and whether a new message belongs in it. Pure: no DOM.
import type { Message, Term } from './wire';

/** The views the app knows by shape; anything else is kept as its terms (a search). */
export type Narrow =
  | { kind: 'home' }
  | { kind: 'channel'; streamId: number; topic?: string; near?: number }
  | { kind: 'dm'; userIds: number[]; near?: number }
  | { kind: 'starred' }
  | { kind: 'mentioned' }
  | { kind: 'terms'; terms: Term[] };

/** What narrow code needs to know of the organization (names for slugs and titles). */
export interface NarrowContext {
  myId: number;
  streamName(id: number): string | undefined;
  streamIdByName(name: string): number | undefined;
  userName(id: number): string | undefined;
  userIdByEmail(email: string): number | undefined;
  emptyTopicName: string;
}

export const HOME: Narrow = { kind: 'home' };

// --- Zulip's hash encoding (web/src/internal_url.ts) ---------------------------------------------------

const HASH_REPLACEMENTS: Record<string, string> = { '%': '.', '(': '.28', ')': '.29', '.': '.2E' };

/**
 * encodeHashComponent: percent-encoding with "." for "%" (and "." itself as ".2E"), parentheses
 * escaped too; as Zulip's web app writes links (its server also escapes ! ' *: both decode the same).
 */
export function encodeHashComponent(s: string): string {
  return encodeURIComponent(s).replace(/[%().]/g, (c) => HASH_REPLACEMENTS[c]);
}

/** decodeHashComponent; throws URIError on a malformed component. */
export function decodeHashComponent(s: string): string {
  return decodeURIComponent(s.replace(/\./g, '%'));
}

/** "12-general": the id, then the name for people reading the link (only the id is read back). */
export function channelSlug(id: number, name: string | undefined): string {
  const slug = `${id}-${(name ?? 'unknown').replace(/ /g, '-')}`;
  const encoded = encodeHashComponent(slug);
  // zulip-compat: encode_slug drops a name that encoding would make much longer (non-Latin scripts).
  return encoded.length - slug.length > 10 || encoded.length > slug.length * 1.5 ? String(id) : encoded;
}

/** "5-Alice" for one person, "5,6-group" for several (people.user_ids_to_slug). */
export function dmSlug(userIds: readonly number[], name: (id: number) => string | undefined): string {
  const ids = [...userIds].sort((a, b) => a - b);
  const suffix = ids.length > 1 ? 'group' : encodeHashComponent((name(ids[0]) ?? 'unk').replace(/[ "%/<>`\p{Cc}\p{Cf}\p{Co}\p{Cn}]+/gu, '-'));
  return `${ids.join(',')}-${suffix}`;
}

// --- narrow ⇄ address ------------------------------------------------------------------------------------

/** The address-bar hash of a narrow. */
export function narrowHash(n: Narrow, ctx: NarrowContext): string {
  switch (n.kind) {
    case 'home':
      return '#feed';
    case 'starred':
      return '#narrow/is/starred';
    case 'mentioned':
      return '#narrow/is/mentioned';
    case 'channel': {
      let h = `#narrow/channel/${channelSlug(n.streamId, ctx.streamName(n.streamId))}`;
      if (n.topic !== undefined) h += `/topic/${encodeHashComponent(n.topic)}`;
      return n.near !== undefined ? `${h}/near/${n.near}` : h;
    }
    case 'dm': {
      const h = `#narrow/dm/${dmSlug(n.userIds, ctx.userName)}`;
      return n.near !== undefined ? `${h}/near/${n.near}` : h;
    }
    case 'terms':
      return (
        '#narrow' +
        n.terms
          .map((t) => {
            const operand = Array.isArray(t.operand) ? dmSlug(t.operand, ctx.userName) : encodeHashComponent(String(t.operand));
            return `/${t.negated ? '-' : ''}${encodeHashComponent(t.operator)}/${operand}`;
          })
          .join('')
      );
  }
}

const SYNONYMS: Record<string, string> = {
  stream: 'channel',
  streams: 'channels',
  subject: 'topic',
  'pm-with': 'dm',
  'group-pm-with': 'dm-including',
  from: 'sender',
};

/** Zulip's canonicalize_term: lower-case operators, old names to new ones, is:private to is:dm. */
function canonical(t: Term): Term {
  const operator = SYNONYMS[t.operator.toLowerCase()] ?? t.operator.toLowerCase();
  let operand = t.operand;
  if (typeof operand === 'string' && !['channel', 'topic', 'search'].includes(operator)) operand = operand.toLowerCase();
  if (operator === 'is' && operand === 'private') operand = 'dm';
  return { operator, operand, ...(t.negated ? { negated: true } : {}) };
}

/** User ids of a "5,6-group" / "5-Alice" slug (or of old comma-separated emails), without me in a group. */
function parseUserSlug(raw: string, ctx: NarrowContext): number[] | null {
  const m = /^([\d,]+)(-.*)?$/.exec(raw);
  let ids: number[];
  if (m) ids = m[1].split(',').filter(Boolean).map(Number);
  else {
    const found = raw.split(',').map((e) => ctx.userIdByEmail(e.trim().toLowerCase()));
    if (found.some((id) => id === undefined)) return null;
    ids = found as number[];
  }
  ids = [...new Set(ids)].sort((a, b) => a - b);
  if (ids.length > 1) ids = ids.filter((id) => id !== ctx.myId);
  return ids.length ? ids : null;
}

/** A channel slug's id: "12-general" (the id wins), or an old-style name link "general". */
function parseChannelSlug(raw: string, ctx: NarrowContext): number | string {
  const m = /^(\d+)(?:-.*)?$/.exec(raw);
  if (m && ctx.streamName(Number(m[1])) !== undefined) return Number(m[1]);
  const byName = ctx.streamIdByName(raw);
  if (byName !== undefined) return byName;
  return m ? Number(m[1]) : raw;
}

/**
 * The narrow named by an address-bar hash: "" / "#feed" / "#all_messages" → home, "#narrow/..." → its
 * terms (Zulip's parse_narrow), null for a malformed hash (the app then says so and shows home).
 */
export function parseHash(hash: string, ctx: NarrowContext): Narrow | null {
  const h = hash.replace(/^#/, '');
  if (h === '' || h === 'feed' || h === 'all_messages' || h === 'home') return HOME;
  if (!h.startsWith('narrow/') && h !== 'narrow') return null;
  const parts = h.split('/');
  const terms: Term[] = [];
  try {
    for (let i = 1; i < parts.length; i += 2) {
      let operator = decodeHashComponent(parts[i]);
      if (operator === '') break;
      const raw = parts[i + 1];
      if (raw === undefined) return null;
      const negated = operator.startsWith('-');
      if (negated) operator = operator.slice(1);
      const op = SYNONYMS[operator.toLowerCase()] ?? operator.toLowerCase();
      if (op !== 'topic' && raw === '') return null;
      const text = decodeHashComponent(raw);
      let operand: Term['operand'] = text;
      if (op === 'channel') operand = parseChannelSlug(text, ctx);
      else if (op === 'dm' || op === 'dm-including') {
        const ids = parseUserSlug(text, ctx);
        if (!ids) return null;
        operand = op === 'dm' ? ids : ids[0];
      } else if (op === 'sender') {
        const ids = parseUserSlug(text, ctx);
        operand = ids ? ids[0] : text;
      } else if (op === 'near' || op === 'with' || op === 'id') {
        if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) return null;
        operand = Number(text);
      }
      terms.push(canonical({ operator: op, operand, negated }));
    }
  } catch {
    return null; // a malformed %-escape
  }
  return narrowFromTerms(terms);
}

/** The narrow a list of terms describes, by shape. */
export function narrowFromTerms(terms: Term[]): Narrow {
  const plain = terms.filter((t) => !t.negated);
  const near = plain.find((t) => t.operator === 'near' || t.operator === 'with');
  const rest = plain.filter((t) => t !== near);
  const nearId = near ? (near.operand as number) : undefined;
  if (plain.length !== terms.length) return { kind: 'terms', terms };
  const ops = rest.map((t) => t.operator).join(',');
  if (ops === '') return nearId === undefined ? HOME : { kind: 'terms', terms };
  if (ops === 'in' && rest[0].operand === 'home') return HOME;
  if (ops === 'is' && rest[0].operand === 'starred' && nearId === undefined) return { kind: 'starred' };
  if (ops === 'is' && rest[0].operand === 'mentioned' && nearId === undefined) return { kind: 'mentioned' };
  if ((ops === 'channel' || ops === 'channel,topic') && typeof rest[0].operand === 'number') {
    const n: Narrow = { kind: 'channel', streamId: rest[0].operand };
    if (rest[1]) n.topic = String(rest[1].operand);
    if (nearId !== undefined) n.near = nearId;
    return n;
  }
  if (ops === 'dm' && Array.isArray(rest[0].operand)) {
    const n: Narrow = { kind: 'dm', userIds: rest[0].operand };
    if (nearId !== undefined) n.near = nearId;
    return n;
  }
  return { kind: 'terms', terms };
}

// --- narrow → server ---------------------------------------------------------------------------------------

/** The narrow as GET /messages takes it. Home is Zulip's combined feed: in:home (no muted topics). */
export function narrowTerms(n: Narrow): Term[] {
  switch (n.kind) {
    case 'home':
      return [{ operator: 'in', operand: 'home' }];
    case 'starred':
      return [{ operator: 'is', operand: 'starred' }];
    case 'mentioned':
      return [{ operator: 'is', operand: 'mentioned' }];
    case 'channel':
      return n.topic === undefined
        ? [{ operator: 'channel', operand: n.streamId }]
        : [
            { operator: 'channel', operand: n.streamId },
            { operator: 'topic', operand: n.topic },
          ];
    case 'dm':
      return [{ operator: 'dm', operand: n.userIds }];
    case 'terms':
      return n.terms.filter((t) => t.operator !== 'near' && t.operator !== 'with');
  }
}

/** The message to open the narrow at (near/with), if any. */
export function narrowAnchor(n: Narrow): number | undefined {
  if (n.kind === 'channel' || n.kind === 'dm') return n.near;
  if (n.kind === 'terms') {
    const t = n.terms.find((x) => (x.operator === 'near' || x.operator === 'with') && !x.negated);
    return t ? Number(t.operand) : undefined;
  }
  return undefined;
}

/** One key per message list: narrows that show the same messages share it (near only scrolls). */
export function narrowKey(n: Narrow): string {
  return JSON.stringify(narrowTerms(n));
}

/** Same narrow, ignoring where it was opened (near). */
export function sameNarrow(a: Narrow, b: Narrow): boolean {
  return narrowKey(a) === narrowKey(b);
}

// --- messages ----------------------------------------------------------------------------------------------

/** The other participants of a direct message (sorted), or [me] for a message to oneself. */
export function dmParticipants(m: Pick<Message, 'display_recipient'>, myId: number): number[] {
  if (!Array.isArray(m.display_recipient)) return [];
  const ids = m.display_recipient.map((u) => u.id).filter((id) => id !== myId);
  return ids.length ? ids.sort((a, b) => a - b) : [myId];
}

/** The key of a direct-message conversation: its other participants' ids, sorted, comma-joined. */
export const dmKey = (userIds: readonly number[]): string => [...userIds].sort((a, b) => a - b).join(',');

export const sameTopic = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/**
 * Whether a message belongs in a narrow, for adding new messages live; null when the client cannot
 * tell (searches), in which case the list is fetched again instead. `isMutedTopic` is for in:home.
 */
export function matchesNarrow(m: Message, n: Narrow, myId: number, isMuted: (streamId: number, topic: string) => boolean): boolean | null {
  switch (n.kind) {
    case 'home':
      return m.type === 'private' || !isMuted(m.stream_id as number, m.subject);
    case 'starred':
      return m.flags.includes('starred');
    case 'mentioned':
      return m.flags.some((f) => f === 'mentioned' || f.endsWith('wildcard_mentioned'));
    case 'channel':
      return m.type === 'stream' && m.stream_id === n.streamId && (n.topic === undefined || sameTopic(m.subject, n.topic));
    case 'dm':
      return m.type === 'private' && dmKey(dmParticipants(m, myId)) === dmKey(n.userIds);
    case 'terms':
      return null;
  }
}

// Unicode's explicit directional formatting characters: embeddings, overrides and their PDF, isolates
// and their PDI. Names may contain them (Zulip allows them, as it must for some scripts).
const BIDI_EXPLICIT = /[\u202a-\u202e\u2066-\u2069]/;

/**
 * A name as part of a longer text (a title, a list of names): a name carrying explicit directional
 * formatting is set in an isolate (FSI … PDI) so that its formatting ends with it. Otherwise a name
 * such as "Eve \u202efdp.exe" (shown "Eve exe.pdf") reverses everything after it: the group "Eve
 * \u202efdp.exe and Othello" reads "Eve ollehtO dna exe.pdf", hiding who else is in it. The name's own
 * PDIs are dropped (one could close our isolate early) and its own isolates closed before ours.
 */
export function isolateName(name: string): string {
  if (!BIDI_EXPLICIT.test(name)) return name;
  const inner = name.replace(/\u2069/g, '');
  const opened = inner.match(/[\u2066-\u2068]/g)?.length ?? 0;
  return `\u2068${inner}${'\u2069'.repeat(opened + 1)}`;
}

/** The heading of a narrow and the tab title's part ("#general > lunch", "Alice", "Starred messages"). */
export function narrowTitle(n: Narrow, ctx: NarrowContext): string {
  switch (n.kind) {
    case 'home':
      return 'All messages';
    case 'starred':
      return 'Starred messages';
    case 'mentioned':
      return 'Mentions';
    case 'channel': {
      const name = isolateName(ctx.streamName(n.streamId) ?? 'Unknown channel');
      return n.topic === undefined ? `#${name}` : `#${name} > ${n.topic === '' ? ctx.emptyTopicName : isolateName(n.topic)}`;
    }
    case 'dm':
      return dmTitle(n.userIds, ctx);
    case 'terms':
      return 'Search results';
  }
}

/** "Alice", "Alice, Bob, and Carol", or "Messages with yourself". */
export function dmTitle(userIds: readonly number[], ctx: NarrowContext): string {
  if (userIds.length === 1 && userIds[0] === ctx.myId) return 'Messages with yourself';
  const names = userIds.map((id) => ctx.userName(id) ?? 'Unknown user').sort(collator.compare);
  return listFormat(names.map(isolateName));
}

/** Zulip's util.strcmp: the default Intl collator. */
export const collator = {
  /** Made on first use (creating Intl objects at load delays the app's first request). */
  compare(a: string, b: string): number {
    return (collatorInstance ??= new Intl.Collator()).compare(a, b);
  },
};
let collatorInstance: Intl.Collator | undefined;

function listFormat(items: string[]): string {
  try {
    return new Intl.ListFormat('en', { style: 'long', type: 'conjunction' }).format(items);
  } catch {
    return items.join(', ');
  }
}
