// Linkifiers: Zulip's pattern syntax (RE2 with Python-style named groups) checked and translated to
// JavaScript, RFC 6570 URL templates, reverse templates, and the API shape.
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';

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

export interface CompiledPattern {
  re: RegExp;
  groups: string[];
}

// RE2 refuses what JavaScript would accept: lookaround and backreferences. Report them as re2 does.
const RE2_UNSUPPORTED: [RegExp, (m: RegExpExecArray) => string][] = [
  [/\(\?<?[=!]/, (m) => `invalid perl operator: ${m[0]}`],
  [/\(\?P=/, () => 'invalid named capture group: (?P='],
  [/\\[1-9]/, (m) => `invalid escape sequence: ${m[0]}`],
];

/** Python/RE2 pattern → JavaScript source and flags (named groups, \pL classes, leading inline flags). */
export function translatePattern(pattern: string): { source: string; flags: string } {
  let source = pattern.replace(/\(\?P</g, '(?<').replace(/\\([pP])([A-Za-z])(?![{A-Za-z])/g, '\\$1{$2}');
  let flags = 'u';
  const inline = /^\(\?([imsU]+)\)/.exec(source);
  if (inline) {
    source = source.slice(inline[0].length);
    for (const f of inline[1]) if ('ims'.includes(f) && !flags.includes(f)) flags += f;
  }
  return { source, flags };
}

/** RE2's wording for the common mistakes (as Zulip reports them), else JavaScript's own message. */
function re2Message(pattern: string, v8: string): string {
  if (/Unterminated group/.test(v8)) return `missing ): ${pattern}`;
  if (/Unmatched '\)'/.test(v8)) return `unexpected ): ${pattern}`;
  if (/Unterminated character class/.test(v8)) return `missing ]: ${pattern.slice(pattern.lastIndexOf('['))}`;
  const dup = /Duplicate capture group name/.test(v8) ? /\(\?P?<(\w+)>[\s\S]*\(\?P?<\1>/.exec(pattern) : null;
  if (dup) return `duplicate capture group name: ${dup[1]}`;
  return v8.replace(/^Invalid regular expression: /, '');
}

/** Compiles a linkifier pattern; throws Error with the regex engine's message when it is bad. */
export function compilePattern(pattern: string): CompiledPattern {
  for (const [re, msg] of RE2_UNSUPPORTED) {
    const m = re.exec(pattern);
    if (m) throw new Error(msg(m));
  }
  const { source, flags } = translatePattern(pattern);
  let re: RegExp;
  try {
    re = new RegExp(source, flags);
  } catch (err) {
    try {
      re = new RegExp(source, flags.replace('u', ''));
    } catch {
      throw new Error(re2Message(pattern, (err as Error).message));
    }
  }
  const groups: string[] = [];
  for (const m of pattern.matchAll(/\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>/g)) groups.push(m[1]);
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
