// application/x-www-form-urlencoded, strictly: `+` is a space, %XX are bytes, the bytes must be UTF-8.
// A malformed escape or invalid UTF-8 is a client error rather than a silently mangled value.
import { errors } from './errors';

const utf8 = new TextDecoder('utf-8', { fatal: true });

const NON_ASCII = /[^\x00-\x7f]/;

function decodeComponent(s: string): string {
  if (s.indexOf('%') === -1) return s.indexOf('+') === -1 ? s : s.replace(/\+/g, ' ');
  // The native decoder refuses exactly what the strict loop below refuses (a bad escape, bytes that
  // are not UTF-8) and is some 10× faster: a body of a few MB took a quarter second byte by byte. On
  // its refusal the loop runs, to give the precise error.
  // (ASCII only: the loop reads an unescaped lone surrogate as U+FFFD, decodeURIComponent keeps it.)
  if (!NON_ASCII.test(s)) {
    try {
      return decodeURIComponent(s.indexOf('+') === -1 ? s : s.replace(/\+/g, ' '));
    } catch {
      // fall through to the strict loop for the precise error
    }
  }
  return strictDecode(s);
}

/** The value of a hex digit's character code, or -1 (also for a code past the end: undefined). */
function hexValue(c: number | undefined): number {
  if (c === undefined) return -1;
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1;
}

// Byte by byte over a typed array: the text's UTF-8 bytes (non-ASCII sent unescaped stays its own
// bytes; a lone surrogate becomes U+FFFD's), with %XX replaced by its byte and + by a space. A loop
// pushing numbers into an array took ~120 ms a MiB, and any client could send 10 MiB of unescaped
// non-ASCII text (which the native decoder does not take) to an endpoint that needs no login.
function strictDecode(s: string): string {
  const input = Buffer.from(s, 'utf8');
  const out = new Uint8Array(input.length);
  let n = 0;
  for (let i = 0; i < input.length; i++) {
    const c = input[i];
    if (c === 0x25 /* % */) {
      const high = hexValue(input[i + 1]);
      const low = high < 0 ? -1 : hexValue(input[i + 2]);
      if (low < 0) throw errors.badRequest('Malformed percent-encoding in request');
      out[n++] = high * 16 + low;
      i += 2;
    } else {
      out[n++] = c === 0x2b /* + */ ? 0x20 : c;
    }
  }
  try {
    return utf8.decode(out.subarray(0, n));
  } catch {
    throw errors.badRequest('Invalid UTF-8 in request');
  }
}

/** Parses a query string or form body into `into` (a later duplicate key wins, as in Django). */
export function parseUrlencoded(text: string, into: Map<string, string> = new Map()): Map<string, string> {
  if (text.length === 0) return into;
  for (const pair of text.split('&')) {
    if (pair.length === 0) continue;
    const eq = pair.indexOf('=');
    const key = decodeComponent(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? '' : decodeComponent(pair.slice(eq + 1));
    into.set(key, value);
  }
  return into;
}

/** Decodes a form body's bytes, refusing invalid UTF-8 before any parsing. */
export function parseUrlencodedBody(body: Buffer, into?: Map<string, string>): Map<string, string> {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw errors.badRequest('Invalid UTF-8 in request');
  }
  return parseUrlencoded(text, into);
}
