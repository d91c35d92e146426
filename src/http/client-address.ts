// The client's address: the socket peer, or, when the peer is a trusted reverse proxy, the rightmost
// X-Forwarded-For hop that is not itself a trusted proxy. Anything left of that hop was written by the
// client (or a proxy we do not know) and is ignored, so a spoofed header gains nothing.
import net from 'node:net';

/** Trusted proxy addresses and ranges (`127.0.0.1`, `::1`, `10.0.0.0/8`, `fd00::/8`). */
export type TrustedProxies = net.BlockList;

/** Checks a comma-separated list of addresses and CIDR ranges; throws naming the bad entry. */
export function parseTrustedProxies(list: string, source: string): string[] {
  const entries = list
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  trustedProxySet(entries, source);
  return entries;
}

/** The entries as a set to check addresses against (null when there are none). */
export function trustedProxySet(entries: readonly string[], source = 'trusted proxies'): TrustedProxies | null {
  if (entries.length === 0) return null;
  const blocks = new net.BlockList();
  for (const entry of entries) {
    const slash = entry.indexOf('/');
    const addr = slash < 0 ? entry : entry.slice(0, slash);
    const family = net.isIP(addr);
    const prefixText = slash < 0 ? '' : entry.slice(slash + 1);
    const prefix = Number(prefixText);
    const bad = () => new Error(`${source}: '${entry}' is not an IP address or CIDR range`);
    if (family === 0) throw bad();
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (slash < 0) blocks.addAddress(addr, type);
    else if (/^\d{1,3}$/.test(prefixText) && prefix <= (family === 4 ? 32 : 128)) blocks.addSubnet(addr, prefix, type);
    else throw bad();
  }
  return blocks;
}

const MAPPED_V4 = /^(?:0{1,4}:){5}ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i;

/**
 * One spelling per address: uWS writes IPv6 in full (`0000:...:0001`) and IPv4 peers of a dual-stack
 * socket as mapped IPv6. Rate-limit keys and logs want `::1` and `127.0.0.1`. Not an IP: ''.
 */
export function canonicalIp(raw: string): string {
  // An IPv6 zone id ("fe80::1%eth0") names an interface of the host that wrote it, not of this one,
  // and URL parsing below would throw on it: dropped.
  const zone = raw.indexOf('%');
  const text = zone > 0 && net.isIP(raw) === 6 ? raw.slice(0, zone) : raw;
  const family = net.isIP(text);
  if (family === 4) return text;
  if (family === 0) return '';
  const mapped = MAPPED_V4.exec(text);
  if (mapped) {
    const hi = parseInt(mapped[1], 16);
    const lo = parseInt(mapped[2], 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  if (text.startsWith('::ffff:') && net.isIP(text.slice(7)) === 4) return text.slice(7);
  return new URL(`http://[${text}]/`).hostname.slice(1, -1);
}

/** An X-Forwarded-For entry: an address, maybe with a port (`1.2.3.4:80`, `[::1]:80`) as some proxies write. */
function forwardedHop(entry: string): string {
  const e = entry.trim();
  if (net.isIP(e)) return canonicalIp(e);
  const v6 = /^\[([^\]]+)\](?::\d+)?$/.exec(e);
  if (v6) return canonicalIp(v6[1]);
  const v4 = /^([\d.]+):\d+$/.exec(e);
  if (v4) return canonicalIp(v4[1]);
  return '';
}

function trusted(proxies: TrustedProxies, ip: string): boolean {
  return ip !== '' && proxies.check(ip, net.isIP(ip) === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The client's address for a request whose socket peer is `peer` (canonical). Behind trusted proxies,
 * walks X-Forwarded-For from the right past every trusted hop; an entry that is not an address ends
 * the walk at the last address seen (a trusted proxy vouched for nothing beyond it).
 */
export function clientAddress(peer: string, forwardedFor: string | undefined, proxies: TrustedProxies | null): string {
  if (proxies === null || forwardedFor === undefined || !trusted(proxies, peer)) return peer;
  let client = peer;
  const hops = forwardedFor.split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = forwardedHop(hops[i]);
    if (hop === '') break;
    client = hop;
    if (!trusted(proxies, hop)) break;
  }
  return client;
}
