// Hostile input: a seeded, time-bounded fuzz run that sends random and malformed requests to every
// route in the route table. The server must never crash or answer 5xx; every API answer must be a JSON
// envelope; and a refused request must leave the database exactly as it was.
// FUZZ_SEED and FUZZ_SECONDS pick the seed and the duration (default: a fixed seed, 8 seconds).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import net from 'node:net';
import { allRoutes } from '../../src/api';
import { basicAuth, startTestServer, type TestServer, type TestUser } from '../helpers/server';
import { ALL_USER_MESSAGES_SQL } from '../../src/lib/user-messages';
import { prng } from '../helpers/prng';

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const SECONDS = Number(process.env.FUZZ_SECONDS ?? 8);

/**
 * A digest of every row of every table: equal digests mean nothing changed. Per-user message rows
 * count as what they mean (written and implied alike): writing implied rows, which reads may do, is
 * no change (src/lib/user-messages.ts).
 */
function fingerprint(t: TestServer): string {
  const h = crypto.createHash('sha1');
  const tables = t.app.db
    .prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'message_fts%' AND name NOT LIKE 'sqlite_%' AND name NOT IN ('usermessage', 'usermessage_cursor') ORDER BY name",
    )
    .all() as {
    name: string;
  }[];
  for (const { name } of tables) {
    // table names come from sqlite_master, not from input
    for (const row of t.app.db.prepare(`SELECT * FROM "${name}"`).all()) h.update(JSON.stringify(row));
  }
  for (const row of t.app.db.prepare(ALL_USER_MESSAGES_SQL).all()) h.update(JSON.stringify(row));
  return h.digest('hex');
}

/** Sends raw bytes and returns the raw response (or null when the server closed the connection). */
function rawRequest(port: number, bytes: Buffer, opts: { slowMs?: number; head?: boolean } = {}): Promise<{ status: number; body: string } | null> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    const done = () => {
      const text = data.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (!m) return resolve(null);
      const headerEnd = text.indexOf('\r\n\r\n');
      resolve({ status: Number(m[1]), body: headerEnd === -1 ? '' : data.subarray(headerEnd + 4).toString('utf8') });
    };
    sock.setTimeout(5000, () => sock.destroy());
    sock.on('data', (d) => {
      data = Buffer.concat([data, d]);
      const text = data.toString('latin1');
      const headerEnd = text.indexOf('\r\n\r\n');
      if (headerEnd !== -1) {
        const len = /content-length: (\d+)/i.exec(text.slice(0, headerEnd));
        // A HEAD answer announces a length but carries no body.
        if (opts.head || (len && data.length - headerEnd - 4 >= Number(len[1]))) sock.end();
      }
    });
    sock.on('close', done);
    sock.on('error', () => undefined);
    if (opts.slowMs) {
      // Dribble the request out a few bytes at a time.
      let i = 0;
      const step = () => {
        if (sock.destroyed) return;
        sock.write(bytes.subarray(i, i + 7));
        i += 7;
        if (i < bytes.length) setTimeout(step, opts.slowMs);
      };
      step();
    } else {
      sock.write(bytes);
    }
  });
}

const HOSTILE_VALUES = [
  '',
  'null',
  'true',
  '[]',
  '{}',
  '[1,2,',
  '{"a":',
  '99999999999999999999999',
  '-1',
  '1e308',
  '1.5',
  '"string"',
  '[{"operator":"is","operand":"unread"}]',
  '[["stream","nope"]]',
  '[{"operator":"bogus","operand":"x"}]',
  'x'.repeat(70000),
  '\u0000',
  '%ZZ',
  '%C3%28',
  '😀'.repeat(50),
  '<script>alert(1)</script>',
  '../../etc/passwd',
  '[1,"a",null,{}]',
  '{"stream_id":1,"property":"color","value":"#zzz"}',
];

describe('hostile input fuzzing', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
    // Some data for the routes to chew on.
    await t.api(t.users.owner, 'POST', '/channels/create', { name: 'fuzz', subscribers: [t.users.owner.id, t.users.hamlet.id] });
    await t.api(t.users.hamlet, 'POST', '/messages', { type: 'stream', to: 'fuzz', topic: 'x', content: 'hello' });
  });
  after(() => t.close());

  it(`survives random and malformed requests to every route (seed ${SEED}, ${SECONDS} s)`, async () => {
    const rand = prng(SEED);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
    const users: (TestUser | null)[] = [t.users.owner, t.users.hamlet, t.users.guest, t.users.bot, null];
    const deadline = Date.now() + SECONDS * 1000;
    let requests = 0;
    const port = t.server.port;
    while (Date.now() < deadline) {
      const route = pick(allRoutes);
      const pathStr = route.path.replace(/\{(\w+)(:int|\.\.\.)?\}/g, (_, _name, kind) =>
        kind === ':int' ? pick(['1', '2', '3', '0', '999999', '99999999999999999999']) : encodeURIComponent(pick(['me', 'a@b.co', 'x/y', '..', '%', 'hamlet@example.com'])),
      );
      const params: string[] = [];
      for (const name of Object.keys(route.params ?? {})) {
        if (rand() < 0.3) continue;
        params.push(`${encodeURIComponent(name)}=${rand() < 0.15 ? pick(['%ZZ', '%C3%28', '%FF%FE']) : encodeURIComponent(pick(HOSTILE_VALUES))}`);
      }
      if (rand() < 0.3) params.push(`unknown_${Math.floor(rand() * 100)}=1`);
      const form = params.join('&');
      const user = pick(users);
      const method = rand() < 0.05 ? pick(['BREW', 'TRACE', 'OPTIONS', 'HEAD']) : route.method;
      const kind = rand();
      let head = `${method} ${pathStr}${method === 'GET' || method === 'HEAD' ? `?${form}` : ''} HTTP/1.1\r\nHost: 127.0.0.1\r\n`;
      if (user) head += `Authorization: ${rand() < 0.05 ? 'Basic !!!' : basicAuth({ email: user.email, apiKey: user.apiKey })}\r\n`;
      let body: Buffer = Buffer.alloc(0);
      if (method !== 'GET' && method !== 'HEAD') {
        if (kind < 0.15) {
          // multipart, sometimes truncated or with a bad boundary
          const boundary = 'fuzzboundary';
          const parts = params.map((p) => {
            const [k, v] = p.split('=');
            return `--${boundary}\r\nContent-Disposition: form-data; name="${decodeURIComponent(k)}"\r\n\r\n${safeDecode(v ?? '')}\r\n`;
          });
          let text = parts.join('') + `--${boundary}--\r\n`;
          if (rand() < 0.5) text = text.slice(0, Math.floor(text.length * rand()));
          body = Buffer.from(text);
          head += `Content-Type: multipart/form-data; boundary=${rand() < 0.2 ? '' : boundary}\r\n`;
        } else if (kind < 0.2) {
          body = Buffer.from([0xff, 0xfe, 0x3d, 0x80, 0x26, 0x61, 0x3d, 0xc3, 0x28]); // invalid UTF-8
          head += 'Content-Type: application/x-www-form-urlencoded\r\n';
        } else {
          body = Buffer.from(form);
          head += 'Content-Type: application/x-www-form-urlencoded\r\n';
        }
      }
      if (rand() < 0.03) head += `X-Huge: ${'h'.repeat(20000)}\r\n`;
      head += `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
      const before = fingerprint(t);
      const started = Date.now();
      const res = await rawRequest(port, Buffer.concat([Buffer.from(head, 'latin1'), body]), { slowMs: rand() < 0.01 && body.length < 300 ? 5 : undefined, head: method === 'HEAD' });
      requests++;
      if (process.env.FUZZ_VERBOSE && Date.now() - started > 200) console.log(`slow ${Date.now() - started} ms: ${method} ${pathStr} body ${body.length}`);
      const what = `${method} ${pathStr} as ${user?.email ?? 'nobody'} (${form.slice(0, 200)})`;
      if (res === null) {
        // Only acceptable for headers beyond what the transport takes, and for method names that are
        // not HTTP methods at all (uWebSockets.js drops those before any handler runs).
        assert.ok(head.length > 16000 || method === 'BREW', `connection closed without an answer: ${what} ${JSON.stringify(head.slice(0, 400))}`);
        continue;
      }
      assert.ok(res.status < 500, `${res.status} for ${what}: ${res.body.slice(0, 300)}`);
      if (pathStr.startsWith('/api/v1') && method !== 'HEAD' && method !== 'OPTIONS' && res.status !== 204) {
        let parsed: { result?: string; msg?: unknown; code?: unknown };
        try {
          parsed = JSON.parse(res.body);
        } catch {
          assert.fail(`not JSON (${res.status}) for ${what}: ${res.body.slice(0, 200)}`);
        }
        if (res.status >= 400) {
          assert.equal(parsed.result, 'error', what);
          assert.equal(typeof parsed.msg, 'string', what);
          assert.equal(typeof parsed.code, 'string', what);
        }
      }
      if (res.status >= 400) {
        await new Promise((r) => setImmediate(r)); // let any batch commit
        assert.equal(fingerprint(t), before, `refused request changed the database: ${what}`);
      }
    }
    // Still alive and answering (a public route: the fuzzing may have regenerated or deactivated the
    // seeded users' credentials).
    const settings = await t.api(null, 'GET', '/server_settings');
    assert.equal(settings.status, 200);
    assert.ok(requests > 50, `only ${requests} requests in ${SECONDS} s`);
    console.log(`fuzz: ${requests} requests, seed ${SEED}`);
  });
});

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
