// GET /metrics: Prometheus' text format (src/lib/metrics.ts). Off by default (404, as for any unknown
// path). When on, a configured token is required as `Authorization: Bearer TOKEN`; without a token,
// only clients on the loopback interface get it (a Prometheus on the same box), and never a request a
// proxy forwarded. Never rate limited.
import crypto from 'node:crypto';
import { errors } from '../http/errors';
import { publicRoute, Reply } from '../http/route';

/** 127.0.0.0/8 and ::1, in the spellings uWS gives (IPv4, IPv4-mapped IPv6, full IPv6). */
export function isLoopback(ip: string): boolean {
  return (
    ip.startsWith('127.') ||
    ip === '::1' ||
    ip.startsWith('::ffff:127.') ||
    /^(0000:){7}0001$/.test(ip) ||
    /^(0000:){5}ffff:7f[0-9a-f]{2}:[0-9a-f]{4}$/i.test(ip)
  );
}

/**
 * A request some proxy forwarded. A reverse proxy on the same box connects from loopback, so without
 * this every client behind it would pass for a local Prometheus (trusted_proxies set or not). A proxy
 * that adds none of these headers cannot be told apart: the README says to set a token behind one.
 */
function forwarded(headers: Record<string, string>): boolean {
  return headers['x-forwarded-for'] !== undefined || headers.forwarded !== undefined || headers['x-real-ip'] !== undefined;
}

function tokenMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer (.+)$/.exec(header ?? '');
  if (!m) return false;
  const given = crypto.createHash('sha256').update(m[1]).digest();
  const wanted = crypto.createHash('sha256').update(token).digest();
  return crypto.timingSafeEqual(given, wanted);
}

export const metricsRoutes = [
  publicRoute({
    method: 'GET',
    path: '/metrics',
    operational: true,
    async handle({ app, headers, ip }) {
      const metrics = app.metrics;
      if (!metrics) throw errors.notFound();
      const token = app.config.metricsToken;
      if (token !== null ? !tokenMatches(headers.authorization, token) : !isLoopback(ip) || forwarded(headers)) throw errors.accessDenied();
      const text = await metrics.render();
      return new Reply(200, { 'Content-Type': metrics.contentType, 'Cache-Control': 'no-store' }, text);
    },
  }),
];
