// Test fixture: a real Parley (uWS + SQLite file) on 127.0.0.1:0 with a temporary data dir and a
// seeded organization, plus a small client that talks to it the way Zulip clients do.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp, type App } from '../../src/app';
import { configFromEnv, type Config } from '../../src/config';
import { doCreateRealm } from '../../src/actions/realm';
import { doCreateUser } from '../../src/actions/users';
import { allRoutes } from '../../src/api';
import type { AnyRoute } from '../../src/http/route';
import { startServer, type Server } from '../../src/http/server';
import { ROLE, BOT_TYPE } from '../../src/lib/roles';
import type { Clock } from '../../src/lib/clock';
import type { LogSink } from '../../src/lib/log';

export interface TestUser {
  id: number;
  email: string;
  apiKey: string;
  password: string;
  fullName: string;
}

export type SeedName = 'owner' | 'admin' | 'moderator' | 'hamlet' | 'othello' | 'guest' | 'bot';

export interface TestServer {
  app: App;
  server: Server;
  url: string;
  dataDir: string;
  users: Record<SeedName, TestUser>;
  /** Calls the API as `user` (null: no credentials). */
  api(user: TestUser | null, method: string, apiPath: string, params?: Record<string, unknown>): Promise<ApiResponse>;
  /** Sends a raw request (path relative to the server root). */
  raw(method: string, rawPath: string, init?: { headers?: Record<string, string>; body?: string | Buffer | Uint8Array }): Promise<ApiResponse>;
  close(): Promise<void>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

export const PASSWORD = 'correct-horse-battery';

/** The User-Agent of the test client: a Zulip app (see raw() below). */
export const TEST_USER_AGENT = 'ZulipTerminal/0.7.0 (Parley test suite)';

export function basicAuth(user: { email: string; apiKey: string }): string {
  return 'Basic ' + Buffer.from(`${user.email}:${user.apiKey}`).toString('base64');
}

/** Form-encodes params the way the Zulip clients do: strings raw, everything else JSON. */
export function encodeParams(params: Record<string, unknown> = {}): string {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    form.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  }
  return form.toString();
}

async function toResponse(res: Response): Promise<ApiResponse> {
  const text = await res.text();
  let body: unknown = undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, text, body };
}

/**
 * Starts a seeded server. `configure` may adjust the config before the app is built; `extraRoutes`
 * are served after the real ones (tests of the HTTP layer register throwing or echoing routes).
 */
export async function startTestServer(
  opts: {
    configure?: (c: Config) => void;
    clock?: Clock;
    extraRoutes?: readonly AnyRoute[];
    /**
     * Notification Bot's "channel events" message in every channel created over the API (Zulip's
     * realm_send_channel_events_messages, on in a new organization). Off unless a test asks, so that
     * channels start empty: most tests count the messages they send themselves.
     */
    channelEventsMessages?: boolean;
    /** Receives the server's log lines (request log, server errors); without it the server logs nothing. */
    logSink?: LogSink;
  } = {},
): Promise<TestServer> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-test-'));
  const config = configFromEnv({});
  config.dataDir = dataDir;
  config.host = '127.0.0.1';
  config.port = 0;
  config.rateLimits = false;
  opts.configure?.(config);
  const app = createApp(config, { clock: opts.clock, logSink: opts.logSink ?? null });
  const { realmId, owner } = doCreateRealm(app, {
    name: 'Test Org',
    ownerEmail: 'desdemona@example.com',
    ownerPassword: PASSWORD,
    ownerFullName: 'Desdemona',
  });
  const users = {
    owner: { id: owner.userId, email: owner.email, apiKey: owner.apiKey, password: PASSWORD, fullName: 'Desdemona' },
  } as Record<SeedName, TestUser>;
  const seed = (name: SeedName, email: string, fullName: string, role: number, bot = false) => {
    const u = doCreateUser(app, {
      realmId,
      email,
      password: bot ? null : PASSWORD,
      fullName,
      role,
      botType: bot ? BOT_TYPE.GENERIC : null,
      botOwnerId: bot ? users.hamlet.id : null,
      acting: null,
    });
    users[name] = { id: u.userId, email, apiKey: u.apiKey, password: PASSWORD, fullName };
  };
  seed('admin', 'iago@example.com', 'Iago', ROLE.ADMINISTRATOR);
  seed('moderator', 'shiva@example.com', 'Shiva', ROLE.MODERATOR);
  seed('hamlet', 'hamlet@example.com', 'King Hamlet', ROLE.MEMBER);
  seed('othello', 'othello@example.com', 'Othello', ROLE.MEMBER);
  seed('guest', 'polonius@example.com', 'Polonius', ROLE.GUEST);
  seed('bot', 'helper-bot@example.com', 'Helper Bot', ROLE.MEMBER, true);
  if (!opts.channelEventsMessages) {
    app.db.prepare(`UPDATE realm SET extra_settings = json_set(extra_settings, '$.send_channel_events_messages', json('false')) WHERE id = ?`).run(realmId);
  }
  app.batch.commit();
  const server = await startServer(app, [...allRoutes, ...(opts.extraRoutes ?? [])], config.host, 0);
  app.publicUrl = server.url;
  // Requests say they come from a Zulip app (as Zulip's own test client counts as one): messages the
  // tests send start read for their sender, as Zulip's default_read_by_sender has it for apps people
  // type in. A test of other clients sets its own User-Agent.
  const raw: TestServer['raw'] = async (method, rawPath, init = {}) =>
    toResponse(await fetch(server.url + rawPath, { method, headers: { 'user-agent': TEST_USER_AGENT, ...init.headers }, body: init.body as never }));
  return {
    app,
    server,
    url: server.url,
    dataDir,
    users,
    raw,
    async api(user, method, apiPath, params = {}) {
      const headers: Record<string, string> = {};
      if (user) headers.authorization = basicAuth(user);
      const encoded = encodeParams(params);
      const full = '/api/v1' + apiPath;
      if (method === 'GET' || method === 'HEAD') {
        return raw(method, encoded ? `${full}?${encoded}` : full, { headers });
      }
      headers['content-type'] = 'application/x-www-form-urlencoded';
      return raw(method, full, { headers, body: encoded });
    },
    async close() {
      app.shutdown();
      await server.close(1000);
      app.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
