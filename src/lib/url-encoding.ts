// Zulip's narrow-URL encoding (zerver/lib/url_encoding.py): how channel and topic names appear in
// "#narrow/channel/ID-name/topic/…" links, for rendered links and Notification Bot messages alike.

/** encode_hash_component: percent-encoding with "." for "%", and "." itself as ".2E". */
export function encodeHashComponent(s: string): string {
  const quoted = encodeURIComponent(s).replace(/[!'()]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  return quoted.replace(/[%.]/g, (c) => (c === '%' ? '.' : '.2E'));
}

/** encode_channel: "ID-name", spaces as dashes. */
export const encodeChannel = (id: number, name: string): string => `${id}-${encodeHashComponent(name.replace(/ /g, '-'))}`;
