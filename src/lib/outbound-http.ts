// Requests Parley makes to URLs that users chose (outgoing-webhook bots): a JSON or form POST that
// never throws, bounded in time and in the size of the answer, and that reaches neither this server
// nor the machine's loopback, link-local, private-network or unspecified addresses unless the
// operator allows it.
// The address is checked where the connection is made (the `lookup` the socket uses), so a name that
// resolves to a public address when checked and to 127.0.0.1 when connecting cannot slip through.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';

export type OutboundResult =
  | { kind: 'response'; status: number; body: Buffer }
  /** No complete answer within the time limit. */
  | { kind: 'timeout' }
  /** The name did not resolve, the connection was refused or reset, TLS failed. */
  | { kind: 'connection'; message: string }
  /** The URL resolves to an address outbound requests may not reach. */
  | { kind: 'refused'; address: string }
  /** The answer is larger than the limit. */
  | { kind: 'too_large' }
  /** Anything else (a URL that cannot be requested); `name` as Python's requests names it. */
  | { kind: 'error'; name: string; message: string };

export interface OutboundRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  maxResponseBytes: number;
  allowPrivate: boolean;
  /** Aborts the request (server shutdown); the result is then a connection error. */
  signal?: AbortSignal;
}

// Loopback, "this network"/unspecified, link-local (cloud metadata services live there), multicast,
// broadcast, and the metadata services that live elsewhere. IPv4-mapped IPv6 addresses are checked
// as the IPv4 address they carry.
const FORBIDDEN = new net.BlockList();
FORBIDDEN.addSubnet('127.0.0.0', 8, 'ipv4');
FORBIDDEN.addSubnet('0.0.0.0', 8, 'ipv4');
FORBIDDEN.addSubnet('169.254.0.0', 16, 'ipv4');
FORBIDDEN.addSubnet('224.0.0.0', 4, 'ipv4');
FORBIDDEN.addAddress('255.255.255.255', 'ipv4');
FORBIDDEN.addAddress('::1', 'ipv6');
FORBIDDEN.addAddress('::', 'ipv6');
FORBIDDEN.addSubnet('fe80::', 10, 'ipv6');
FORBIDDEN.addSubnet('ff00::', 8, 'ipv6');
// Private networks (RFC 1918, carrier-grade NAT, IPv6 unique local): the routers, NAS boxes and
// admin pages of the network Parley runs in. A failed delivery's notice quotes the bot server's
// answer to the bot's owner, so any member who may create bots could read them; an operator whose
// bots live on the LAN allows private addresses (outgoing_webhook_allow_private).
FORBIDDEN.addSubnet('10.0.0.0', 8, 'ipv4');
FORBIDDEN.addSubnet('172.16.0.0', 12, 'ipv4');
FORBIDDEN.addSubnet('192.168.0.0', 16, 'ipv4');
FORBIDDEN.addSubnet('100.64.0.0', 10, 'ipv4');
FORBIDDEN.addSubnet('fc00::', 7, 'ipv6');
// Cloud metadata services (instance credentials) at addresses outside link-local: AWS's over IPv6
// (Nitro instances) and Alibaba Cloud's. Only these addresses: their networks hold ordinary hosts.
FORBIDDEN.addAddress('fd00:ec2::254', 'ipv6');
FORBIDDEN.addAddress('100.100.100.200', 'ipv4');

/** The IPv4 address an IPv4-mapped IPv6 address carries (::ffff:7f00:1 → 127.0.0.1), else the input. */
function unmapped(address: string): string {
  if (net.isIPv6(address)) {
    const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
    const m = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
    if (m) {
      const [hi, lo] = [parseInt(m[1], 16), parseInt(m[2], 16)];
      return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
    }
    return canonical;
  }
  return address;
}

/** This machine's own addresses (every interface), read at each check: interfaces come and go. */
function ownAddresses(): Set<string> {
  const out = new Set<string>();
  for (const list of Object.values(os.networkInterfaces())) for (const a of list ?? []) out.add(unmapped(a.address.replace(/%.*$/, '')));
  return out;
}

/** Whether outbound requests may not reach `address` (unless the operator allows private ones). */
export function isForbiddenAddress(address: string): boolean {
  const a = unmapped(address.replace(/%.*$/, ''));
  const family = net.isIPv4(a) ? 'ipv4' : net.isIPv6(a) ? 'ipv6' : null;
  if (family === null) return true;
  return FORBIDDEN.check(a, family) || ownAddresses().has(a);
}

class RefusedAddress extends Error {
  constructor(readonly address: string) {
    super(`refused address ${address}`);
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/** A `lookup` for the socket that refuses the name when any address it resolves to is forbidden. */
function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { family: options.family ?? 0, hints: options.hints, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      if (addresses.length === 0) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '');
      const bad = allowPrivate ? undefined : addresses.find((a) => isForbiddenAddress(a.address));
      if (bad) return callback(new RefusedAddress(bad.address) as NodeJS.ErrnoException, '');
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

/** POSTs `req.body` to `req.url`; never throws, never takes much longer than `req.timeoutMs`. */
export function outboundPost(req: OutboundRequest): Promise<OutboundResult> {
  let url: URL;
  try {
    url = new URL(req.url);
  } catch {
    return Promise.resolve({ kind: 'error', name: 'InvalidURL', message: `Invalid URL ${JSON.stringify(req.url)}` });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return Promise.resolve({ kind: 'error', name: 'InvalidSchema', message: `No connection adapters were found for ${JSON.stringify(req.url)}` });
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  // An address in the URL is connected to without a lookup: check it here.
  if (net.isIP(host) && !req.allowPrivate && isForbiddenAddress(host)) return Promise.resolve({ kind: 'refused', address: host });
  return new Promise((resolve) => {
    let settled = false;
    const finish = (r: OutboundResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
      resolve(r);
    };
    const body = Buffer.from(req.body, 'utf8');
    const client = url.protocol === 'https:' ? https : http;
    const outgoing = client.request(url, {
      method: 'POST',
      headers: { ...req.headers, 'content-length': String(body.length) },
      lookup: guardedLookup(req.allowPrivate) as unknown as typeof dns.lookup,
      agent: false, // one connection per request: nothing pooled outlives it
    });
    const timer = setTimeout(() => {
      finish({ kind: 'timeout' });
      outgoing.destroy();
    }, req.timeoutMs);
    timer.unref();
    const onAbort = () => {
      finish({ kind: 'connection', message: 'aborted: the server is stopping' });
      outgoing.destroy();
    };
    req.signal?.addEventListener('abort', onAbort);
    if (req.signal?.aborted) onAbort();
    outgoing.on('error', (err: NodeJS.ErrnoException) => {
      if (err instanceof RefusedAddress) return finish({ kind: 'refused', address: err.address });
      // Socket, DNS and TLS failures carry a code; requests counts them all as a ConnectionError.
      if (typeof err.code === 'string') return finish({ kind: 'connection', message: err.message });
      finish({ kind: 'error', name: err.name, message: err.message });
    });
    outgoing.on('response', (res) => {
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > req.maxResponseBytes) {
        finish({ kind: 'too_large' });
        outgoing.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > req.maxResponseBytes) {
          finish({ kind: 'too_large' });
          outgoing.destroy();
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => finish({ kind: 'response', status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', (err) => finish({ kind: 'connection', message: err.message }));
    });
    outgoing.end(body);
  });
}
