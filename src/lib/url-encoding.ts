// Zulip's narrow-URL encoding (zerver/lib/url_encoding.py): how channel and topic names appear in
// "#narrow/channel/ID-name/topic/…" links, for rendered links and Notification Bot messages alike.

/** encode_hash_component: percent-encoding with "." for "%", and "." itself as ".2E". */
export function encodeHashComponent(s: string): string {
  // Most names are letters, digits and dashes, which neither step changes.
  if (UNCHANGED.test(s)) return s;
  const quoted = encodeURIComponent(s).replace(/[!'()]/g, percentEncode);
  return quoted.replace(/[%.]/g, dotEncode);
}

// Characters encodeURIComponent keeps and neither replacement touches.
const UNCHANGED = /^[A-Za-z0-9_~*-]*$/;
// Named functions, made once: an arrow here was a closure per call.
function percentEncode(c: string): string {
  return '%' + c.charCodeAt(0).toString(16).toUpperCase();
}
function dotEncode(c: string): string {
  return c === '%' ? '.' : '.2E';
}

/** encode_channel: "ID-name", spaces as dashes. */
export const encodeChannel = (id: number, name: string): string => `${id}-${encodeHashComponent(name.replace(/ /g, '-'))}`;
