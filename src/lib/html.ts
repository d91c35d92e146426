// Tiny HTML templating for the few server-rendered pages (sign-up, login): a tagged template that
// escapes every interpolated value unless it is already SafeHtml, and one page shell.

/** HTML that is already escaped (built by `html` or `raw`). */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** Escapes text for use in element content and double-quoted attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

type Interpolation = SafeHtml | string | number | null | undefined | false | readonly Interpolation[];

function render(v: Interpolation): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof SafeHtml) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

/** `html\`<p>${text}</p>\`` escapes `text`; nested `html` results and arrays of them pass through. */
export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new SafeHtml(out);
}

/** Trusted markup (constants only, never input). */
export const raw = (s: string) => new SafeHtml(s);

const STYLE = `:root{color-scheme:light dark;--bg:#f5f6f8;--card:#fff;--fg:#1d232a;--muted:#5f6b7a;--accent:#2b6cb0;--border:#d5dae1;--err:#b00020}
@media (prefers-color-scheme:dark){:root{--bg:#16191d;--card:#1f2329;--fg:#e4e7eb;--muted:#9aa5b1;--accent:#63a4f0;--border:#343a42;--err:#ff8a80}}
body{font-family:system-ui,sans-serif;background:var(--bg);color:var(--fg);margin:0;padding:3rem 1rem}
main{max-width:24rem;margin:0 auto;background:var(--card);border:1px solid var(--border);border-radius:10px;padding:1.5rem 1.75rem}
h1{font-size:1.4rem;margin:0 0 1rem}p{line-height:1.45}a{color:var(--accent)}
label{display:block;margin:.9rem 0 .3rem;font-weight:600;font-size:.9rem}
input{width:100%;padding:.55rem .6rem;box-sizing:border-box;font:inherit;border:1px solid var(--border);border-radius:6px;background:var(--bg);color:var(--fg)}
button{margin-top:1.2rem;padding:.6rem 1.2rem;font:inherit;font-weight:600;border:0;border-radius:6px;background:var(--accent);color:#fff;cursor:pointer}
.error{color:var(--err);border:1px solid var(--err);padding:.5rem .7rem;border-radius:6px}.realm{color:var(--muted);margin:-.6rem 0 1rem}`;

/** A complete page: title, heading and body; `script` names a same-origin script file to load, `icon` the favicon. */
export function page(title: string, body: SafeHtml, script?: string, icon?: string): string {
  return html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>${raw(STYLE)}</style>
${icon ? html`<link rel="icon" href="${icon}" type="image/svg+xml">` : ''}
${script ? html`<script type="module" src="${script}"></script>` : ''}
</head>
<body>
<main>
<h1>${title}</h1>
${body}
</main>
</body>
</html>
`.value;
}

/**
 * Headers for every HTML page: no caching, no framing, no scripts but our own files, forms post only
 * to us. The referrer policy is same-origin, not no-referrer: with no-referrer Chromium sends
 * `Origin: null` on a form's POST, and the origin check (sameOrigin in api/pages.ts) refused every
 * login from a real browser. same-origin still sends nothing to other sites.
 */
export const PAGE_HEADERS: Record<string, string> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
  'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};
