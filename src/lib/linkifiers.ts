// Linkifiers: patterns checked with RE2 (Zulip's syntax and error texts; src/lib/re2.ts), RFC 6570 URL
// templates, reverse templates, and the API shape.
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import { watchedCache } from '../db/watch';
import { prepareLinkifierPattern, topicLinks, type Linkifier } from './markdown';
import { compileRe2, type Re2 } from './re2';

export interface LinkifierRow {
  id: number;
  pattern: string;
  url_template: string;
  example_input: string | null;
  reverse_template: string | null;
  alternative_url_templates: string;
  order: number;
}

/** The API object: id, pattern, url_template, example_input, reverse_template, alternative_url_templates. */
export function formatLinkifier(r: LinkifierRow): Record<string, unknown> {
  let alternatives: string[] = [];
  try {
    const parsed = JSON.parse(r.alternative_url_templates);
    if (Array.isArray(parsed)) alternatives = parsed.filter((x): x is string => typeof x === 'string');
  } catch {
    // stored by us as JSON
  }
  return {
    pattern: r.pattern,
    url_template: r.url_template,
    id: r.id,
    example_input: r.example_input,
    reverse_template: r.reverse_template,
    alternative_url_templates: alternatives,
  };
}

/** The organization's linkifiers in application order. */
export function listLinkifiers(db: Db, realmId: number): LinkifierRow[] {
  return stmt(db, 'SELECT * FROM linkifier WHERE realm_id = ? ORDER BY "order", id').all(realmId) as LinkifierRow[];
}

export interface TopicLink {
  url: string;
  text: string;
}

// A topic's links are a function of the topic and the realm's linkifiers (patterns and templates, in
// order) alone, so they are computed once and kept under both: fetching messages looks each topic up
// instead of running every linkifier on it again (Zulip keeps them in its message cache); sending a
// message or editing a topic computes the new topic's at write time; and a changed list of linkifiers
// is another key, so no link outlives the linkifier that made it. A memo of a pure function, shared by
// every App in the process; bounded (the most recently used topics of the last few lists).
const topicLinkMemo = new Map<string, Map<string, readonly TopicLink[]>>();
const MEMO_LISTS = 8;
const MEMO_TOPICS = 5000;

/** Zulip's topic_links under the realm's current linkifiers: a function of the topic (memoised). */
/**
 * The organization's linkifiers in order, from memory: every message sent read them twice (its
 * rendering and its topic links), a query each. Emptied by any change to the linkifier table.
 */
export function realmLinkifiers(db: Db, realmId: number): readonly Linkifier[] {
  return watchedCache<number, readonly Linkifier[]>(db, 'realm-linkifiers', ['linkifier']).get(realmId, () =>
    Object.freeze(
      (stmt(db, 'SELECT pattern, url_template FROM linkifier WHERE realm_id = ? ORDER BY "order", id').all(realmId) as Linkifier[]).map((l) => Object.freeze(l)),
    ),
  );
}

// The memo's key of each remembered (frozen) list, made once per list rather than per message.
const listKeys = new WeakMap<readonly Linkifier[], string>();

export function realmTopicLinks(db: Db, realmId: number): (topic: string) => readonly TopicLink[] {
  const linkifiers = realmLinkifiers(db, realmId);
  let key = listKeys.get(linkifiers);
  if (key === undefined) listKeys.set(linkifiers, (key = JSON.stringify(linkifiers.map((l) => [l.pattern, l.url_template]))));
  let memo = topicLinkMemo.get(key);
  if (memo !== undefined) topicLinkMemo.delete(key);
  else if (topicLinkMemo.size >= MEMO_LISTS) topicLinkMemo.delete(topicLinkMemo.keys().next().value as string);
  memo ??= new Map();
  topicLinkMemo.set(key, memo);
  const topics = memo;
  return (topic) => {
    let links = topics.get(topic);
    if (links !== undefined) {
      // Most recently used last, so the oldest go first.
      topics.delete(topic);
    } else {
      // Frozen: the same array goes into every message of the topic.
      links = Object.freeze(topicLinks(topic, linkifiers).map((l) => Object.freeze(l)));
      if (topics.size >= MEMO_TOPICS) topics.delete(topics.keys().next().value as string);
    }
    topics.set(topic, links);
    return links;
  };
}

export interface CompiledPattern {
  re: Re2;
  /** The named groups, in the pattern's order. */
  groups: string[];
}

/**
 * Compiles a linkifier pattern with RE2, as Zulip's filter_pattern_validator does; throws Error with
 * RE2's message ("missing ): (foo") when RE2 refuses it. The pattern must also compile wrapped as
 * messages use it (a group named linkifier_actual_match, or a program too large once wrapped, would
 * otherwise be accepted and then link nothing).
 */
export function compilePattern(pattern: string): CompiledPattern {
  const re = compileRe2(pattern);
  compileRe2(prepareLinkifierPattern(pattern));
  const named = re.namedGroups();
  const groups = Object.keys(named).sort((a, b) => named[a]! - named[b]!);
  return { re, groups };
}

// RFC 6570, level 4: literals, and expressions {op varspec,varspec} with :prefix or * modifiers.
const LITERAL = /^(?:[^\x00-\x20"'%<>\\^`{|}\x7f]|%[0-9A-Fa-f]{2})$/u;
const VARNAME = /^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+(?:\.(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+)*$/;

/** The variable names of an RFC 6570 URL template, or null when it is not a valid template. */
export function urlTemplateVariables(template: string): string[] | null {
  const names: string[] = [];
  let i = 0;
  while (i < template.length) {
    const c = template[i];
    if (c === '{') {
      const end = template.indexOf('}', i);
      if (end < 0) return null;
      let body = template.slice(i + 1, end);
      if (body.includes('{')) return null;
      if (/^[+#./;?&=,!@|]/.test(body)) body = body.slice(1);
      if (body === '') return null;
      for (const spec of body.split(',')) {
        const m = /^(.*?)(?::([1-9][0-9]{0,3})|(\*))?$/.exec(spec) as RegExpExecArray;
        if (!VARNAME.test(m[1])) return null;
        names.push(m[1]);
      }
      i = end + 1;
      continue;
    }
    if (c === '%') {
      if (!/^%[0-9A-Fa-f]{2}/.test(template.slice(i, i + 3))) return null;
      i += 3;
      continue;
    }
    const cp = template.codePointAt(i) as number;
    const ch = String.fromCodePoint(cp);
    if (!LITERAL.test(ch)) return null;
    i += ch.length;
  }
  return names;
}

/** The {variable} names of a reverse template ({{ and }} are literal braces), or null if malformed. */
export function reverseTemplateVariables(template: string): string[] | null {
  const names: string[] = [];
  let i = 0;
  while (i < template.length) {
    const c = template[i];
    if ((c === '{' && template[i + 1] === '{') || (c === '}' && template[i + 1] === '}')) {
      i += 2;
      continue;
    }
    if (c === '}') return null;
    if (c === '{') {
      const end = template.indexOf('}', i);
      if (end < 0) return null;
      const name = template.slice(i + 1, end);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return null;
      names.push(name);
      i = end + 1;
      continue;
    }
    i++;
  }
  return names;
}
