// Whether a message's HTML from an export can be served as it is. Parley's web client puts a
// message's rendered_content into the page as HTML, trusting that the server made it (every text
// escaped by construction: src/lib/markdown.ts). An imported export's rendered_content was made
// elsewhere, by a Zulip server or by whoever wrote the file: HTML that is not plainly of the kind
// Zulip's Markdown processor writes is not kept, and the importer renders the message's Markdown
// again instead (Parley's own output passes: test/import/rendered-html.test.ts).
//
// The check is an allowlist: the tags Zulip's Markdown and KaTeX write, their attributes, links to
// the renderer's schemes and sources over http(s) or to this server only, inline styles of plain
// lengths and colours only, and no raw "<" that is not such a tag (text escapes it). Whatever else (a script, an event
// handler, a form, an iframe, a javascript: link, an entity hiding a scheme, a comment) fails it.
import { ALLOWED_SCHEMES } from '../lib/markdown';

const HTML_TAGS = [
  'a', 'audio', 'b', 'blockquote', 'br', 'code', 'del', 'div', 'em', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'i', 'img', 'li',
  'ol', 'p', 'pre', 's', 'span', 'strong', 'sub', 'sup', 'table', 'tbody', 'td', 'th', 'thead', 'time', 'tr', 'ul', 'video',
];
// KaTeX's MathML and the SVG it draws stretchy symbols with.
const MATH_TAGS = [
  'math', 'semantics', 'annotation', 'mrow', 'mi', 'mn', 'mo', 'ms', 'mtext', 'mspace', 'msup', 'msub', 'msubsup', 'mfrac', 'msqrt',
  'mroot', 'mover', 'munder', 'munderover', 'mtable', 'mtr', 'mtd', 'mstyle', 'mpadded', 'mphantom', 'menclose', 'svg', 'path', 'line',
];
const TAGS = new Set([...HTML_TAGS, ...MATH_TAGS]);
const MATH = new Set(MATH_TAGS);

const GLOBAL_ATTRIBUTES = new Set(['class', 'title', 'style', 'aria-hidden', 'aria-label', 'role', 'dir', 'lang']);
const TAG_ATTRIBUTES: Record<string, ReadonlySet<string>> = {
  a: new Set(['href', 'target', 'rel']),
  img: new Set(['src', 'alt', 'width', 'height', 'loading']),
  video: new Set(['src', 'controls', 'preload', 'muted']),
  audio: new Set(['src', 'controls', 'preload']),
  time: new Set(['datetime']),
  ol: new Set(['start']),
  th: new Set(['align', 'colspan', 'rowspan']),
  td: new Set(['align', 'colspan', 'rowspan']),
};
const MATH_ATTRIBUTES = new Set([
  'xmlns', 'display', 'encoding', 'mathvariant', 'stretchy', 'fence', 'separator', 'lspace', 'rspace', 'width', 'height', 'depth',
  'voffset', 'accent', 'accentunder', 'columnalign', 'rowspacing', 'columnspacing', 'rowlines', 'columnlines', 'scriptlevel',
  'displaystyle', 'linethickness', 'minsize', 'maxsize', 'movablelimits', 'symmetric', 'largeop', 'notation', 'mathcolor',
  'mathbackground', 'viewbox', 'preserveaspectratio', 'd', 'x1', 'x2', 'y1', 'y2', 'stroke-width', 'fill', 'stroke',
]);
const URL_ATTRIBUTES = new Set(['href', 'src']);
const CSS_PROPERTIES = new Set([
  'height', 'width', 'min-width', 'max-width', 'min-height', 'max-height', 'vertical-align', 'margin', 'margin-left', 'margin-right',
  'margin-top', 'margin-bottom', 'padding-left', 'padding-right', 'padding-top', 'padding-bottom', 'top', 'bottom', 'left', 'right',
  'border-bottom-width', 'border-top-width', 'border-right-width', 'border-left-width', 'border-style', 'border-bottom-style',
  'border-top-style', 'border-right-style', 'border-left-style', 'border-width', 'border-color', 'text-align', 'color',
  'background-color', 'font-size',
]);

// A tag: name, then attributes (name, or name=value quoted or not), then an optional "/".
const TAG = /<(\/?)([A-Za-z][A-Za-z0-9]*)((?:\s+[^\s"'<>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'<>=`]+))?)*)\s*(\/?)>/y;
const ATTRIBUTE = /\s+([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'<>=`]+)))?/gy;

/** Decodes the character references an attribute value may hold; null if one is of a kind not decoded here. */
function decodeAttribute(v: string): string | null {
  let bad = false;
  const out = v.replace(/&(#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);?/g, (_, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : ((bad = true), '');
    }
    const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };
    if (ref in named) return named[ref];
    // HTML knows more than two thousand names (&colon; is ":"): a name not decoded here is refused.
    bad = true;
    return '';
  });
  return bad ? null : out;
}

/**
 * A link to a scheme Parley's renderer keeps (Zulip's list: http(s), mailto, tel, ...), or a source
 * (image, video) over http(s); either may be a path of this server (relative, or a fragment).
 */
function safeUrl(raw: string, link: boolean): boolean {
  // Browsers drop ASCII whitespace and control characters inside a scheme ("java\tscript:").
  const url = raw.replace(/[\u0000-\u0020\u007f]+/g, '');
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(url);
  if (!scheme) return true; // relative: a path, "//host/..." (http or https), "?query" or "#fragment"
  const s = scheme[1].toLowerCase();
  return link ? ALLOWED_SCHEMES.has(s) : s === 'http' || s === 'https';
}

/** An inline style of plain lengths, keywords and colours (no url(), no expressions, no escapes). */
function safeStyle(style: string): boolean {
  for (const decl of style.split(';')) {
    if (decl.trim() === '') continue;
    const colon = decl.indexOf(':');
    if (colon < 0) return false;
    const prop = decl.slice(0, colon).trim().toLowerCase();
    const value = decl.slice(colon + 1).trim();
    // KaTeX sets position: relative on some symbols; fixed or absolute could lay an element over the page.
    if (prop === 'position') {
      if (value.toLowerCase() !== 'relative') return false;
      continue;
    }
    if (!CSS_PROPERTIES.has(prop) || !/^[-+#%.,\s0-9A-Za-z]*$/.test(value)) return false;
  }
  return true;
}

/** Whether `html` is of the kind Zulip's Markdown processor writes (see the header). */
export function isSafeRenderedHtml(html: string): boolean {
  let at = 0;
  for (;;) {
    const lt = html.indexOf('<', at);
    if (lt < 0) break;
    // Text between tags: a raw ">" is harmless, and "&" starts references the browser decodes as text.
    TAG.lastIndex = lt;
    const m = TAG.exec(html);
    if (!m) return false; // a "<" text would have escaped, a comment, a doctype, a CDATA section
    const name = m[2].toLowerCase();
    if (!TAGS.has(name)) return false;
    if (m[1] === '' && m[3] !== '') {
      const own = TAG_ATTRIBUTES[name];
      const math = MATH.has(name);
      ATTRIBUTE.lastIndex = 0;
      const attrs = m[3];
      let a: RegExpExecArray | null;
      let end = 0;
      while ((a = ATTRIBUTE.exec(attrs)) !== null) {
        end = ATTRIBUTE.lastIndex;
        const attr = a[1].toLowerCase();
        if (!(GLOBAL_ATTRIBUTES.has(attr) || own?.has(attr) || (math && MATH_ATTRIBUTES.has(attr)) || /^data-[a-z0-9-]+$/.test(attr))) return false;
        const rawValue = a[2] ?? a[3] ?? a[4] ?? '';
        const value = decodeAttribute(rawValue);
        if (value === null) return false;
        if (URL_ATTRIBUTES.has(attr) && !safeUrl(value, attr === 'href')) return false;
        if (attr === 'style' && !safeStyle(value)) return false;
      }
      if (attrs.slice(end).trim() !== '') return false;
    }
    at = TAG.lastIndex;
  }
  return true;
}
