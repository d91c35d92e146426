// The uWebSockets.js adapter: copies what it needs out of the request, reads and parses the body with
// a size limit, authenticates, parses parameters, calls the route, and writes the envelope once the
// turn's write batch has committed. Everything from "body read" to "reply built" is synchronous
// unless a handler is itself async (uploads).
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from '@trufflesuite/uws-js-unofficial';
import type { App } from '../app';
import { loadUws } from '../native';
import { translate } from '../lib/i18n';
import { isAdmin, isOwner, type UserRow } from '../lib/users';
import { boundUrl } from '../config';
import { canonicalIp, clientAddress, trustedProxySet, type TrustedProxies } from './client-address';
import { authenticateBasic, authenticateSession, authenticateWebRequest, readCookie, SESSION_COOKIE } from './auth';
import { errors, JsonableError, withSessionChallenge } from './errors';
import { MultipartParser } from './multipart';
import { readParams } from './params';
import { rateLimitHeaders } from './ratelimit';
import { apiPattern, FileReply, JsonFields, jsonRoutes, Reply, type AnyRoute, type BodyStream, type Ctx, type HandlerResult, type UploadedFile } from './route';
import { recorderFromEnv } from './record';
import { Router } from './router';
import { checkTlsPair, TlsError, type CheckedTls } from './tls';
import { parseUrlencoded, parseUrlencodedBody } from './urlencoded';

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  204: 'No Content',
  301: 'Moved Permanently',
  302: 'Found',
  303: 'See Other',
  304: 'Not Modified',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  410: 'Gone',
  412: 'Precondition Failed',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  460: 'Checksum Mismatch',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

const statusLines = new Map<number, string>();
/** "200 OK" and friends, built once per status. */
function statusLine(status: number): string {
  let line = statusLines.get(status);
  if (line === undefined) statusLines.set(status, (line = `${status} ${STATUS_TEXT[status] ?? ''}`.trim()));
  return line;
}

const JSON_HEADERS: Record<string, string> = {
  'Content-Type': 'application/json',
  'Cache-Control': 'max-age=0, no-cache, no-store, must-revalidate, private',
};

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>;
const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/**
 * Per-request state that outlives the uWS HttpRequest (which dies when the callback returns). A class,
 * not a literal: the request path is hot, and a literal with a getter allocates a closure per request.
 */
class Pending {
  readonly headers: Record<string, string> = {};
  peer: string | null = null;
  aborted = false;
  done = false;
  /** The status written (0 until a reply goes out; logged as 499 if the client leaves first). */
  status = 0;
  /** The authenticated user, for the request log. */
  userId: number | null = null;
  /** An operational route (health, metrics): no rate limit, no write batch. */
  operational = false;
  tempFiles: string[] = [];
  /** Headers every reply to this request carries (rate-limit state). */
  extraHeaders: Record<string, string> = NO_HEADERS;
  /** The matched route's pattern (for the response recorder; /json routes report their /api/v1 pattern). */
  route?: string;
  /** A /json request of the web app: a 401 challenges with "Session", never Basic. */
  session = false;
  /** The session cookie's token when the session authenticated the request (Ctx.sessionToken). */
  sessionToken: string | null = null;
  /** A raw body (rawBody routes) not yet read to its end: the reply must close the connection. */
  bodyUnread?: boolean;
  /** Run when the client goes away (stop streaming a file, fail a raw body stream). */
  onAbort?: (() => void)[];
  /** The path as the request log shows it, made while an asynchronous handler (a parked poll) waits. */
  loggedPath?: string;

  constructor(
    readonly res: HttpResponse,
    readonly method: string,
    readonly url: string,
    readonly query: string,
    /** The request id: in the X-Request-Id header of the reply and in every log line about it. */
    readonly id: string,
    /** performance.now() when the request arrived. */
    readonly start: number,
    private readonly proxies: TrustedProxies | null,
  ) {}

  /**
   * The client's address, read only when something needs it (rate limits of anonymous requests,
   * handlers that log or limit by address): it costs a native call and a string per request. Behind a
   * trusted reverse proxy it comes from X-Forwarded-For (src/http/client-address.ts).
   */
  get ip(): string {
    if (this.peer === null) {
      const peer = this.aborted ? '' : canonicalIp(Buffer.from(this.res.getRemoteAddressAsText()).toString());
      this.peer = this.proxies === null ? peer : clientAddress(peer, this.headers['x-forwarded-for'], this.proxies);
    }
    return this.peer;
  }
}

/** What a handler sees of its request (Ctx), without a closure per request. */
class RequestCtx implements Ctx<Record<string, unknown>, UserRow | null> {
  readonly headers: Record<string, string>;
  readonly method: string;
  readonly url: string;
  extraIgnored: string[] | null = null;

  constructor(
    readonly app: App,
    readonly user: UserRow | null,
    readonly params: Record<string, unknown>,
    readonly path: Record<string, string>,
    readonly files: UploadedFile[],
    readonly body: RawBody | null,
    private readonly p: Pending,
  ) {
    this.headers = p.headers;
    this.method = p.method;
    this.url = p.url;
  }

  get ip(): string {
    return this.p.ip;
  }

  get sessionToken(): string | null {
    return this.p.sessionToken;
  }

  // Handlers destructure these (`handle({ ignore })`), so they must work without `this`: the getters
  // make the closure only for the handlers that ask for it.
  get ignore(): (name: string) => void {
    return (name) => {
      (this.extraIgnored ??= []).push(name);
    };
  }

  get onAbort(): (fn: () => void) => void {
    const p = this.p;
    return (fn) => {
      if (p.aborted) fn();
      else (p.onAbort ??= []).push(fn);
    };
  }
}

/** Upper-case methods by what the client sent (skips a toUpperCase per request for the usual ones). */
const METHOD_NAMES = new Map(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'].map((m) => [m, m]));

/** A path parameter whose value is a credential (invitation keys, confirmation keys, temporary tokens). */
const SECRET_PARAM = /\{(?:\w*_)?(?:key|token|secret|password)\b[^}]*\}/i;

/** Where credentials sit in request paths (from the route table). */
interface SecretPaths {
  /** The static start of every route path that carries one (`/join/` of `/join/{key}`). */
  prefixes: string[];
  /** Matched route pattern (as Pending.route holds it) → its prefix. */
  byPattern: Map<string, string>;
  /** Whether any prefix is under /api/ (usually none: unmatched /api/ paths skip the scan). */
  scanApi: boolean;
}

function secretPaths(routes: readonly AnyRoute[]): SecretPaths {
  const prefixes = new Set<string>();
  const byPattern = new Map<string, string>();
  for (const r of routes) {
    const m = SECRET_PARAM.exec(r.path);
    if (!m) continue;
    // The static start, up to the first parameter (not the secret's own): a route whose secret follows
    // another parameter (/user_avatars/exports/{realm_id}/{token}/...) is still recognised under any realm id.
    const prefix = r.path.slice(0, r.path.indexOf('{'));
    prefixes.add(prefix);
    if (!byPattern.has(apiPattern(r.path))) byPattern.set(apiPattern(r.path), prefix);
  }
  return { prefixes: [...prefixes], byPattern, scanApi: [...prefixes].some((s) => s.startsWith('/api/')) };
}

/** Slashes collapsed, %XX escapes decoded (where they decode), lower case: for matching only. */
function normalPath(url: string): string {
  let s = url.replace(/\/{2,}/g, '/');
  if (s.includes('%')) {
    try {
      s = decodeURIComponent(s).replace(/\/{2,}/g, '/');
    } catch {
      // A malformed escape: compared as sent.
    }
  }
  return s.toLowerCase();
}

const MAX_LOGGED_PATH = 512;
const MAX_LOGGED_QUERY_NAMES = 20;

/**
 * The path as the request log shows it: a credential in the path redacted, and of the query string
 * only the parameter names (values carry API keys, passwords and tokens: none is ever logged).
 */
function loggedPath(url: string, query: string, secrets: SecretPaths, route: string | undefined): string {
  let out = url;
  if (route !== undefined) {
    // Decided by the route that served it, not by the text: the router also matches an escaped
    // spelling (`/%6Aoin/KEY` reaches /join/{key}), which no prefix of the raw path would catch.
    const prefix = secrets.byPattern.get(route);
    if (prefix !== undefined) out = `${prefix}[redacted]`;
  } else if (secrets.scanApi || !url.startsWith('/api/')) {
    // A path no route matched may still hold a real key, mangled on its way (`//join/KEY`, a link
    // retyped in capitals): compared in a normal form. Only unmatched requests pay for it.
    const seen = normalPath(url);
    for (const prefix of secrets.prefixes) {
      if (seen.startsWith(prefix)) {
        out = `${prefix}[redacted]`;
        break;
      }
    }
  }
  if (out.length > MAX_LOGGED_PATH) out = `${out.slice(0, MAX_LOGGED_PATH)}...`;
  if (query !== '') {
    const names: string[] = [];
    for (const pair of query.split('&', MAX_LOGGED_QUERY_NAMES)) {
      const eq = pair.indexOf('=');
      const name = (eq === -1 ? pair : pair.slice(0, eq)).slice(0, 64);
      if (name !== '') names.push(name);
    }
    if (names.length > 0) out += `?${names.join('&')}`;
  }
  return out;
}

export interface Server {
  readonly port: number;
  readonly url: string;
  readonly router: Router<AnyRoute>;
  /** The certificate being served (HTTPS), else null. */
  readonly tls: CheckedTls | null;
  /**
   * Serves the TLS files again (after a renewal) to new connections; open ones keep the pair they
   * started with. Throws TlsError, still serving the old pair, when the new one cannot be used.
   */
  reloadTls(): CheckedTls;
  /** Apps replaced by reloads, kept (with their connections) until close(). */
  readonly retiredApps: number;
  /** Stops accepting, waits for in-flight requests (up to `graceMs`), closes every connection. */
  close(graceMs?: number): Promise<void>;
}

/** A free TCP port on `host` (for TLS on port 0: see listenFirst). */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** Starts the HTTP server for `app` with `routes` on host:port (port 0 picks a free one). */
export async function startServer(app: App, routes: readonly AnyRoute[], host: string, port: number): Promise<Server> {
  const uws = loadUws();
  const record = recorderFromEnv(); // null unless PARLEY_RECORD_RESPONSES is set
  const router = new Router<AnyRoute>();
  const served = [...routes, ...jsonRoutes(routes)];
  for (const r of served) router.add(r.method, r.path, r);
  const secrets = secretPaths(served);
  const log = app.log;
  const metrics = app.metrics;
  // The client address costs a getpeername() system call per read in uWS (2-3 µs here, a fifth of a
  // GET /users/me), so the log reads it only where it matters: anonymous requests (the rate limiter
  // has usually read it already) and failures. An authenticated success is identified by its user.
  // It must be read before the reply is written: uWS no longer answers for the response after that.
  const logRequests = log.requests;
  const notePeer = (p: Pending, status: number) => {
    if (p.peer === null && !p.aborted && (p.userId === null || status >= 400)) void p.ip;
  };
  const proxies = trustedProxySet(app.config.trustedProxies);
  const tlsFiles =
    app.config.tlsCert && app.config.tlsKey ? { cert: app.config.tlsCert, key: app.config.tlsKey, passphrase: app.config.tlsKeyPassphrase } : null;
  let tls = tlsFiles ? checkTlsPair(tlsFiles) : null;
  let inFlight = 0;
  let idleWaiters: (() => void)[] = [];
  const settle = () => {
    inFlight--;
    if (inFlight === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const w of waiters) w();
    }
  };

  const onRequest = (res: HttpResponse, req: HttpRequest) => {
    const sent = req.getCaseSensitiveMethod();
    const p = new Pending(res, METHOD_NAMES.get(sent) ?? sent.toUpperCase(), req.getUrl(), req.getQuery() ?? '', log.nextRequestId(), performance.now(), proxies);
    const headers = p.headers;
    req.forEach((k, v) => {
      headers[k] = k in headers ? `${headers[k]}, ${v}` : v;
    });
    inFlight++;
    res.onAborted(() => {
      p.aborted = true;
      for (const fn of p.onAbort?.splice(0) ?? []) fn();
      finish(p);
    });
    try {
      dispatch(p);
    } catch (err) {
      // An early refusal leaves any request body unread: close the connection rather than reuse it.
      const unread = BODY_METHODS.has(p.method) && (p.headers['content-length'] ?? '0') !== '0';
      sendError(p, err, null, unread);
    }
  };

  /** An app serving every route: plain HTTP, or HTTPS with `pair` (already checked by checkTlsPair). */
  function makeApp(pair: CheckedTls | null): TemplatedApp {
    let made: TemplatedApp;
    if (pair === null) made = uws.App();
    else {
      try {
        // Always a passphrase, '' for a plain key: without one OpenSSL would prompt on a terminal if
        // the key turned encrypted after the check.
        made = uws.SSLApp({ cert_file_name: pair.cert, key_file_name: pair.key, passphrase: pair.passphrase ?? '' });
      } catch {
        // The files changed between the check and uWS reading them (a renewal half written), or
        // OpenSSL refused what Node's crypto accepted.
        throw new TlsError(`the TLS certificate ${pair.cert} and key ${pair.key} could not be loaded by the HTTPS server`);
      }
    }
    made.any('/*', onRequest);
    return made;
  }

  function finish(p: Pending): void {
    if (p.done) return;
    p.done = true;
    for (const f of p.tempFiles) fs.rm(f, { force: true }, () => undefined);
    settle();
    if (log.requests || metrics) {
      const ms = performance.now() - p.start;
      const status = p.status === 0 ? 499 : p.status;
      metrics?.observe(p.method, p.route ?? null, status, ms / 1000);
      if (log.requests) {
        const line = { id: p.id, method: p.method, path: p.loggedPath ?? loggedPath(p.url, p.query, secrets, p.route), status, durationMs: ms, userId: p.userId, ip: p.peer || null };
        // An answer that waited (a parked poll, made ready by run()) is written soon, not now: a
        // fan-out writes many of them in one turn (see requestSoon). Any other request: now, which
        // spares it a microtask.
        if (p.loggedPath !== undefined) log.requestSoon(line);
        else log.request(line);
      }
    }
  }

  // The reply being written, for corked() (uWS runs a cork callback synchronously, so module-level
  // slots are enough and no closure is made per reply).
  let wP: Pending;
  let wStatus = 0;
  let wHeaders: Record<string, string> = NO_HEADERS;
  let wBody: string | Buffer = '';
  let wClose = false;
  const corked = () => {
    const { res, extraHeaders } = wP;
    res.writeStatus(statusLine(wStatus));
    res.writeHeader('X-Request-Id', wP.id);
    if (extraHeaders !== NO_HEADERS) for (const k in extraHeaders) if (!(k in wHeaders)) res.writeHeader(k, extraHeaders[k]);
    for (const k in wHeaders) res.writeHeader(k, wHeaders[k]);
    // 204 and 304 have no body and must not announce a Content-Length (RFC 9110 §8.6).
    // (No argument at all: uWS reads an explicit undefined as a length.)
    if (wStatus === 204 || wStatus === 304) res.endWithoutBody();
    else if (wP.method === 'HEAD') res.endWithoutBody(Buffer.byteLength(wBody), wClose);
    else res.end(wBody, wClose);
  };

  function write(p: Pending, status: number, headers: Record<string, string>, body: string | Buffer, close = false): void {
    if (p.aborted || p.done) return;
    close ||= p.bodyUnread === true;
    p.status = status;
    if (logRequests) notePeer(p, status);
    if (record && p.route && typeof body === 'string') record(p.method, p.route, status, body);
    wP = p;
    wStatus = status;
    wHeaders = headers;
    wBody = body;
    wClose = close;
    try {
      p.res.cork(corked);
    } finally {
      wBody = '';
    }
    finish(p);
  }

  /** Writes the reply once this turn's writes are committed (a failed commit becomes a 500). */
  function reply(p: Pending, status: number, headers: Record<string, string>, body: string | Buffer, close = false): void {
    if (!app.batch.mustWait || p.operational) {
      write(p, status, headers, body, close);
      return;
    }
    app.batch.afterCommit((committed) => {
      if (committed) write(p, status, headers, body, close);
      else write(p, 500, JSON_HEADERS, JSON.stringify({ result: 'error', msg: 'Internal server error', code: 'INTERNAL_SERVER_ERROR' }));
    });
  }

  function sendError(p: Pending, err: unknown, user: UserRow | null, close = false): void {
    let e: JsonableError;
    if (err instanceof JsonableError) e = p.session ? withSessionChallenge(err) : err;
    else {
      // The one place a server error's stack is logged, with the id the client sees in X-Request-Id.
      log.error('unexpected error', { request_id: p.id, method: p.method, path: loggedPath(p.url, p.query, secrets, p.route), err });
      e = errors.internal();
    }
    const body = {
      result: 'error',
      msg: translate(user?.default_language, e.template, e.vars),
      code: e.code,
      ...e.data,
    };
    reply(p, e.status, { ...JSON_HEADERS, ...e.headers }, JSON.stringify(body), close);
  }

  function dispatch(p: Pending): void {
    const match = router.match(p.method === 'OPTIONS' ? 'GET' : p.method, p.url);
    if (p.method === 'OPTIONS') {
      const allowed = router.match('__none__', p.url);
      const methods = allowed.kind === 'method' ? allowed.allowed : match.kind === 'found' ? ['GET'] : [];
      if (methods.length === 0) throw errors.notFound();
      const any = router.match(methods[0], p.url);
      const extra = any.kind === 'found' ? (any.handler.optionsHeaders?.(app) ?? {}) : {};
      write(p, 204, { ...extra, Allow: [...methods, ...(methods.includes('GET') ? ['HEAD'] : [])].join(', ') }, '');
      return;
    }
    if (match.kind === 'none') throw errors.notFound();
    if (match.kind === 'method') throw errors.methodNotAllowed(match.allowed);
    const route = match.handler;
    p.route = apiPattern(route.path);
    p.operational = route.operational === true;
    if (!p.operational) app.batch.begin();

    // Authenticate from the headers before reading a possibly large body.
    let user: UserRow | null = null;
    if (route.auth === 'session') {
      p.session = true;
      user = authenticateWebRequest(app, p.method, p.headers);
      p.sessionToken = readCookie(p.headers.cookie, SESSION_COOKIE);
    } else if (route.auth !== 'public') {
      if (route.auth === 'user_or_session' && !p.headers.authorization) {
        user = authenticateSession(app, p.headers.cookie);
        if (!user) throw errors.unauthorized();
        p.sessionToken = readCookie(p.headers.cookie, SESSION_COOKIE);
      } else {
        user = authenticateBasic(app, p.headers.authorization);
      }
    }
    if (user) p.userId = user.id;

    // Per user once authenticated, per address otherwise (Zulip's api_by_user / api_by_ip).
    if (app.limits.enabled && !p.operational) {
      const d = user
        ? app.limits.hit(`user:${user.id}`, app.limits.rules.apiByUser, app.clock.nowMs())
        : app.limits.hit(`ip:${p.ip}`, app.limits.rules.apiByIp, app.clock.nowMs());
      p.extraHeaders = rateLimitHeaders(d);
      if (!d.allowed) throw errors.rateLimited(Math.round(d.retryAfter * 1000) / 1000);
    }

    if (route.requires !== undefined && user !== null) {
      if (route.requires === 'owner' ? !isOwner(user) : !isAdmin(user)) throw route.requires === 'owner' ? errors.ownerRequired() : errors.adminRequired();
    }

    const form = parseUrlencoded(p.query);
    if (route.rawBody) {
      run(p, route, match.params, user, form, [], BODY_METHODS.has(p.method) ? openRawBody(p) : null);
      return;
    }
    if (!BODY_METHODS.has(p.method)) {
      run(p, route, match.params, user, form, []);
      return;
    }
    readBody(p, route, user, form)
      .then(({ fields, files }) => {
        if (p.aborted) return;
        for (const [k, v] of fields) form.set(k, v); // body values win over the query string, as in Django
        run(p, route, match.params, user, form, files);
      })
      .catch((err) => sendError(p, err, user, true));
  }

  /**
   * The request body for rawBody routes, with backpressure: uWS pauses while the consumer lags.
   * Called synchronously in the request callback (uWS wants onData registered before it returns).
   */
  function openRawBody(p: Pending): RawBody {
    const body = new RawBody(
      () => !p.aborted && !p.done && p.res.pause(),
      () => !p.aborted && !p.done && p.res.resume(),
    );
    const declared = Number(p.headers['content-length'] ?? '0');
    const chunked = /chunked/i.test(p.headers['transfer-encoding'] ?? '');
    if (declared === 0 && !chunked) {
      body.end();
      return body;
    }
    p.bodyUnread = true;
    (p.onAbort ??= []).push(() => body.fail(new Error('client went away')));
    p.res.onData((ab, isLast) => {
      body.push(ab);
      if (isLast) {
        p.bodyUnread = false;
        body.end();
      }
    });
    return body;
  }

  /**
   * Streams a file as the reply body through one reused buffer, only as fast as the client reads it
   * (tryEnd/onWritable): memory stays flat whatever the file size.
   */
  function sendFile(p: Pending, r: FileReply): void {
    if (p.aborted || p.done) return;
    const headers = { ...p.extraHeaders, ...r.headers, 'X-Request-Id': p.id };
    p.status = r.status;
    if (logRequests) notePeer(p, r.status);
    let headWritten = false;
    const writeHead = () => {
      headWritten = true;
      p.res.writeStatus(`${r.status} ${STATUS_TEXT[r.status] ?? ''}`.trim());
      for (const [k, v] of Object.entries(headers)) p.res.writeHeader(k, v);
    };
    if (p.method === 'HEAD' || r.size === 0) {
      try {
        p.res.cork(() => {
          writeHead();
          if (p.method === 'HEAD') p.res.endWithoutBody(r.size);
          else p.res.end('');
        });
      } catch (err) {
        // A head uWS refuses (a bug of ours): the connection is closed rather than left hanging.
        log.error('writing a file reply failed', { request_id: p.id, err });
        p.res.close();
      }
      finish(p);
      return;
    }
    let fd: number | null = null;
    const release = () => {
      if (fd !== null) fs.close(fd, () => undefined);
      fd = null;
    };
    (p.onAbort ??= []).push(release);
    const fail = (err: unknown) => {
      release();
      if (p.aborted || p.done) return;
      log.error('streaming a file failed', { request_id: p.id, err });
      if (!headWritten) write(p, 500, JSON_HEADERS, JSON.stringify({ result: 'error', msg: 'Internal server error', code: 'INTERNAL_SERVER_ERROR' }));
      else {
        p.res.close();
        finish(p);
      }
    };
    const buf = Buffer.allocUnsafeSlow(Math.min(256 * 1024, r.size));
    let pos = 0;
    // Reading the next block only once uWS has taken all of the previous one lets one buffer serve.
    const pump = () => {
      if (p.aborted || p.done || fd === null) return release();
      fs.read(fd, buf, 0, Math.min(buf.length, r.size - pos), pos, (err, n) => {
        if (err) return fail(err);
        if (n === 0) return fail(new Error('file shorter than its recorded size'));
        if (p.aborted || p.done) return release();
        const chunk = buf.subarray(0, n);
        pos += n;
        let ok = false;
        let done = false;
        let base = 0;
        try {
          p.res.cork(() => {
            if (!headWritten) writeHead();
            base = p.res.getWriteOffset();
            [ok, done] = p.res.tryEnd(chunk, r.size);
          });
        } catch (err) {
          // Thrown inside an fs callback, it would leave the request hanging: fail it instead.
          return fail(err);
        }
        if (done) {
          release();
          finish(p);
        } else if (ok) pump();
        else {
          p.res.onWritable((offset) => {
            if (p.aborted || p.done) return true;
            const [ok2, done2] = p.res.tryEnd(chunk.subarray(offset - base), r.size);
            if (done2) {
              release();
              finish(p);
            } else if (ok2) pump();
            return ok2;
          });
        }
      });
    };
    fs.open(r.path, 'r', (err, opened) => {
      if (err) return fail(err);
      if (p.aborted || p.done) return void fs.close(opened, () => undefined);
      fd = opened;
      pump();
    });
  }

  function readBody(
    p: Pending,
    route: AnyRoute,
    user: UserRow | null,
    _form: Map<string, string>,
  ): Promise<{ fields: Map<string, string>; files: UploadedFile[] }> {
    const contentType = p.headers['content-type'] ?? '';
    const maxFile = app.config.maxFileUploadSizeMib * 1024 * 1024;
    const limit = app.config.maxBodyBytes + (route.files ? maxFile : 0);
    const declared = Number(p.headers['content-length'] ?? '0');
    return new Promise((resolve, reject) => {
      if (declared > limit) {
        reject(errors.payloadTooLarge(limit));
        return;
      }
      // No body at all: uWS may never call onData (e.g. when the header block ends a packet), so
      // don't wait for it. A multipart request needs at least its closing boundary.
      const chunked = /chunked/i.test(p.headers['transfer-encoding'] ?? '');
      if (declared === 0 && !chunked) {
        if (/^multipart\/form-data/i.test(contentType)) reject(errors.badRequest('Malformed multipart body'));
        else resolve({ fields: new Map(), files: [] });
        return;
      }
      let received = 0;
      let failed = false;
      const isMultipart = /^multipart\/form-data/i.test(contentType);
      let parser: MultipartParser | null = null;
      const chunks: Buffer[] = [];
      if (isMultipart) {
        let tmpDir: string | null = null;
        if (route.files) {
          tmpDir = path.join(app.uploadsDir, 'tmp');
          fs.mkdirSync(tmpDir, { recursive: true });
        }
        const pauses = new Set<string>();
        try {
          parser = new MultipartParser({
            contentType,
            tmpDir,
            maxFieldBytes: app.config.maxBodyBytes,
            // busboy flags a file that reaches its limit as truncated: allow one byte more so a
            // file of exactly max_file_upload_size_mib passes and one byte over is refused.
            maxFileBytes: maxFile + 1,
            flow: (reason, paused) => {
              if (p.aborted || p.done) return;
              if (paused) pauses.add(reason);
              else pauses.delete(reason);
              if (pauses.size > 0) p.res.pause();
              else p.res.resume();
            },
          });
        } catch (err) {
          reject(err);
          return;
        }
        // Once parsing is over nothing will resume the socket: lift any pause before the reply, or the
        // next request on this keep-alive connection would never be read.
        const release = () => {
          if (pauses.size > 0 && !p.aborted && !p.done) p.res.resume();
          pauses.clear();
        };
        parser.done.then(
          (r) => {
            release();
            resolve({ fields: r.fields, files: r.files });
          },
          (err) => {
            release();
            reject(err);
          },
        );
      }
      p.res.onData((ab, isLast) => {
        if (failed) return;
        received += ab.byteLength;
        if (received > limit) {
          failed = true;
          if (parser) p.tempFiles.push(...parser.tempFiles());
          reject(errors.payloadTooLarge(limit));
          return;
        }
        if (parser) {
          parser.write(ab); // the parser copies it into reused buffers (uWS reuses ab after this call)
          if (isLast) {
            p.tempFiles.push(...parser.tempFiles());
            parser.end();
            p.tempFiles.push(...parser.tempFiles());
          }
          return;
        }
        chunks.push(Buffer.from(ab.slice(0))); // uWS reuses the buffer: copy it
        if (isLast) {
          try {
            const body = Buffer.concat(chunks);
            const isForm = contentType === '' || /^application\/x-www-form-urlencoded/i.test(contentType);
            resolve({ fields: isForm ? parseUrlencodedBody(body) : new Map(), files: [] });
          } catch (err) {
            reject(err);
          }
        }
      });
      void user;
    });
  }

  function run(
    p: Pending,
    route: AnyRoute,
    pathParams: Record<string, string>,
    user: UserRow | null,
    form: Map<string, string>,
    files: UploadedFile[],
    body: RawBody | null = null,
  ): void {
    for (const f of files) if (!p.tempFiles.includes(f.path)) p.tempFiles.push(f.path);
    try {
      if (!p.operational) app.batch.begin(); // a body may arrive in a later turn: its reads join that turn's transaction
      const { values, used } = readParams(route.params, form);
      const ctx = new RequestCtx(app, user, values, pathParams, files, body, p);
      const result = route.handle(ctx);
      if (result instanceof Promise) {
        // A long-poll is answered in a fan-out of many replies in one turn: what its log line needs
        // is made now, while it waits, rather than between two of those replies.
        if (log.requests) p.loggedPath = loggedPath(p.url, p.query, secrets, p.route);
        result.then((r) => respond(p, r, ctx, form, used), (err) => sendError(p, err, user));
      } else respond(p, result, ctx, form, used);
    } catch (err) {
      sendError(p, err, user);
    }
  }

  function respond(p: Pending, r: HandlerResult, ctx: RequestCtx, form: Map<string, string>, used: ReadonlySet<string>): void {
    if (r instanceof Reply) {
      reply(p, r.status, r.headers, r.body);
      return;
    }
    if (r instanceof FileReply) {
      app.batch.afterCommit((committed) => {
        if (committed) sendFile(p, r);
        else write(p, 500, JSON_HEADERS, JSON.stringify({ result: 'error', msg: 'Internal server error', code: 'INTERNAL_SERVER_ERROR' }));
      });
      return;
    }
    let ignored: string[] = [];
    if (ctx.extraIgnored !== null || form.size > used.size) {
      const set = new Set(ctx.extraIgnored);
      for (const key of form.keys()) if (!used.has(key)) set.add(key);
      ignored = [...set].sort();
    }
    if (r instanceof JsonFields) {
      // The recorder wants text; otherwise the cached bytes spare a UTF-8 conversion per reply.
      reply(p, 200, JSON_HEADERS, ignored.length > 0 || record ? r.successText(ignored) : r.successBody());
      return;
    }
    const out: Record<string, unknown> = { result: 'success', msg: '', ...r };
    if (ignored.length > 0) out.ignored_parameters_unsupported = ignored;
    reply(p, 200, JSON_HEADERS, JSON.stringify(out));
  }

  /**
   * Listens on host:port; resolves to the listen socket, or null when the port is taken. A certificate
   * reload listens a new app on the same port beside the old one, which needs SO_REUSEPORT on both
   * sockets: uSockets sets it for a given port but not for port 0, so TLS on port 0 first picks a free
   * port (retrying if another process takes it in between).
   */
  function listenOn(target: TemplatedApp, p: number): Promise<us_listen_socket | null> {
    return new Promise((resolve) => target.listen(host, p, (socket: us_listen_socket | false) => resolve(socket || null)));
  }

  async function listenFirst(target: TemplatedApp): Promise<us_listen_socket> {
    if (tls === null || port !== 0) {
      const socket = await listenOn(target, port);
      if (!socket) throw new Error(`could not listen on ${host}:${port}`);
      return socket;
    }
    for (let attempt = 0; attempt < 5; attempt++) {
      const socket = await listenOn(target, await freePort(host));
      if (socket) return socket;
    }
    throw new Error(`could not listen on ${host}:${port}`);
  }

  let http = makeApp(tls);
  /** Apps replaced by a reload: they still serve the connections they accepted, until close(). */
  const retired: TemplatedApp[] = [];
  let socket = await listenFirst(http);
  const boundPort = uws.us_socket_local_port(socket);
  let closing: Promise<void> | null = null;
  return {
    port: boundPort,
    url: boundUrl({ host, port: boundPort, tlsCert: tls ? tls.cert : null }),
    router,
    get tls() {
      return tls;
    },
    get retiredApps() {
      return retired.length;
    },
    reloadTls() {
      if (tlsFiles === null) throw new TlsError('the server does not serve TLS');
      if (closing) throw new TlsError('the server is stopping');
      const pair = checkTlsPair(tlsFiles);
      // Same files (a reload from cron, a config tool): keep the app. Each replaced app stays in
      // memory with its connections until close(), so reloads must not pile them up for nothing.
      if (tls !== null && pair.filesSha256 === tls.filesSha256) return tls;
      const next = makeApp(pair);
      // uWS calls back synchronously: the new socket is listening before the old one closes, so the
      // port never stops accepting. Connections the kernel queued on the old socket in between (a
      // window of microseconds) are reset, as on any restart.
      let nextSocket = false as us_listen_socket | false;
      next.listen(host, boundPort, (s: us_listen_socket | false) => {
        nextSocket = s;
      });
      if (nextSocket === false) {
        (next as unknown as { close(): void }).close();
        throw new TlsError(`could not listen on ${host}:${boundPort} with the new certificate`);
      }
      uws.us_listen_socket_close(socket);
      retired.push(http);
      http = next;
      socket = nextSocket;
      tls = pair;
      return pair;
    },
    close(graceMs = 10_000) {
      closing ??= (async () => {
        uws.us_listen_socket_close(socket);
        if (inFlight > 0) {
          await new Promise<void>((res) => {
            const timer = setTimeout(res, graceMs);
            idleWaiters.push(() => {
              clearTimeout(timer);
              res();
            });
          });
        }
        for (const a of [...retired, http]) (a as unknown as { close(): void }).close();
      })();
      return closing;
    },
  };
}

const SLAB = 512 * 1024; // uWS hands over at most its receive buffer (512 KiB) per onData

/**
 * A raw request body as an async iterable of chunks. uWS reuses its buffer, so each chunk is copied
 * into one of a few reused slabs; a chunk stays valid until the consumer asks for the next one.
 * Reading pauses the socket while four chunks wait and resumes it when one is left.
 */
class RawBody implements BodyStream {
  private queue: { slab: Buffer; length: number }[] = [];
  private free: Buffer[] = [];
  private lent: Buffer | null = null;
  private ended = false;
  private error: Error | null = null;
  private waiter: (() => void) | null = null;
  private paused = false;

  constructor(
    private readonly pause: () => void,
    private readonly resume: () => void,
  ) {}

  push(ab: ArrayBuffer): void {
    if (this.error || this.ended) return;
    const n = ab.byteLength;
    let slab = this.free.pop();
    if (!slab || slab.length < n) slab = Buffer.allocUnsafeSlow(Math.max(SLAB, n));
    Buffer.from(ab).copy(slab, 0, 0, n);
    this.queue.push({ slab, length: n });
    if (this.queue.length >= 4 && !this.paused) {
      this.paused = true;
      this.pause();
    }
    this.wake();
  }

  end(): void {
    this.ended = true;
    this.wake();
  }

  fail(err: Error): void {
    this.error ??= err;
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }

  private recycle(): void {
    if (this.lent && this.free.length < 4) this.free.push(this.lent);
    this.lent = null;
  }

  async next(): Promise<IteratorResult<Buffer>> {
    this.recycle();
    for (;;) {
      const item = this.queue.shift();
      if (item) {
        if (this.paused && this.queue.length <= 1) {
          this.paused = false;
          this.resume();
        }
        this.lent = item.slab;
        return { done: false, value: item.slab.subarray(0, item.length) };
      }
      if (this.error) throw this.error;
      if (this.ended) return { done: true, value: undefined };
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    return {
      next: () => this.next(),
      return: async () => {
        this.recycle();
        return { done: true, value: undefined };
      },
    };
  }
}
