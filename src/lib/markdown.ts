// Message rendering: Markdown → HTML the way Zulip's server renders for its clients
// (zerver/lib/markdown/), built on markdown-it with Zulip's syntax added and CommonMark's
// extras that Zulip lacks turned off. Raw HTML is never passed through: markdown-it runs with
// html:false, every attribute and text we build is escaped, and links go through Zulip's URL
// sanitiser. The library is DB-free: the caller supplies lookups in a RenderContext.
import type MarkdownIt from 'markdown-it';
import TLDS from 'tlds';
import { loadKatex, loadMarkdownIt } from '../lazy';
import { compileRe2, type Re2, type Re2Matcher } from './re2';
import { parseTimestamp } from './timestamp';
import { encodeChannel, encodeHashComponent } from './url-encoding';
import { EMOTICON_CONVERSIONS, emojiCodeForString, emojiNameForCode, unicodeEmojiCode, ZULIP_EMOJI_URL } from './emoji';

type Token = MarkdownIt.Token;
type StateBlock = MarkdownIt.StateBlock;
type StateInline = MarkdownIt.StateInline;
type StateCore = MarkdownIt.StateCore;

export interface MentionableUser {
  id: number;
  full_name: string;
  /** Deactivated users are rendered as silent mentions, as in Zulip. Default true. */
  is_active?: boolean;
}
export interface MentionableGroup {
  id: number;
  name: string;
  /** Deactivated groups are rendered as silent mentions. Default false. */
  deactivated?: boolean;
}
export interface LinkableStream {
  id: number;
  name: string;
}
export interface Linkifier {
  /** Python-style regular expression, e.g. `#(?P<id>[0-9]+)`. */
  pattern: string;
  /** RFC 6570 URL template, e.g. `https://github.com/zulip/zulip/issues/{id}`. */
  url_template: string;
}
export interface RealmEmoji {
  id: string | number;
  name: string;
  source_url: string;
}

/** Lookups the renderer needs; name lookups should be case-insensitive like Zulip's. */
export interface RenderContext {
  userByName(name: string): MentionableUser | null;
  userById(id: number): MentionableUser | null;
  groupByName(name: string): MentionableGroup | null;
  streamByName(name: string): LinkableStream | null;
  /** Applied in this order. */
  linkifiers: readonly Linkifier[];
  /** e.g. "https://chat.example.com"; links into the realm become relative. */
  realmUrl?: string;
  /** Active custom emoji by name; they take precedence over unicode emoji. */
  realmEmojiByName?(name: string): RealmEmoji | null;
  /**
   * For #**channel>topic** links: the message a topic permalink points at (Zulip links to the
   * topic's first message the sender can read, as ".../topic/T/with/ID"), or null for none.
   */
  topicPermalinkMessageId?(streamId: number, topic: string): number | null;
  /** Milliseconds since the epoch: <time:...> fills what the text leaves out from today. Default Date.now(). */
  nowMs?(): number;
  /** The organization's inline_image_preview setting: image links get a preview below them. Default true. */
  inlineImagePreview?: boolean;
  /** The sender's translate_emoticons setting (":)" → 🙂). Default false. */
  translateEmoticons?: boolean;
  /** Told about an internal error; the message then renders as escaped plain text. */
  onError?(err: unknown): void;
}

export interface RenderResult {
  html: string;
  /** Users mentioned non-silently (not in quotes, not inside code). */
  mentionedUserIds: Set<number>;
  mentionedGroupIds: Set<number>;
  /** @**all**, @**everyone**, @**channel**, @**stream** */
  wildcardChannel: boolean;
  /** @**topic** */
  wildcardTopic: boolean;
  hasLink: boolean;
  hasImage: boolean;
  hasAttachment: boolean;
  /** The path after /user_uploads/ of each distinct upload link, in order. */
  linkedUploadPaths: string[];
}

/** Longest content rendered; longer input is cut (messages are at most 10000 characters). */
export const MAX_RENDER_INPUT = 10000;
/** Zulip refuses renderings over 100 × the message limit; we fall back to plain text instead. */
export const MAX_RENDER_OUTPUT = 100 * MAX_RENDER_INPUT;

interface Env {
  ctx: RenderContext;
  inQuote: boolean;
  /** onlyEmptyQuoteLines' last scan: lines from..to-1 are empty quote lines, `to` ends the run. */
  quoteScan: { endLine: number; from: number; to: number; starts: number[]; endStart: number; result: boolean } | null;
  linkifiers: readonly CompiledLinkifier[];
  mentionedUserIds: Set<number>;
  mentionedGroupIds: Set<number>;
  wildcardChannel: boolean;
  wildcardTopic: boolean;
  /** What is left of MAX_TEX_COST_PER_MESSAGE for this message. */
  texBudget: number;
  /** What is left of MAX_LINKIFIER_WORK_PER_MESSAGE for this message. */
  linkifierBudget: number;
  /** The message's finders that keep no state between text runs, made at their first use. */
  findWebLink?: Finder;
  findEmojiSyntax?: Finder;
}

// ---------------------------------------------------------------------------------------------
// Escaping

// Most text has nothing to escape: one scan instead of three (or four) replacements.
const TEXT_SPECIALS = /[&<>]/;
const ATTR_SPECIALS = /[&<>"]/;
const escapeText = (s: string): string => (TEXT_SPECIALS.test(s) ? s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;') : s);
const escapeAttr = (s: string): string => (ATTR_SPECIALS.test(s) ? escapeText(s).replace(/"/g, '&quot;') : s);
// zulip-compat: code blocks are escaped like Pygments does (quotes too); inline code and text are not.
const escapeCode = (s: string): string => escapeAttr(s).replace(/'/g, '&#39;');

// ---------------------------------------------------------------------------------------------
// URLs (zerver/lib/markdown/__init__.py: sanitize_url, rewrite_local_links_to_relative)

const HTML_SAFELISTED_SCHEMES = [
  'bitcoin', 'geo', 'im', 'irc', 'ircs', 'magnet', 'mailto', 'matrix', 'mms', 'news', 'nntp', 'openpgp4fpr',
  'sip', 'sms', 'smsto', 'ssh', 'tel', 'urn', 'webcal', 'wtai', 'xmpp',
];
/** The link schemes the renderer keeps (Zulip's); src/import/rendered-html.ts holds imported links to the same. */
export const ALLOWED_SCHEMES: ReadonlySet<string> = new Set(['http', 'https', 'ftp', 'file', ...HTML_SAFELISTED_SCHEMES]);
const USES_NETLOC = new Set(['', 'ftp', 'http', 'gopher', 'nntp', 'telnet', 'imap', 'wais', 'file', 'mms', 'https', 'shttp', 'snews', 'prospero', 'rtsp', 'rtspu', 'rsync', 'svn', 'svn+ssh', 'sftp', 'nfs', 'git', 'git+ssh', 'ws', 'wss']);

interface SplitUrl {
  scheme: string;
  netloc: string;
  path: string;
  query: string;
  fragment: string;
}

const TAB_OR_NEWLINE = /[\t\r\n]/;

// Python's urllib.parse.urlsplit, enough for sanitising.
function urlsplit(url: string): SplitUrl {
  let scheme = '';
  let rest = url.charCodeAt(0) <= 0x20 ? url.replace(/^[\x00-\x20]+/, '') : url;
  if (TAB_OR_NEWLINE.test(rest)) rest = rest.replace(/[\t\r\n]/g, '');
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(rest);
  if (m) {
    scheme = m[1]!.toLowerCase();
    rest = rest.slice(m[0].length);
  }
  let netloc = '';
  if (rest.startsWith('//')) {
    const end = rest.slice(2).search(/[/?#]/);
    netloc = end === -1 ? rest.slice(2) : rest.slice(2, 2 + end);
    rest = end === -1 ? '' : rest.slice(2 + end);
  }
  let fragment = '';
  const hash = rest.indexOf('#');
  if (hash !== -1) {
    fragment = rest.slice(hash + 1);
    rest = rest.slice(0, hash);
  }
  let query = '';
  const q = rest.indexOf('?');
  if (q !== -1) {
    query = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  return { scheme, netloc, path: rest, query, fragment };
}

function urlunsplit({ scheme, netloc, path, query, fragment }: SplitUrl): string {
  let url = path;
  if (netloc || (scheme && USES_NETLOC.has(scheme) && !url.startsWith('//'))) {
    if (url && !url.startsWith('/')) url = '/' + url;
    url = '//' + netloc + url;
  }
  if (scheme) url = scheme + ':' + url;
  if (query) url += '?' + query;
  if (fragment) url += '#' + fragment;
  return url;
}

// The last URL sanitised and its answer: a [text](url) link is sanitised twice in a row, when
// markdown-it validates it and when its href is set (fixLinks).
let lastSanitizedIn: string | null = null;
let lastSanitizedOut: string | null = null;

/** Zulip's sanitize_url: the href to use, or null if the URL must not become a link. */
export function sanitizeUrl(url: string): string | null {
  if (url === lastSanitizedIn) return lastSanitizedOut;
  const out = sanitizeUrlAt(url, 0);
  lastSanitizedIn = url;
  lastSanitizedOut = out;
  return out;
}

function sanitizeUrlAt(url: string, depth: number): string | null {
  const parts = urlsplit(url.replace(/ /g, '%20'));
  if (parts.scheme === '' && parts.netloc === '' && parts.path.includes('@')) {
    parts.scheme = 'mailto';
  } else if (parts.scheme === '' && parts.netloc === '' && parts.path.startsWith('/')) {
    return urlunsplit({ ...parts, scheme: '', netloc: '' });
  } else if (parts.scheme === '' && parts.netloc === '' && parts.path === '' && parts.query === '' && parts.fragment) {
    return '#' + parts.fragment;
  }
  // zulip-compat: a URL without a scheme is taken as http://.
  if (!parts.scheme) return depth > 0 ? null : sanitizeUrlAt('http://' + url, depth + 1);
  if (!ALLOWED_SCHEMES.has(parts.scheme)) return null;
  return urlunsplit(parts);
}

// The organization's URL as a link prefix and its host, derived once per URL (a server has one): each
// was worked out again for every link of every message.
let lastRealmUrl: string | null = null;
let lastRealmPrefix = '';
let lastRealmHost = '';
function realmUrlParts(realmUrl: string): void {
  if (realmUrl === lastRealmUrl) return;
  lastRealmPrefix = realmUrl.replace(/\/+$/, '') + '/';
  lastRealmHost = urlsplit(realmUrl).netloc.toLowerCase();
  lastRealmUrl = realmUrl;
}

function rewriteLocalLink(ctx: RenderContext, href: string): string {
  if (ctx.realmUrl) {
    realmUrlParts(ctx.realmUrl);
    const prefix = lastRealmPrefix;
    if (href.startsWith(prefix + '#') || href.startsWith(prefix + 'user_uploads/')) return href.slice(prefix.length);
  }
  return href;
}


// ---------------------------------------------------------------------------------------------
// Code blocks

// Pygments lexer names for common fence languages, used for data-code-language.
const PYGMENTS_NAMES: Record<string, string> = {
  python: 'Python', py: 'Python', python3: 'Python', py3: 'Python', sage: 'Python', bazel: 'Python', starlark: 'Python',
  python2: 'Python 2.x', py2: 'Python 2.x', pycon: 'Python console session', pytb: 'Python Traceback',
  javascript: 'JavaScript', js: 'JavaScript', mjs: 'JavaScript', cjs: 'JavaScript', typescript: 'TypeScript', ts: 'TypeScript',
  jsx: 'JSX', tsx: 'TSX', json: 'JSON', 'json-object': 'JSONBareObject', jsonld: 'JSON-LD',
  bash: 'Bash', sh: 'Bash', ksh: 'Bash', zsh: 'Bash', shell: 'Bash', console: 'Bash Session', 'shell-session': 'Bash Session',
  powershell: 'PowerShell', pwsh: 'PowerShell', ps1: 'PowerShell', batch: 'Batchfile', bat: 'Batchfile', cmd: 'Batchfile',
  c: 'C', cpp: 'C++', 'c++': 'C++', csharp: 'C#', 'c#': 'C#', cs: 'C#', 'objective-c': 'Objective-C', objc: 'Objective-C',
  java: 'Java', kotlin: 'Kotlin', scala: 'Scala', groovy: 'Groovy', clojure: 'Clojure', clj: 'Clojure',
  go: 'Go', golang: 'Go', rust: 'Rust', rs: 'Rust', swift: 'Swift', zig: 'Zig', nim: 'Nim', d: 'D', dart: 'Dart',
  ruby: 'Ruby', rb: 'Ruby', php: 'PHP', perl: 'Perl', pl: 'Perl', lua: 'Lua', r: 'S', haskell: 'Haskell', hs: 'Haskell',
  ocaml: 'OCaml', elixir: 'Elixir', ex: 'Elixir', erlang: 'Erlang', julia: 'Julia', jl: 'Julia', fortran: 'Fortran',
  html: 'HTML', xml: 'XML', css: 'CSS', scss: 'SCSS', sass: 'Sass', less: 'LessCss', svg: 'XML',
  sql: 'SQL', postgresql: 'PostgreSQL SQL dialect', postgres: 'PostgreSQL SQL dialect', mysql: 'MySQL', sqlite3: 'sqlite3con',
  yaml: 'YAML', yml: 'YAML', toml: 'TOML', ini: 'INI', cfg: 'INI', dosini: 'INI', nginx: 'Nginx configuration file',
  docker: 'Docker', dockerfile: 'Docker', make: 'Makefile', makefile: 'Makefile', cmake: 'CMake', nix: 'Nix',
  diff: 'Diff', udiff: 'Diff', patch: 'Diff', markdown: 'Markdown', md: 'Markdown', rst: 'reStructuredText',
  tex: 'TeX', latex: 'TeX', text: 'Text only', txt: 'Text only', plain: 'Text only', graphql: 'GraphQL',
  vim: 'VimL', elm: 'Elm', fsharp: 'F#', 'f#': 'F#', coffeescript: 'CoffeeScript', coffee: 'CoffeeScript',
};

function codeBlockHtml(code: string, lang: string | null): string {
  // hasOwn: a fence named like an Object.prototype member (```constructor) is just a language name.
  const language = lang ? (Object.hasOwn(PYGMENTS_NAMES, lang) ? PYGMENTS_NAMES[lang]! : lang) : null;
  const attr = language ? ` data-code-language="${escapeAttr(language)}"` : '';
  return `<div class="codehilite"${attr}><pre><span></span><code>${escapeCode(code)}\n</code></pre></div>\n`;
}

// zerver/lib/markdown/fenced_code.py: FENCE_RE
const FENCE_RE = /^(~{3,}|`{3,})[ ]*(?:\{?\.?([a-zA-Z0-9_+\-./#]+)[ ]*([^ ~`][^~`]*)?\}?)?$/;
const CONTENT_FENCES = new Set(['quote', 'quoted', 'spoiler']);

function lineText(state: StateBlock, line: number): string {
  return state.src.slice(state.bMarks[line]! + state.tShift[line]!, state.eMarks[line]!);
}

// Zulip's fenced blocks: ``` or ~~~ with a language; quote/quoted and spoiler hold Markdown,
// anything else is code. A fence closes only on exactly the same fence string; inside quote and
// spoiler blocks a new fence line opens a nested block (Zulip's handler stack).
function zulipFence(state: StateBlock, startLine: number, endLine: number, silent: boolean): boolean {
  if (state.sCount[startLine]! - state.blkIndent !== 0) return false;
  const m = FENCE_RE.exec(lineText(state, startLine));
  if (!m) return false;
  if (silent) return true;
  const fence = m[1]!;
  const lang = m[2]?.toLowerCase() ?? null;
  const header = m[3] ?? null;
  const kind = lang === 'quote' || lang === 'quoted' ? 'quote' : lang === 'spoiler' ? 'spoiler' : 'code';

  const stack = [{ fence, code: kind === 'code' }];
  let line = startLine + 1;
  let closed = false;
  for (; line < endLine; line++) {
    const isEmpty = state.bMarks[line]! + state.tShift[line]! >= state.eMarks[line]!;
    if (!isEmpty && state.sCount[line]! < state.blkIndent) break;
    if (state.sCount[line]! !== state.blkIndent) continue;
    const text = lineText(state, line);
    const top = stack[stack.length - 1]!;
    if (text.trimEnd() === top.fence) {
      stack.pop();
      if (stack.length === 0) {
        closed = true;
        break;
      }
      continue;
    }
    if (!top.code) {
      const inner = FENCE_RE.exec(text);
      if (inner) stack.push({ fence: inner[1]!, code: !CONTENT_FENCES.has(inner[2]?.toLowerCase() ?? '') });
    }
  }
  const contentEnd = line;
  const nextLine = closed ? line + 1 : line;

  if (kind === 'code') {
    const lines = state
      .getLines(startLine + 1, contentEnd, state.sCount[startLine]!, false)
      .split('\n')
      .map((l) => l.trimEnd());
    // zulip-compat: an empty fenced block renders nothing; leading/trailing blank lines go.
    if (contentEnd > startLine + 1) {
      const token = state.push('zulip_code', 'code', 0);
      token.content = trimNewlines(lines.join('\n'));
      token.info = lang ?? '';
      token.markup = fence;
      token.map = [startLine, nextLine];
    }
    state.line = nextLine;
    return true;
  }

  const oldParent = state.parentType;
  const oldLineMax = state.lineMax;
  state.lineMax = contentEnd;
  if (kind === 'quote') {
    state.parentType = 'blockquote';
    const open = state.push('blockquote_open', 'blockquote', 1);
    open.markup = fence;
    open.map = [startLine, nextLine];
    state.md.block.tokenize(state, startLine + 1, contentEnd);
    state.push('blockquote_close', 'blockquote', -1).markup = fence;
  } else {
    state.push('spoiler_open', 'div', 1).map = [startLine, nextLine];
    if (header !== null && header.trim() !== '') {
      state.push('paragraph_open', 'p', 1);
      const inline = state.push('inline', '', 0);
      inline.content = header.trim();
      inline.map = [startLine, startLine + 1];
      inline.children = [];
      state.push('paragraph_close', 'p', -1);
    }
    state.push('spoiler_content', 'div', 0);
    state.md.block.tokenize(state, startLine + 1, contentEnd);
    state.push('spoiler_close', 'div', -1);
  }
  state.parentType = oldParent;
  state.lineMax = oldLineMax;
  state.line = nextLine;
  return true;
}

// zulip-compat: a quote whose lines up to the block's end are all empty (">") is a paragraph
// (Zulip's BlockQuoteProcessor.RE refuses to start a quote there).
const EMPTY_QUOTE_LINE_RE = /^>\s*$/;
function onlyEmptyQuoteLines(state: StateBlock, startLine: number, endLine: number): boolean {
  // A paragraph asks about each of its lines, so remember the run of empty quote lines last
  // scanned: every line in it has the same answer (checked against where the lines start now, as
  // a quote being parsed moves them).
  const env = state.env as Env;
  const memo = env.quoteScan;
  const lineStart = (line: number): number => (line < state.lineMax ? state.bMarks[line]! + state.tShift[line]! : -1);
  if (
    memo !== null && memo.endLine === endLine && startLine >= memo.from && startLine < memo.to &&
    memo.starts[startLine - memo.from] === lineStart(startLine) && memo.endStart === lineStart(memo.to)
  ) {
    return memo.result;
  }
  let line = startLine;
  let result = true;
  for (; line < endLine; line++) {
    const text = lineText(state, line);
    if (text === '') break;
    if (!EMPTY_QUOTE_LINE_RE.test(text)) {
      result = false;
      break;
    }
  }
  const starts: number[] = [];
  for (let l = startLine; l < line; l++) starts.push(lineStart(l));
  env.quoteScan = { endLine, from: startLine, to: line, starts, endStart: lineStart(line), result };
  return result;
}

// A ">" quote, as markdown-it's blockquote rule (lib/rules_block/blockquote.mjs) but with
// Python-Markdown's extent: the quote takes every following line of its block, with or without
// ">" (so ">\n>\ntext" quotes "text", where markdown-it keeps only lazy paragraph lines). The
// block ends at a blank line, or at a fence line, which Zulip's fenced-code preprocessor sets
// apart as a block of its own. Lines left of the quote keep markdown-it's rules.
function zulipBlockquote(state: StateBlock, startLine: number, endLine: number, silent: boolean): boolean {
  if (state.sCount[startLine]! - state.blkIndent >= 4) return false;
  if (state.src.charCodeAt(state.bMarks[startLine]! + state.tShift[startLine]!) !== 0x3e /* > */) return false;
  if (onlyEmptyQuoteLines(state, startLine, endLine)) return false;
  if (silent) return true;

  const oldLineMax = state.lineMax;
  const oldParentType = state.parentType;
  const oldBMarks: number[] = [];
  const oldBSCount: number[] = [];
  const oldSCount: number[] = [];
  const oldTShift: number[] = [];
  const save = (line: number): void => {
    oldBMarks.push(state.bMarks[line]!);
    oldBSCount.push(state.bsCount[line]!);
    oldSCount.push(state.sCount[line]!);
    oldTShift.push(state.tShift[line]!);
  };
  const terminatorRules = state.md.block.ruler.getRules('blockquote');
  state.parentType = 'blockquote';
  let lastLineEmpty = false;
  let nextLine = startLine;
  for (; nextLine < endLine; nextLine++) {
    const isOutdented = state.sCount[nextLine]! < state.blkIndent;
    let pos = state.bMarks[nextLine]! + state.tShift[nextLine]!;
    const max = state.eMarks[nextLine]!;
    if (pos >= max) break;

    if (state.src.charCodeAt(pos++) === 0x3e /* > */ && !isOutdented) {
      // Strip the marker and one space (a tab counts to the next stop), as markdown-it does.
      let initial = state.sCount[nextLine]! + 1;
      let spaceAfterMarker = false;
      let adjustTab = false;
      if (state.src.charCodeAt(pos) === 0x20) {
        pos++;
        initial++;
        spaceAfterMarker = true;
      } else if (state.src.charCodeAt(pos) === 0x09) {
        spaceAfterMarker = true;
        if ((state.bsCount[nextLine]! + initial) % 4 === 3) {
          pos++;
          initial++;
        } else {
          adjustTab = true;
        }
      }
      let offset = initial;
      save(nextLine);
      state.bMarks[nextLine] = pos;
      for (; pos < max; pos++) {
        const ch = state.src.charCodeAt(pos);
        if (ch === 0x09) offset += 4 - ((offset + state.bsCount[nextLine]! + (adjustTab ? 1 : 0)) % 4);
        else if (ch === 0x20) offset++;
        else break;
      }
      lastLineEmpty = pos >= max;
      state.bsCount[nextLine] = state.sCount[nextLine]! + 1 + (spaceAfterMarker ? 1 : 0);
      state.sCount[nextLine] = offset - initial;
      state.tShift[nextLine] = pos - state.bMarks[nextLine]!;
      continue;
    }

    if (!isOutdented) {
      // zulip-compat: the rest of the block is quoted as it stands.
      if (FENCE_RE.test(lineText(state, nextLine))) {
        state.lineMax = nextLine;
        break;
      }
      save(nextLine);
      state.sCount[nextLine]! -= state.blkIndent;
      continue;
    }

    // Outdented (left of an enclosing list item): markdown-it's lazy continuation.
    if (lastLineEmpty) break;
    if (terminatorRules.some((rule) => rule(state, nextLine, endLine, true))) {
      state.lineMax = nextLine;
      if (state.blkIndent !== 0) {
        save(nextLine);
        state.sCount[nextLine]! -= state.blkIndent;
      }
      break;
    }
    save(nextLine);
    state.sCount[nextLine] = -1;
  }

  const oldIndent = state.blkIndent;
  state.blkIndent = 0;
  const open = state.push('blockquote_open', 'blockquote', 1);
  open.markup = '>';
  const lines: [number, number] = [startLine, 0];
  open.map = lines;
  state.md.block.tokenize(state, startLine, nextLine);
  state.push('blockquote_close', 'blockquote', -1).markup = '>';
  state.lineMax = oldLineMax;
  state.parentType = oldParentType;
  lines[1] = state.line;
  for (let i = 0; i < oldTShift.length; i++) {
    state.bMarks[i + startLine] = oldBMarks[i]!;
    state.tShift[i + startLine] = oldTShift[i]!;
    state.sCount[i + startLine] = oldSCount[i]!;
    state.bsCount[i + startLine] = oldBSCount[i]!;
  }
  state.blkIndent = oldIndent;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Inline syntax: mentions, channel links, code spans, strikethrough, timestamps

// zerver/lib/mention.py: BEFORE_MENTION_ALLOWED_REGEX; links also refuse "[" before them.
const MENTION_BEFORE = /[\s'"({[/<]/;
const LINK_BEFORE = /[\s'"({/<]/;
const USER_MENTION_RE = /@(_?)\*\*([^*]+)\*\*/y;
const GROUP_MENTION_RE = /@(_?)\*([^*]+)\*/y;
const STREAM_TOPIC_MESSAGE_RE = /#\*\*([^*>]+)>([^*]*)@(\d+)\*\*/y;
const STREAM_TOPIC_RE = /#\*\*([^*>]+)>([^*]*)\*\*/y;
// zulip-compat: Message.EMPTY_TOPIC_FALLBACK_NAME, shown for links to the empty topic.
const EMPTY_TOPIC_NAME = 'general chat';
const STREAM_RE = /#\*\*([^*]+)\*\*/y;
const ID_SYNTAX_RE = /^(.+)?\|(\d+)$/s;
const STREAM_WILDCARDS = new Set(['all', 'everyone', 'stream', 'channel']);
const TOPIC_WILDCARDS = new Set(['topic']);

function matchAt(re: RegExp, state: StateInline): RegExpExecArray | null {
  re.lastIndex = state.pos;
  const m = re.exec(state.src);
  return m && m.index + m[0].length <= state.posMax ? m : null;
}

function pushHtml(state: StateInline, html: string, end: number, isLink = false): void {
  const token = state.push('zulip_html', '', 0);
  token.content = html;
  token.meta = { isLink };
  state.pos = end;
}

function userMention(state: StateInline, silent: boolean): boolean {
  const env = state.env as Env;
  if (state.src.charCodeAt(state.pos) !== 0x40 /* @ */) return false;
  if (state.pos > 0 && !MENTION_BEFORE.test(state.src[state.pos - 1]!)) return false;
  const m = matchAt(USER_MENTION_RE, state);
  if (!m) return false;
  const name = m[2]!;
  // zulip-compat: every mention inside a quote is silent.
  const isSilent = m[1] === '_' || env.inQuote;
  let html: string;
  if (STREAM_WILDCARDS.has(name)) {
    if (!silent && !isSilent) env.wildcardChannel = true;
    html = `<span class="user-mention channel-wildcard-mention${isSilent ? ' silent' : ''}" data-user-id="*">${isSilent ? '' : '@'}${escapeText(name)}</span>`;
  } else if (TOPIC_WILDCARDS.has(name)) {
    if (!silent && !isSilent) env.wildcardTopic = true;
    html = `<span class="topic-mention${isSilent ? ' silent' : ''}">${isSilent ? '' : '@'}${escapeText(name)}</span>`;
  } else {
    let user: MentionableUser | null;
    const idSyntax = ID_SYNTAX_RE.exec(name);
    if (idSyntax) {
      user = env.ctx.userById(Number(idSyntax[2]));
      // zulip-compat: @**name|id** must name that user exactly.
      if (idSyntax[1] !== undefined && user !== null && user.full_name !== idSyntax[1]) return false;
    } else {
      user = env.ctx.userByName(name);
    }
    if (user === null) return false;
    const quiet = isSilent || user.is_active === false;
    if (!silent && !quiet) env.mentionedUserIds.add(user.id);
    html = `<span class="user-mention${quiet ? ' silent' : ''}" data-user-id="${user.id}">${quiet ? '' : '@'}${escapeText(user.full_name)}</span>`;
  }
  if (!silent) pushHtml(state, html, state.pos + m[0].length);
  else state.pos += m[0].length;
  return true;
}

function groupMention(state: StateInline, silent: boolean): boolean {
  const env = state.env as Env;
  if (state.src.charCodeAt(state.pos) !== 0x40 /* @ */) return false;
  if (state.pos > 0 && !MENTION_BEFORE.test(state.src[state.pos - 1]!)) return false;
  const m = matchAt(GROUP_MENTION_RE, state);
  if (!m) return false;
  const group = env.ctx.groupByName(m[2]!);
  if (group === null) return false;
  const quiet = m[1] === '_' || env.inQuote || group.deactivated === true;
  if (!silent) {
    if (!quiet) env.mentionedGroupIds.add(group.id);
    const html = `<span class="user-group-mention${quiet ? ' silent' : ''}" data-user-group-id="${group.id}">${quiet ? '' : '@'}${escapeText(group.name)}</span>`;
    pushHtml(state, html, state.pos + m[0].length);
  } else {
    state.pos += m[0].length;
  }
  return true;
}

function streamLink(state: StateInline, silent: boolean): boolean {
  const env = state.env as Env;
  if (state.src.charCodeAt(state.pos) !== 0x23 /* # */) return false;
  if (state.pos > 0 && !LINK_BEFORE.test(state.src[state.pos - 1]!)) return false;
  let m = matchAt(STREAM_TOPIC_MESSAGE_RE, state);
  let kind: 'message' | 'topic' | 'stream' = 'message';
  let stream: LinkableStream | null = m ? env.ctx.streamByName(m[1]!) : null;
  if (stream === null) {
    kind = 'topic';
    m = matchAt(STREAM_TOPIC_RE, state);
    stream = m ? env.ctx.streamByName(m[1]!) : null;
  }
  if (stream === null) {
    kind = 'stream';
    m = matchAt(STREAM_RE, state);
    stream = m ? env.ctx.streamByName(m[1]!) : null;
  }
  if (stream === null || m === null) return false;
  if (silent) {
    state.pos += m[0].length;
    return true;
  }
  const name = m[1]!;
  const channel = `/#narrow/channel/${encodeChannel(stream.id, name)}`;
  let html: string;
  if (kind === 'stream') {
    html = `<a class="stream" data-stream-id="${stream.id}" href="${escapeAttr(channel)}">#${escapeText(name)}</a>`;
  } else {
    const topic = m[2]!;
    const topicUrl = `${channel}/topic/${encodeHashComponent(topic)}`;
    const withId = kind === 'topic' ? (env.ctx.topicPermalinkMessageId?.(stream.id, topic) ?? null) : null;
    const topicHtml = topic === '' ? `<em>${EMPTY_TOPIC_NAME}</em>` : escapeText(topic);
    html =
      kind === 'topic'
        ? `<a class="stream-topic" data-stream-id="${stream.id}" href="${escapeAttr(withId === null ? topicUrl : `${topicUrl}/with/${withId}`)}">#${escapeText(name)} &gt; ${topicHtml}</a>`
        : `<a class="message-link" href="${escapeAttr(`${topicUrl}/near/${m[3]}`)}">#${escapeText(name)} &gt; ${topicHtml} @ 💬</a>`;
  }
  pushHtml(state, html, state.pos + m[0].length, true);
  return true;
}

// zulip-compat: code spans keep their spaces and do not cross lines.
function backticks(state: StateInline, silent: boolean): boolean {
  let pos = state.pos;
  if (state.src.charCodeAt(pos) !== 0x60 /* ` */) return false;
  const start = pos;
  while (pos < state.posMax && state.src.charCodeAt(pos) === 0x60) pos++;
  const marker = state.src.slice(start, pos);
  let search = pos;
  for (;;) {
    const found = state.src.indexOf(marker, search);
    if (found === -1 || found >= state.posMax) break;
    let runEnd = found;
    while (runEnd < state.posMax && state.src.charCodeAt(runEnd) === 0x60) runEnd++;
    const content = state.src.slice(pos, found);
    if (content.includes('\n')) break;
    if (runEnd - found === marker.length && content.length > 0) {
      if (!silent) {
        const token = state.push('code_inline', 'code', 0);
        token.markup = marker;
        token.content = content;
      }
      state.pos = runEnd;
      return true;
    }
    search = runEnd;
  }
  if (!silent) state.pending += marker;
  state.pos = pos;
  return true;
}

// zulip-compat: Zulip's ~~strikethrough~~ is a plain regex (spaces inside are fine), rendered <del>.
const DEL_RE = /~~([^~\n]+?)~~(?!~)/y;
function strikethrough(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x7e /* ~ */) return false;
  if (state.pos > 0 && state.src.charCodeAt(state.pos - 1) === 0x7e) return false;
  const m = matchAt(DEL_RE, state);
  if (!m) return false;
  if (silent) {
    state.pos += m[0].length;
    return true;
  }
  const end = state.pos + m[0].length;
  const oldMax = state.posMax;
  state.push('del_open', 'del', 1).markup = '~~';
  state.pos += 2;
  state.posMax = end - 2;
  state.md.inline.tokenize(state);
  state.push('del_close', 'del', -1).markup = '~~';
  state.pos = end;
  state.posMax = oldMax;
  return true;
}

// Zulip's $$TeX$$, rendered with KaTeX as Zulip does (same library, so the same HTML).
const TEX_RE = /\$\$([^\n_$](?:\\\$|[^$\n])*)\$\$(?!\$)/y;
const WORD_CHAR = /[\p{L}\p{N}_]/u;
function tex(state: StateInline, silent: boolean): boolean {
  const { src, pos } = state;
  if (src.charCodeAt(pos) !== 0x24 /* $ */ || src.charCodeAt(pos + 1) !== 0x24) return false;
  // \B(?<!\$) before, \B after: no word character or "$" next to the delimiters.
  if (pos > 0 && (src[pos - 1] === '$' || WORD_CHAR.test(src[pos - 1]!))) return false;
  const m = matchAt(TEX_RE, state);
  if (!m) return false;
  const end = pos + m[0].length;
  if (end < src.length && WORD_CHAR.test(src[end]!)) return false;
  if (silent) {
    state.pos = end;
    return true;
  }
  const rendered = renderTex(m[1]!, false, state.env as Env);
  pushHtml(state, rendered ?? `<span class="tex-error">${escapeText(m[0])}</span>`, end);
  return true;
}

/**
 * KaTeX work one message may cause, in units of TeX source: each expression costs 10 (a call to KaTeX
 * has a fixed cost), each of its characters 1, a backslash (a command) or a non-ASCII character (an
 * accented or unknown glyph) 5, and '&' (a matrix cell) 8. The costliest shapes take about 5 µs of CPU
 * per unit (bench/security-bounds.ts), so a message's math renders in ~10 ms; unbounded, a 10,000-column
 * matrix took a second. Math past the budget is shown as its source, as Zulip shows math its KaTeX
 * service did not render within its 0.5 s timeout.
 */
export const MAX_TEX_COST_PER_MESSAGE = 2000;

// Macro definitions: a short source can expand to unbounded work (KaTeX's maxExpand counts
// expansions, not what they produce: 2 KB of \def took 40 s and 230 MB). Such math is shown as source.
const TEX_MACRO_DEFINITION = /\\(?:[gex]?def|let|futurelet|global|(?:re)?newcommand|providecommand)(?![a-zA-Z])/;

/** The cost of rendering `body` in budget units (see MAX_TEX_COST_PER_MESSAGE). */
export function texCost(body: string): number {
  let cost = 10 + body.length;
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    if (c === 0x26 /* & */) cost += 7;
    else if (c === 0x5c /* \ */ || c > 0x7f) cost += 4;
  }
  return cost;
}

function renderTex(body: string, displayMode: boolean, env: Env): string | null {
  const cost = texCost(body);
  if (cost > env.texBudget || TEX_MACRO_DEFINITION.test(body)) return null;
  env.texBudget -= cost;
  // KaTeX warns on the console for each character it has no metrics for (emoji, CJK): thousands of
  // lines for one message. Rendering is synchronous, so the console is quiet only for this call.
  const warn = console.warn;
  console.warn = () => undefined;
  try {
    return loadKatex().renderToString(body, { displayMode, throwOnError: true, strict: 'ignore', trust: false, output: 'htmlAndMathml' });
  } catch {
    return null;
  } finally {
    console.warn = warn;
  }
}

// A ```math block: each paragraph rendered in display mode; Zulip puts the lot in one <p>.
function mathBlockHtml(text: string, env: Env): string {
  const parts = text.split('\n\n').map((p) => renderTex(p, true, env) ?? `<span class="tex-error">${escapeCode(p).replace(/&#39;/g, '&#x27;')}</span>`);
  return `<p>${parts.join('\n\n')}</p>\n`;
}

const TIMESTAMP_RE = /<time:([^>]*?)>/y;
function timestamp(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x3c /* < */) return false;
  const m = matchAt(TIMESTAMP_RE, state);
  if (!m) return false;
  if (!silent) {
    const text = m[1]!;
    const iso = parseTimestamp(text, (state.env as Env).ctx.nowMs?.() ?? Date.now());
    pushHtml(
      state,
      iso === null
        ? `<span class="timestamp-error">Invalid time format: ${escapeText(text)}</span>`
        : `<time datetime="${iso}">${escapeText(text)}</time>`,
      state.pos + m[0].length,
    );
  } else {
    state.pos += m[0].length;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Text post-processing: autolinks, linkifiers, :emoji:, emoticons, unicode emoji

// zerver/lib/markdown/__init__.py: get_web_link_regex. Zulip takes the IANA TLD list minus a few
// common file extensions.
const TLD_FALSE_POSITIVES = new Set(['java', 'md', 'mov', 'py', 'zip']);

function buildWebLinkRegex(): RegExp {
  const inner = String.raw`[^\s()"]*`;
  const parenGroup = String.raw`[^\s()"]*?(?:\(%s\)[^\s()"]*?)*`;
  let nested = parenGroup;
  for (let i = 0; i < 6; i++) nested = nested.replace('%s', parenGroup);
  nested = nested.replace('%s', inner);
  const tlds = TLDS.filter((t) => /^[a-z0-9-]+$/.test(t) && !TLD_FALSE_POSITIVES.has(t)).sort((a, b) => b.length - a.length || (a < b ? -1 : 1)).join('|');
  // Python's \w is Unicode-aware; JavaScript's is not.
  const w = String.raw`\p{L}\p{N}\p{Mn}_`;
  const source =
    String.raw`(?<![^\s'"(,:<])(?<url>(?:(?:https?:\/\/[${w}.:@-]+?|(?:[${w}-]+\.)+(?:${tlds}))(?:\/${nested})?)` +
    String.raw`|(?:[${w}.-]+@[${w}.-]+\.[${w}]+)|(?:bitcoin:[13][a-km-zA-HJ-NP-Z1-9]{25,34}))(?=[!:;?),.'">]*(?:$|\s))`;
  return new RegExp(source, 'gu');
}
let webLinkRegex: RegExp | null = null;

const EMOJI_SYNTAX_RE = /:([\p{L}\p{N}\p{Mn}_+-]+):/gu;
const POSSIBLE_EMOJI_RE =
  /\p{RI}\p{RI}|\p{Emoji}(?:\p{Emoji_Modifier}|\uFE0F\u20E3?|[\u{E0020}-\u{E007E}]+\u{E007F})?(?:\u200D(?:\p{RI}\p{RI}|\p{Emoji}(?:\p{Emoji_Modifier}|\uFE0F\u20E3?|[\u{E0020}-\u{E007E}]+\u{E007F})?))*/gu;
const TEXT_PRESENTATION_RE = /^\P{Emoji_Presentation}\u20E3?$/u;
const EMOTICON_TERMINALS = ",.;?!()[] \"'\n\t";
const EMOTICON_RE = new RegExp(
  `(?<![^${EMOTICON_TERMINALS.replace(/[\]\\[]/g, '\\$&')}])(${Object.keys(EMOTICON_CONVERSIONS)
    .map((e) => e.replace(/[()|/]/g, '\\$&'))
    .join('|')})(?![^${EMOTICON_TERMINALS.replace(/[\]\\[]/g, '\\$&')}])`,
  'g',
);

function emojiSpan(code: string, name: string): string {
  const title = escapeAttr(name.replace(/_/g, ' '));
  return `<span aria-label="${title}" class="emoji emoji-${code}" role="img" title="${title}">:${escapeText(name)}:</span>`;
}
function imageEmoji(src: string, name: string): string {
  return `<img alt=":${escapeAttr(name)}:" class="emoji" src="${escapeAttr(src)}" title="${escapeAttr(name.replace(/_/g, ' '))}">`;
}

// A run of text being split into plain text and finished HTML. `before`/`after` stand for the
// neighbouring character: '' at the paragraph edge, '\n' at a line break, and a placeholder for
// any other element (as Python-Markdown's placeholders do, so patterns do not match across it).
interface Piece {
  text: string;
  html: string | null;
  link?: boolean;
  href?: string;
  before: string;
  after: string;
}
const PLACEHOLDER_BEFORE = '\u0003';
const PLACEHOLDER_AFTER = '\u0002';

type Finder = (s: string, from: number) => { start: number; end: number; html: string; href?: string } | null;

function splitPieces(pieces: Piece[], find: Finder, isLink: boolean): Piece[] {
  const out: Piece[] = [];
  for (const piece of pieces) {
    if (piece.html !== null || piece.text === '') {
      out.push(piece);
      continue;
    }
    const s = piece.before + piece.text + piece.after;
    const offset = piece.before.length;
    const limit = offset + piece.text.length;
    let pos = offset;
    let cursor = offset;
    let before = piece.before;
    for (;;) {
      const hit = find(s, pos);
      if (hit === null || hit.start >= limit) break;
      if (hit.start < offset || hit.end > limit) {
        pos = hit.start + 1;
        continue;
      }
      if (hit.start > cursor) out.push({ text: s.slice(cursor, hit.start), html: null, before, after: PLACEHOLDER_AFTER });
      out.push({ text: s.slice(hit.start, hit.end), html: hit.html, link: isLink, href: hit.href, before: '', after: '' });
      before = PLACEHOLDER_BEFORE;
      cursor = pos = hit.end;
      if (hit.end === hit.start) pos++;
    }
    if (cursor === offset) out.push(piece);
    else if (cursor < limit) out.push({ text: s.slice(cursor, limit), html: null, before, after: piece.after });
  }
  return out;
}

function linkHtml(ctx: RenderContext, url: string, text: string): { html: string; href: string } | null {
  const sanitized = sanitizeUrl(url);
  if (sanitized === null) return null;
  const href = rewriteLocalLink(ctx, sanitized);
  return { html: `<a href="${escapeAttr(href)}">${escapeText(text)}</a>`, href };
}

// Candidate words only: a URL holds no whitespace, so the regex never scans long text at once.
const MAX_LINK_WORD = 2048;
// Shared (the finder sets lastIndex before each scan and calls nothing that uses it while scanning).
const WORD_RE = /\S+/g;
function findWebLink(ctx: RenderContext): Finder {
  webLinkRegex ??= buildWebLinkRegex();
  const re = webLinkRegex;
  return (s, from) => {
    const wordRe = WORD_RE;
    wordRe.lastIndex = from;
    for (let w = wordRe.exec(s); w !== null; w = wordRe.exec(s)) {
      const word = w[0];
      if (word.length > MAX_LINK_WORD || !MAY_BE_WEB_LINK.test(word)) continue;
      const start = Math.max(w.index, from);
      // One character of context on each side is all the look-arounds need.
      const ctxStart = Math.max(0, start - 1);
      const sub = s.slice(ctxStart, w.index + word.length + 1);
      re.lastIndex = start - ctxStart;
      for (let m = re.exec(sub); m !== null; m = re.exec(sub)) {
        const url = m.groups!['url']!;
        const link = linkHtml(ctx, url, url);
        if (link === null) continue;
        return { start: ctxStart + m.index, end: ctxStart + m.index + url.length, html: link.html, href: link.href };
      }
    }
    return null;
  };
}

interface CompiledLinkifier {
  re: Re2;
  template: string;
  /** The program's size: what a character scanned for matches costs (see MAX_LINKIFIER_WORK_PER_MESSAGE). */
  size: number;
}

/**
 * Linkifier work a message may take, in characters scanned for matches times the program's size. RE2
 * bounds a scan by that product; in JavaScript the costliest programs linkifiers may have
 * (MAX_PROGRAM_SIZE) take up to ~0.08 µs a unit, so a message stops being linkified after ~25-30 ms
 * (bench/linkifiers.ts): the rest of its text stays plain, as math past its budget stays source.
 * Ordinary linkifiers on ordinary messages use a few percent of it. Deterministic (no clock), so a
 * message always renders the same.
 */
export const MAX_LINKIFIER_WORK_PER_MESSAGE = 400_000;

const BEFORE_MATCH = 'linkifier_before_match';
const ACTUAL_MATCH = 'linkifier_actual_match';
const AFTER_MATCH = 'linkifier_after_match';

/**
 * Zulip's prepare_linkifier_pattern: the pattern matches only at the start, after whitespace or an
 * opening delimiter, and not before a letter or digit; the middle group is the linked text. (RE2's \s
 * is ASCII, hence NEL and \pZ.) The pattern is RE2 syntax, used as written.
 */
export function prepareLinkifierPattern(pattern: string): string {
  return `(?P<${BEFORE_MATCH}>^|\\s|\\x{85}|\\pZ|['"\\(,:<])(?P<${ACTUAL_MATCH}>${pattern})(?P<${AFTER_MATCH}>$|[^\\pL\\pN])`;
}

// RE2 (linear time, src/lib/re2.ts), compiled once per pattern. A pattern RE2 refuses (one stored
// before patterns were checked with RE2) links nothing, as in Zulip.
function compileLinkifier(l: Linkifier): CompiledLinkifier | null {
  try {
    const re = compileRe2(prepareLinkifierPattern(l.pattern));
    return { re, template: l.url_template, size: re.programSize() };
  } catch {
    return null;
  }
}

/** A match's named groups for the URL template; groups that took no part are left out. */
function matchGroups(m: Re2Matcher): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(m.getNamedGroups())) if (value !== null) out[name] = value;
  return out;
}

function findLinkifier(env: Env, l: CompiledLinkifier): Finder {
  const ctx = env.ctx;
  let text: string | null = null;
  let m: Re2Matcher | null = null;
  /** Charges `cost` units; false once the message's linkifier budget is spent. */
  const afford = (cost: number): boolean => {
    if (env.linkifierBudget < cost) {
      env.linkifierBudget = 0;
      return false;
    }
    env.linkifierBudget -= cost;
    return true;
  };
  return (s, from) => {
    if (s !== text) {
      // Most text has no match: RE2's capture-free test says so faster than a search for groups (a
      // unit per character: it does not grow with the program as a search for groups does).
      if (!afford(s.length + 1) || !l.re.test(s)) return null;
      text = s;
      m = l.re.matcher(s);
    }
    const matcher = m as Re2Matcher;
    // The "before" group consumes a character, so start one back to let it see it.
    for (let pos = Math.max(0, from - 1); pos <= s.length; ) {
      const found = matcher.find(pos);
      // A search for groups scans up to its match's end (or the text's), each character costing up to
      // the program's size: charged as it happens.
      if (!afford(((found ? matcher.end() : s.length) - pos + 1) * l.size)) return null;
      if (!found) return null;
      const start = matcher.start(ACTUAL_MATCH);
      const end = matcher.end(ACTUAL_MATCH);
      if (end > start && start >= from) {
        const link = linkHtml(ctx, expandUriTemplate(l.template, matchGroups(matcher)), s.slice(start, end));
        if (link !== null) return { start, end, html: link.html, href: link.href };
      }
      pos = matcher.start() + 1;
    }
    return null;
  };
}

function findEmojiSyntax(ctx: RenderContext): Finder {
  return (s, from) => {
    EMOJI_SYNTAX_RE.lastIndex = from;
    const m = EMOJI_SYNTAX_RE.exec(s);
    if (m === null) return null;
    const name = m[1]!;
    const custom = ctx.realmEmojiByName?.(name) ?? null;
    let html: string;
    if (custom !== null) html = imageEmoji(custom.source_url, name);
    else if (name === 'zulip') html = imageEmoji(ZULIP_EMOJI_URL, name);
    else {
      const code = unicodeEmojiCode(name);
      // zulip-compat: an unknown :name: is consumed as plain text.
      html = code === null ? escapeText(m[0]) : emojiSpan(code, name);
    }
    return { start: m.index, end: m.index + m[0].length, html };
  };
}

const findEmoticon: Finder = (s, from) => {
  EMOTICON_RE.lastIndex = from;
  const m = EMOTICON_RE.exec(s);
  if (m === null) return null;
  const name = EMOTICON_CONVERSIONS[m[1]!]!.slice(1, -1);
  const code = unicodeEmojiCode(name);
  if (code === null) return { start: m.index, end: m.index + m[0].length, html: escapeText(m[0]) };
  return { start: m.index, end: m.index + m[0].length, html: emojiSpan(code, name) };
};

const findUnicodeEmoji: Finder = (s, from) => {
  POSSIBLE_EMOJI_RE.lastIndex = from;
  for (let m = POSSIBLE_EMOJI_RE.exec(s); m !== null; m = POSSIBLE_EMOJI_RE.exec(s)) {
    if (TEXT_PRESENTATION_RE.test(m[0])) continue;
    const code = emojiCodeForString(m[0]);
    const name = emojiNameForCode(code);
    if (name !== null) return { start: m.index, end: m.index + m[0].length, html: emojiSpan(code, name) };
  }
  return null;
};

const MAY_BE_WEB_LINK = /[.@:]/;
const NON_ASCII = /[^\x00-\x7f]/;

/** The character a text token's neighbour stands for at its edge (see Piece). */
function neighbour(t: Token | undefined, edge: 'before' | 'after'): string {
  if (t === undefined) return '';
  if (t.type === 'softbreak' || t.type === 'hardbreak') return '\n';
  if (t.type === 'text') return edge === 'before' ? t.content.slice(-1) : t.content.slice(0, 1);
  return edge === 'before' ? PLACEHOLDER_BEFORE : PLACEHOLDER_AFTER;
}

function processTextRun(state: StateCore, children: Token[], env: Env): Token[] {
  const out: Token[] = [];
  let linkDepth = 0;
  for (let i = 0; i < children.length; i++) {
    const tok = children[i]!;
    if (tok.type === 'link_open') linkDepth++;
    else if (tok.type === 'link_close') linkDepth--;
    if (tok.type !== 'text' || linkDepth > 0 || tok.content === '') {
      out.push(tok);
      continue;
    }
    // Each finder's matches lie inside the text, and each needs a character the text may lack: a web
    // link one of . @ : (a dot before its TLD, the @ of an address, the colon of a scheme), :emoji:
    // a colon, a unicode emoji a character past ASCII (the ASCII digits, # and * that \p{Emoji}
    // matches are text presentation alone). Most text runs need none of the finders.
    const text = tok.content;
    const web = MAY_BE_WEB_LINK.test(text);
    const colon = text.includes(':');
    const nonAscii = NON_ASCII.test(text);
    if (!web && !colon && !nonAscii && env.linkifiers.length === 0 && !env.ctx.translateEmoticons) {
      out.push(tok);
      continue;
    }
    let pieces: Piece[] = [{ text, html: null, before: neighbour(children[i - 1], 'before'), after: neighbour(children[i + 1], 'after') }];
    if (web) pieces = splitPieces(pieces, (env.findWebLink ??= findWebLink(env.ctx)), true);
    for (const l of env.linkifiers) pieces = splitPieces(pieces, findLinkifier(env, l), true);
    if (colon) pieces = splitPieces(pieces, (env.findEmojiSyntax ??= findEmojiSyntax(env.ctx)), false);
    if (env.ctx.translateEmoticons) pieces = splitPieces(pieces, findEmoticon, false);
    if (nonAscii) pieces = splitPieces(pieces, findUnicodeEmoji, false);
    if (pieces.length === 1 && pieces[0]!.html === null) {
      out.push(tok);
      continue;
    }
    for (const p of pieces) {
      const t = new state.Token(p.html === null ? 'text' : 'zulip_html', '', 0);
      t.content = p.html ?? p.text;
      t.meta = { isLink: p.link === true, href: p.href, text: p.text };
      out.push(t);
    }
  }
  return out;
}

/**
 * A topic's links for a message's `topic_links` (Zulip's topic_links): linkifier matches in
 * linkifier order, then bare URLs; overlapping matches lose to earlier ones; sorted by position.
 * URLs are not HTML-escaped here (clients escape them, as with Zulip).
 */
export function topicLinks(topic: string, linkifiers: readonly Linkifier[]): { url: string; text: string }[] {
  interface Match {
    url: string;
    text: string;
    index: number;
  }
  const matches: Match[] = [];
  const source = topic.slice(0, MAX_RENDER_INPUT);
  for (const l of compiledLinkifiers(linkifiers)) {
    const found: Match[] = [];
    const m = l.re.matcher(source);
    for (let pos = 0; pos < source.length; ) {
      if (!m.find(pos)) break;
      const text = m.group(ACTUAL_MATCH) ?? '';
      // The next search starts at the character after the match, which may begin the next one.
      const next = m.end() - (m.group(AFTER_MATCH) ?? '').length;
      pos = next > pos ? next : pos + 1;
      if (text === '') continue;
      found.push({ url: expandUriTemplate(l.template, matchGroups(m)), text, index: m.start() });
    }
    matches.push(...found.sort((a, b) => a.index - b.index));
  }
  webLinkRegex ??= buildWebLinkRegex();
  for (let pos = 0; pos < source.length; ) {
    const split = source.slice(pos).search(/[ !;),'"]/);
    const end = split === -1 ? source.length : pos + split;
    const segment = source.slice(pos, end);
    if (segment.length <= MAX_LINK_WORD) {
      webLinkRegex.lastIndex = 0;
      const m = webLinkRegex.exec(segment);
      if (m) {
        const text = m.groups!['url']!;
        let url = text;
        const parts = urlsplit(text);
        if (!parts.scheme) {
          if (!parts.netloc) {
            const slash = (parts.path + '/').indexOf('/');
            parts.netloc = parts.path.slice(0, slash);
            parts.path = parts.path.slice(slash);
          }
          url = urlunsplit({ ...parts, scheme: 'https' });
        }
        matches.push({ url, text, index: pos });
      }
    }
    pos = end + 1;
  }
  const applied: Match[] = [];
  const overlaps = (a: Match, b: Match): boolean =>
    (b.index <= a.index && a.index < b.index + b.text.length) || (a.index <= b.index && b.index < a.index + a.text.length);
  for (const m of matches) if (applied.every((old) => !overlaps(old, m))) applied.push(m);
  return applied.sort((a, b) => a.index - b.index).map(({ url, text }) => ({ url, text }));
}

// RFC 6570 expansion (levels 1–3, as Zulip's uri_template); unset variables are dropped.
export function expandUriTemplate(template: string, vars: Record<string, string | undefined>): string {
  const encode = (v: string, allowReserved: boolean): string =>
    allowReserved
      ? encodeURI(v).replace(/%25([0-9A-Fa-f]{2})/g, '%$1')
      : encodeURIComponent(v).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  return template.replace(/\{([+#./;?&]?)([^{}]*)\}/g, (_all, op: string, list: string) => {
    const names = list.split(',').map((n) => n.replace(/[*]$|:\d+$/, '').trim());
    const values = names.map((n) => [n, vars[n]] as const).filter(([, v]) => v !== undefined && v !== null) as [string, string][];
    if (values.length === 0) return '';
    const reserved = op === '+' || op === '#';
    const first = { '': '', '+': '', '#': '#', '.': '.', '/': '/', ';': ';', '?': '?', '&': '&' }[op] ?? '';
    const sep = { '': ',', '+': ',', '#': ',', '.': '.', '/': '/', ';': ';', '?': '&', '&': '&' }[op] ?? ',';
    const named = op === ';' || op === '?' || op === '&';
    return (
      first +
      values
        .map(([n, v]) => {
          const e = encode(v, reserved);
          return named ? (op === ';' && e === '' ? n : `${n}=${e}`) : e;
        })
        .join(sep)
    );
  });
}

// Whether the line starts with "1)"-style numbering (digits then ")"), without slicing the line:
// the list rule is asked about every line of every paragraph.
function hasParenOrderedMarker(state: StateBlock, line: number): boolean {
  let pos = state.bMarks[line]! + state.tShift[line]!;
  const max = Math.min(state.eMarks[line]!, pos + 10);
  const start = pos;
  while (pos < max && state.src.charCodeAt(pos) >= 0x30 && state.src.charCodeAt(pos) <= 0x39) pos++;
  return pos > start && pos < max && state.src.charCodeAt(pos) === 0x29 /* ) */;
}
const INTERRUPTING_ITEM_RE = /^\d\.[ \t]+\S/;

// ---------------------------------------------------------------------------------------------
// The markdown-it instance (configured once; per-render data travels in env)

// The built-in rule we wrap (markdown-it keeps them in the undocumented-but-stable __rules__).
const CR_OR_NUL = /[\r\0]/;

function ruleFn<T>(ruler: MarkdownIt.Ruler<T>, name: string): T {
  const rules = (ruler as unknown as { __rules__: { name: string; fn: T }[] }).__rules__;
  const rule = rules.find((r) => r.name === name);
  if (!rule) throw new Error(`markdown-it has no rule ${name}`);
  return rule.fn;
}

function buildMarkdownIt(): MarkdownIt {
  const MarkdownItClass = loadMarkdownIt();
  const md = new MarkdownItClass('default', { html: false, breaks: true, linkify: false, typographer: false });
  // zulip-compat: Zulip has no setext headings, reference links, images, <autolinks>, or
  // backslash escapes; raw HTML is off.
  md.disable(['lheading', 'reference', 'image', 'autolink', 'escape', 'html_block', 'html_inline', 'fence', 'strikethrough']);
  md.block.ruler.before('code', 'zulip_fence', zulipFence, { alt: ['paragraph', 'reference', 'blockquote', 'list'] });

  md.block.ruler.at('blockquote', zulipBlockquote, { alt: ['paragraph', 'reference', 'blockquote', 'list'] });

  // zulip-compat: like Python-Markdown's nl2br, a paragraph keeps the spaces at its end and
  // around its line breaks (CommonMark trims them).
  // zulip-compat: in a list item's first paragraph, the lines after the marker's line keep their
  // indentation beyond the list's own ("* a\n  b" → "a<br>\n  b"): Python-Markdown's get_items
  // appends them to the item as they stand, and Zulip's 2-space list detab removes only the
  // enclosing lists' indentation (markdown-it would strip up to the item's content column).
  const paragraph = ruleFn(md.block.ruler, 'paragraph');
  md.block.ruler.at('paragraph', (state, startLine, endLine, silent) => {
    const item = state.tokens[state.tokens.length - 1];
    const opensItem = state.parentType === 'list' && item?.type === 'list_item_open' && item.map?.[0] === startLine;
    if (!paragraph(state, startLine, endLine, silent)) return false;
    const inline = state.tokens[state.tokens.length - 2];
    if (inline?.type !== 'inline') return true;
    if (opensItem && state.line > startLine + 1 && state.listIndent >= 0) {
      const first = state.getLines(startLine, startLine + 1, state.blkIndent, false);
      inline.content = first.replace(/^\s+/, '') + '\n' + state.getLines(startLine + 1, state.line, state.listIndent, false);
    } else {
      inline.content = state.getLines(startLine, state.line, state.blkIndent, false).replace(/^\s+/, '');
    }
    return true;
  });
  md.inline.ruler.at('newline', (state, silent) => {
    if (state.src.charCodeAt(state.pos) !== 0x0a) return false;
    if (!silent) state.push('softbreak', 'br', 0);
    state.pos++;
    return true;
  });

  // zulip-compat: an item like "2. x" may interrupt a paragraph (CommonMark allows only "1."),
  // which Zulip's nested numbered lists need. And only "1." numbers an item: Python-Markdown's
  // (sane) OListProcessor has no "1)", so such a line is text, inside an item a continuation line.
  const list = ruleFn(md.block.ruler, 'list');
  md.block.ruler.at(
    'list',
    (state, startLine, endLine, silent) => {
      if (hasParenOrderedMarker(state, startLine)) return false;
      if (!silent || state.parentType !== 'paragraph' || !INTERRUPTING_ITEM_RE.test(lineText(state, startLine))) {
        return list(state, startLine, endLine, silent);
      }
      const parentType = state.parentType;
      state.parentType = 'list';
      try {
        return list(state, startLine, endLine, silent);
      } finally {
        state.parentType = parentType;
      }
    },
    { alt: ['paragraph', 'reference', 'blockquote'] },
  );

  md.inline.ruler.at('backticks', backticks);
  md.inline.ruler.before('emphasis', 'zulip_strikethrough', strikethrough);
  md.inline.ruler.before('emphasis', 'zulip_user_mention', userMention);
  md.inline.ruler.before('emphasis', 'zulip_stream_link', streamLink);
  md.inline.ruler.before('emphasis', 'zulip_group_mention', groupMention);
  md.inline.ruler.before('emphasis', 'zulip_timestamp', timestamp);
  md.inline.ruler.before('emphasis', 'zulip_tex', tex);
  // zulip-compat: no _underscore_ emphasis.
  const emphasis = ruleFn(md.inline.ruler, 'emphasis');
  md.inline.ruler.at('emphasis', (state, silent) => state.src.charCodeAt(state.pos) !== 0x5f && emphasis(state, silent));
  // zulip-compat: *emphasis* and **strong** do not span lines.
  md.inline.ruler2.before('emphasis', 'zulip_single_line_emphasis', (state) => {
    const lists = [state.delimiters, ...state.tokens_meta.map((m) => m?.delimiters ?? [])];
    for (const delimiters of lists) {
      for (const d of delimiters) {
        if (d.marker !== 0x2a || d.end === -1 || !d.open) continue;
        const closer = delimiters[d.end];
        if (!closer) continue;
        for (let t = d.token; t < closer.token; t++) {
          const type = state.tokens[t]!.type;
          if (type === 'softbreak' || type === 'hardbreak') {
            d.end = -1;
            break;
          }
        }
      }
    }
    return false;
  });

  // markdown-it's normalize rewrites the whole source (its newline pattern matches every \n) to turn
  // \r\n and \r into \n and NUL into U+FFFD: without either there is nothing to change.
  const normalize = ruleFn(md.core.ruler, 'normalize');
  md.core.ruler.at('normalize', (state) => {
    if (CR_OR_NUL.test(state.src)) normalize(state);
  });

  // Links: Zulip's sanitiser decides which URLs may become links.
  md.normalizeLink = (url) => url;
  md.validateLink = (url) => sanitizeUrl(url.trim()) !== null;

  // Inline parsing with knowledge of whether we are inside a quote (mentions there are silent).
  md.core.ruler.at('inline', (state) => {
    const env = state.env as Env;
    let depth = 0;
    for (const tok of state.tokens) {
      if (tok.type === 'blockquote_open') depth++;
      else if (tok.type === 'blockquote_close') depth--;
      else if (tok.type === 'inline') {
        env.inQuote = depth > 0;
        state.md.inline.parse(tok.content, state.md, state.env, tok.children ?? (tok.children = []));
      }
    }
    env.inQuote = false;
  });

  md.core.ruler.push('zulip_text', (state) => {
    const env = state.env as Env;
    for (const tok of state.tokens) {
      if (tok.type !== 'inline' || !tok.children) continue;
      tok.children = tok.children.filter((t) => t.type !== 'text' || t.content !== '');
      fixLinks(state, tok, env);
      fixStrongEm(tok.children);
      tok.children = processTextRun(state, tok.children, env);
    }
  });

  const r = md.renderer.rules;
  r['text'] = (tokens, idx) => escapeText(tokens[idx]!.content);
  r['code_inline'] = (tokens, idx) => `<code>${escapeText(tokens[idx]!.content)}</code>`;
  r['zulip_html'] = (tokens, idx) => tokens[idx]!.content;
  r['zulip_inline_image'] = (tokens, idx) => tokens[idx]!.content;
  r['zulip_code'] = (tokens, idx, _options, env: Env) =>
    tokens[idx]!.info === 'math' ? mathBlockHtml(tokens[idx]!.content, env) : codeBlockHtml(tokens[idx]!.content, tokens[idx]!.info || null);
  r['code_block'] = (tokens, idx) => codeBlockHtml(trimNewlines(tokens[idx]!.content), null);
  r['spoiler_open'] = () => '<div class="spoiler-block"><div class="spoiler-header">\n';
  r['spoiler_content'] = () => '</div><div class="spoiler-content" aria-hidden="true">\n';
  r['spoiler_close'] = () => '</div></div>\n';
  // zulip-compat: a nested list follows its item's text directly ("<li>text<ul>").
  r['bullet_list_open'] = () => '<ul>\n';
  r['ordered_list_open'] = (tokens, idx) => {
    const start = tokens[idx]!.attrGet('start');
    return start === null ? '<ol>\n' : `<ol start="${escapeAttr(String(start))}">\n`;
  };
  r['th_open'] = r['td_open'] = (tokens, idx) => {
    const t = tokens[idx]!;
    const style = t.attrGet('style');
    const align = style?.match(/text-align:(\w+)/)?.[1];
    return `<${t.tag}${align ? ` style="text-align: ${align};"` : ''}>`;
  };
  return md;
}

// Links from [text](url): Zulip's sanitised href, local links made relative, and the URL as
// text when the label is empty.
function fixLinks(state: StateCore, inline: Token, env: Env): void {
  const children = inline.children!;
  for (let i = 0; i < children.length; i++) {
    const tok = children[i]!;
    if (tok.type !== 'link_open') continue;
    const raw = tok.attrGet('href') ?? '';
    const href = rewriteLocalLink(env.ctx, sanitizeUrl(raw.trim()) ?? '');
    tok.attrSet('href', href);
    tok.meta = { href };
    let close = i + 1;
    while (close < children.length && children[close]!.type !== 'link_close') close++;
    const label = children.slice(i + 1, close);
    if (label.every((t) => t.type === 'text' && t.content.trim() === '')) {
      const text = new state.Token('text', '', 0);
      text.content = href;
      children.splice(i + 1, close - i - 1, text);
    }
  }
}

// zulip-compat: ***x*** is <strong><em>x</em></strong> (CommonMark nests it the other way).
function fixStrongEm(children: Token[]): void {
  for (let i = 0; i + 1 < children.length; i++) {
    if (children[i]!.type !== 'em_open' || children[i + 1]!.type !== 'strong_open') continue;
    let depth = 0;
    for (let j = i + 1; j + 1 < children.length; j++) {
      const t = children[j]!;
      if (t.type === 'strong_open') depth++;
      else if (t.type === 'strong_close' && --depth === 0) {
        if (children[j + 1]!.type === 'em_close') {
          [children[i], children[i + 1]] = [children[i + 1]!, children[i]!];
          [children[j], children[j + 1]] = [children[j + 1]!, children[j]!];
        }
        break;
      }
    }
  }
}

// markdown-it and KaTeX load on first use (src/lazy.ts): a server that renders nothing (or not yet)
// starts faster and smaller.
let mdInstance: MarkdownIt | null = null;
const getMd = (): MarkdownIt => (mdInstance ??= buildMarkdownIt());

// Zulip's MarkdownListPreprocessor: a list directly under a paragraph (or a list of the other
// kind) still starts a list, so insert the blank line Markdown wants. Zulip also nests list
// items by 2-space steps ("1. a" then "  2. b" is nested); CommonMark wants the parent's content
// column, so such items are moved right to it. Fenced code is left alone.
const LI_RE = /^[ ]*([*+-]|\d\.)[ ]+(.*)/;
const LIST_ITEM_RE = /^( *)([*+-]|\d{1,9}\.)( +)(?=\S)/;
// A named function, not an arrow per line: each closure made per line cost an allocation (and under
// tsx a defineProperty for its name).
function inCodeFence(open: readonly { code: boolean }[]): boolean {
  for (const f of open) if (f.code) return true;
  return false;
}

// Whether any line may be a list item (LI_RE or LIST_ITEM_RE): without one, preprocess changes nothing.
const MAYBE_LIST_ITEM_RE = /^ *(?:[*+-]|\d{1,9}\.) /m;
const THEMATIC_BREAK_RE = /^ *([*_-])( *\1){2,} *$/;
const BULLET_RE = /^[*+-]$/;

function preprocess(content: string): string {
  if (!MAYBE_LIST_ITEM_RE.test(content)) return content;
  const lines = content.split('\n');
  const out: string[] = [];
  const openFences: { fence: string; code: boolean }[] = [];
  let items: { indent: number; content: number; marker: string }[] = [];
  let previousBlank = false;
  let liLine: string | null = null;
  let liMatch: RegExpExecArray | null = null;
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!;
    const inCode = inCodeFence(openFences);
    const f = FENCE_RE.exec(line);
    if (f) {
      const lang = f[2] ?? null;
      const last = openFences[openFences.length - 1];
      if (!lang && last && last.fence === f[1]) openFences.pop();
      else openFences.push({ fence: f[1]!, code: !(lang === 'quote' || lang === 'quoted') });
      items = [];
    } else if (!inCode) {
      const item = LIST_ITEM_RE.exec(line);
      const indent = item ? item[1]!.length : 0;
      if (item && (items.length > 0 || indent < 4) && !THEMATIC_BREAK_RE.test(line)) {
        let sibling: (typeof items)[number] | undefined;
        while (items.length > 0 && items[items.length - 1]!.indent >= indent) {
          const popped = items.pop()!;
          if (popped.indent === indent) sibling = popped;
        }
        const parent = items[items.length - 1];
        const shifted = parent && indent < parent.content ? parent.content : indent;
        let marker = item[2]!;
        // zulip-compat: "* a" then "- b" is one list (CommonMark starts a new one).
        if (sibling && BULLET_RE.test(marker) && BULLET_RE.test(sibling.marker)) marker = sibling.marker;
        line = ' '.repeat(shifted) + marker + line.slice(indent + item[2]!.length);
        items.push({ indent, content: shifted + marker.length + Math.min(item[3]!.length, 4), marker });
      } else if (line.trim() !== '' && previousBlank && !line.startsWith(' ')) {
        items = [];
      }
    }
    previousBlank = line.trim() === '';
    out.push(line);
    if (i + 1 >= lines.length || line === '' || inCodeFence(openFences)) continue;
    // The next line's match is this line's in the next round, unless the round rewrites the line.
    const li1 = line === liLine ? liMatch : LI_RE.exec(line);
    const li2 = LI_RE.exec(lines[i + 1]!);
    liLine = lines[i + 1]!;
    liMatch = li2;
    if ((li2 && !li1) || (li1 && li2 && (li1[1]!.length === 1) !== (li2[1]!.length === 1))) out.push('');
  }
  return out.join('\n');
}

/**
 * `s` without its leading (unless `leading` is false) and trailing newlines: /^\n+|\n+$/g in linear
 * time. The regular expression retried \n+ from every newline of a run inside the text, so a code
 * block with 10,000 blank lines in it took ~60 ms at each of the three places that trimmed it.
 */
function trimNewlines(s: string, opts: { leading?: boolean } = {}): string {
  let start = 0;
  let end = s.length;
  if (opts.leading !== false) while (start < end && s.charCodeAt(start) === 10) start++;
  while (end > start && s.charCodeAt(end - 1) === 10) end--;
  return s.slice(start, end);
}

// Compiled linkifiers by list (patterns and templates, in order). compileRe2 remembers 128 patterns,
// oldest first out: an organization with more linkifiers than that compiled every one again for each
// message and topic (~0.3 ms each: 130 linkifiers made a send 60 ms, 1000 made it 350 ms, all
// requests waiting). A list stays compiled while it is in use, whatever its length; a memo of a pure
// function, shared by every App in the process, a few lists at most.
const compiledLists = new Map<string, readonly CompiledLinkifier[]>();
const MAX_COMPILED_LISTS = 8;

// A frozen list (an organization's, remembered by lib/linkifiers.ts until the table changes) finds its
// compiled list without the key being made again for every message.
const compiledByList = new WeakMap<readonly Linkifier[], readonly CompiledLinkifier[]>();

function compiledLinkifiers(linkifiers: readonly Linkifier[]): readonly CompiledLinkifier[] {
  if (linkifiers.length === 0) return [];
  const frozen = Object.isFrozen(linkifiers) && linkifiers.every((l) => Object.isFrozen(l));
  if (frozen) {
    const known = compiledByList.get(linkifiers);
    if (known !== undefined) return known;
  }
  const key = JSON.stringify(linkifiers.map((l) => [l.pattern, l.url_template]));
  let list = compiledLists.get(key);
  if (list === undefined) {
    list = linkifiers.map(compileLinkifier).filter((c): c is CompiledLinkifier => c !== null);
    if (compiledLists.size >= MAX_COMPILED_LISTS) compiledLists.delete(compiledLists.keys().next().value as string);
    compiledLists.set(key, list);
  }
  if (frozen) compiledByList.set(linkifiers, list);
  return list;
}

function linkifiersFor(ctx: RenderContext): readonly CompiledLinkifier[] {
  return compiledLinkifiers(ctx.linkifiers ?? []);
}

const IMAGE_EXTENSIONS = ['.bmp', '.gif', '.jpe', '.jpeg', '.jpg', '.png', '.webp'];
// Zulip previews at most this many distinct URLs; beyond it nothing is previewed.
const INLINE_PREVIEW_LIMIT = 24;

function collectLinks(tokens: Token[], ctx: RenderContext, result: RenderResult): void {
  const all: string[] = [];
  for (const tok of tokens) {
    if (tok.type !== 'inline' || !tok.children) continue;
    for (const child of tok.children) {
      if (child.type === 'link_open') all.push(child.attrGet('href') ?? '');
      else if (child.type === 'zulip_html' && child.meta?.isLink) {
        all.push((child.meta.href as string | undefined) ?? /href="([^"]*)"/.exec(child.content)?.[1]?.replace(/&amp;/g, '&') ?? '');
      }
    }
  }
  result.hasLink = all.length > 0;
  if (all.length === 0) return;
  let realmHost: string | null = null;
  if (ctx.realmUrl) {
    realmUrlParts(ctx.realmUrl);
    realmHost = lastRealmHost;
  }
  const seen = new Set<string>();
  for (const url of all) {
    if (seen.has(url)) continue;
    seen.add(url);
    const parts = urlsplit(url.startsWith('user_uploads/') ? '/' + url : url);
    if (parts.netloc !== '' && parts.netloc.toLowerCase() !== realmHost) continue;
    if (!parts.path.startsWith('/user_uploads/')) continue;
    result.linkedUploadPaths.push(parts.path.slice('/user_uploads/'.length));
  }
  result.hasAttachment = result.linkedUploadPaths.length > 0;
}

// ---------------------------------------------------------------------------------------------
// Inline image previews (Zulip's InlineInterestingLinkProcessor, for images): each distinct image
// link outside quotes gets `<div class="message_inline_image"><a href=LINK title=TEXT><img
// src=IMAGE></a></div>` after its paragraph (replacing a paragraph that is nothing but the bare
// link), at the end of its list item, or, for a link inside other markup (emphasis, a heading, a
// table), at the end of the message. No thumbnails: the image is the file itself, as Zulip without
// thumbnailing; and no image proxy (Zulip's camo): an external image's src is its own URL, as
// Zulip's without CAMO_URI. Dropbox, YouTube, Twitter and video previews are not made.

interface FoundLink {
  url: string;
  /** Zulip's a.text: the label's text before any markup in it (null if it starts with markup). */
  text: string | null;
  inQuote: boolean;
  /** Index of the inline token in the block tokens, and of the link's first and last child. */
  inline: number;
  start: number;
  end: number;
  /** Markup the link is nested in within its block (0: directly in the paragraph or list item). */
  depth: number;
}

function findLinks(tokens: Token[]): FoundLink[] {
  const found: FoundLink[] = [];
  let quote = 0;
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i]!;
    if (tok.type === 'blockquote_open') quote++;
    else if (tok.type === 'blockquote_close') quote--;
    if (tok.type !== 'inline' || !tok.children) continue;
    const children = tok.children;
    let depth = 0;
    for (let j = 0; j < children.length; j++) {
      const child = children[j]!;
      if (child.type === 'link_open') {
        let end = j + 1;
        while (end < children.length && children[end]!.type !== 'link_close') end++;
        let text: string | null = null;
        for (let k = j + 1; k < end && children[k]!.type === 'text'; k++) text = (text ?? '') + children[k]!.content;
        found.push({ url: child.attrGet('href') ?? '', text, inQuote: quote > 0, inline: i, start: j, end, depth });
        j = end;
        continue;
      }
      if (child.type === 'zulip_html' && child.meta?.isLink) {
        const url = (child.meta.href as string | undefined) ?? /href="([^"]*)"/.exec(child.content)?.[1]?.replace(/&amp;/g, '&') ?? '';
        found.push({ url, text: (child.meta.text as string | undefined) ?? url, inQuote: quote > 0, inline: i, start: j, end: j, depth });
        continue;
      }
      depth += child.nesting;
    }
  }
  return found;
}

function isImageUrl(url: string): boolean {
  const { netloc, path } = urlsplit(url);
  // zulip-compat: pasteboard.co pages end in image extensions but are HTML.
  if (netloc === 'pasteboard.co') return false;
  const lower = path.toLowerCase();
  return IMAGE_EXTENSIONS.some((ext) => lower.endsWith(ext));
}

/** Zulip's corrected_image_source: Wikipedia file pages and linx.li links point at the image itself. */
function correctedImageSource(url: string): string | null {
  const parts = urlsplit(url);
  if (parts.netloc.toLowerCase().endsWith('.wikipedia.org') && parts.path.startsWith('/wiki/File:')) {
    return urlunsplit({ ...parts, path: parts.path.replace('/wiki/File:', '/wiki/Special:FilePath/File:') });
  }
  if (parts.netloc === 'linx.li') return 'https://linx.li/s' + parts.path;
  return null;
}

/** Zulip's get_actual_image_url: a GitHub "blob" page shows its raw file. */
function actualImageUrl(url: string): string {
  const parts = urlsplit(url);
  if (parts.netloc === 'github.com' || parts.netloc.endsWith('.github.com')) {
    const segments = parts.path.split('/');
    if (segments.length > 3 && segments[3] === 'blob') return 'https://raw.githubusercontent.com' + [...segments.slice(0, 3), ...segments.slice(4)].join('/');
  }
  return url;
}

const isTextLike = (t: Token | undefined) => t !== undefined && (t.type === 'text' || t.type === 'softbreak');

/** Adds the previews to `tokens` (after links were collected: a replaced paragraph's link still counts). */
function inlineImages(tokens: Token[], ctx: RenderContext, result: RenderResult): void {
  if (ctx.inlineImagePreview === false || !result.hasLink) return;
  const found = findLinks(tokens);
  const previewable = new Set(found.filter((f) => !f.inQuote).map((f) => f.url));
  if (previewable.size === 0 || previewable.size > INLINE_PREVIEW_LIMIT) return;
  const TokenClass = (tokens[0] as Token).constructor as new (type: string, tag: string, nesting: number) => Token;
  // Where previews go: after a token (a paragraph's close), before one (a list item's close), at the end.
  const after = new Map<number, Token[]>();
  const before = new Map<number, Token[]>();
  const atEnd: Token[] = [];
  const dropParagraphs = new Set<number>();
  const dropLinks: FoundLink[] = [];
  const processed = new Set<string>();
  for (const f of found) {
    if (f.inQuote || processed.has(f.url)) continue;
    processed.add(f.url);
    if (!isImageUrl(f.url)) continue;
    let link = f.url;
    let text = f.text;
    const corrected = correctedImageSource(link);
    if (corrected !== null) link = text = corrected;
    const urlEqText = text === null || text === link;
    const preview = new TokenClass('zulip_inline_image', 'div', 0);
    preview.block = true;
    preview.content =
      `<div class="message_inline_image"><a href="${escapeAttr(link)}"${urlEqText ? '' : ` title="${escapeAttr(text as string)}"`}>` +
      `<img src="${escapeAttr(actualImageUrl(link))}"></a></div>`;
    result.hasImage = true;
    const open = tokens[f.inline - 1];
    const children = tokens[f.inline]!.children!;
    if (f.depth !== 0 || !open || open.type !== 'paragraph_open') {
      atEnd.push(preview);
    } else if (open.hidden) {
      // A tight list item: the preview ends the item; a bare link is replaced by it.
      let close = f.inline + 2;
      for (let nest = 0; close < tokens.length; close++) {
        const t = tokens[close]!;
        if (t.type === 'list_item_close' && nest === 0) break;
        if (t.type === 'list_item_open') nest++;
        else if (t.type === 'list_item_close') nest--;
      }
      if (close >= tokens.length) {
        atEnd.push(preview);
        continue;
      }
      if (!before.has(close)) before.set(close, []);
      before.get(close)!.push(preview);
      if (!isTextLike(children[0]) && !isTextLike(children[f.end + 1]) && urlEqText) dropLinks.push(f);
    } else {
      const close = f.inline + 1;
      if (!after.has(close)) after.set(close, []);
      after.get(close)!.push(preview);
      if (f.start === 0 && f.end === children.length - 1 && urlEqText) dropParagraphs.add(f.inline - 1);
    }
  }
  if (after.size === 0 && before.size === 0 && atEnd.length === 0) return;
  for (const f of dropLinks.sort((a, b) => b.start - a.start)) tokens[f.inline]!.children!.splice(f.start, f.end - f.start + 1);
  const out: Token[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const pending = before.get(i);
    if (pending) out.push(...pending);
    if (dropParagraphs.has(i)) {
      out.push(...(after.get(i + 2) ?? []));
      i += 2;
      continue;
    }
    out.push(tokens[i]!);
    const next = after.get(i);
    if (next) out.push(...next);
  }
  out.push(...atEnd);
  tokens.length = 0;
  tokens.push(...out);
}

function emptyResult(): RenderResult {
  return {
    html: '',
    mentionedUserIds: new Set(),
    mentionedGroupIds: new Set(),
    wildcardChannel: false,
    wildcardTopic: false,
    hasLink: false,
    hasImage: false,
    hasAttachment: false,
    linkedUploadPaths: [],
  };
}

/**
 * Renders a message's Markdown to Zulip-compatible HTML and reports what it mentions and links.
 * Synchronous and total: it never throws; input past MAX_RENDER_INPUT characters is cut.
 */
export function renderMarkdown(content: string, ctx: RenderContext): RenderResult {
  const result = emptyResult();
  let source = String(content ?? '').slice(0, MAX_RENDER_INPUT);
  if (source.includes('\r')) source = source.replace(/\r\n?/g, '\n');
  const env: Env = {
    ctx,
    inQuote: false,
    quoteScan: null,
    linkifiers: [],
    mentionedUserIds: result.mentionedUserIds,
    mentionedGroupIds: result.mentionedGroupIds,
    wildcardChannel: false,
    wildcardTopic: false,
    texBudget: MAX_TEX_COST_PER_MESSAGE,
    linkifierBudget: MAX_LINKIFIER_WORK_PER_MESSAGE,
  };
  try {
    env.linkifiers = linkifiersFor(ctx);
    const md = getMd();
    const tokens = md.parse(preprocess(source), env);
    collectLinks(tokens, ctx, result);
    inlineImages(tokens, ctx, result);
    result.html = trimNewlines(md.renderer.render(tokens, md.options, env), { leading: false });
    if (result.html.length > MAX_RENDER_OUTPUT) throw new Error(`rendered content exceeds ${MAX_RENDER_OUTPUT} characters`);
    result.wildcardChannel = env.wildcardChannel;
    result.wildcardTopic = env.wildcardTopic;
    return result;
  } catch (err) {
    try {
      ctx.onError?.(err);
    } catch {
      // The fallback below is still the answer.
    }
    // A bug here must not lose the message: fall back to escaped text.
    const fallback = emptyResult();
    const text = source.trim();
    fallback.html = text === '' ? '' : `<p>${escapeText(text).replace(/\n/g, '<br>\n')}</p>`;
    return fallback;
  }
}
