// What a route declares: method, path, who may call it, its parameters and a short handler.
import type { App } from '../app';
import type { UserRow } from '../lib/users';
import type { ParamSpec, ParsedParams } from './params';
import type { Method } from './router';

/**
 * public: no credentials; user: HTTP Basic with an API key; user_or_session: Basic or the web session
 * cookie; session: the web app's session cookie with CSRF (the /json copy of every API route, made by
 * jsonRoutes()).
 */
export type AuthLevel = 'public' | 'user' | 'user_or_session' | 'session';

export interface UploadedFile {
  field: string;
  filename: string;
  mimeType: string;
  /** Temporary file holding the bytes; the handler moves it or it is deleted after the reply. */
  path: string;
  size: number;
}

export interface Ctx<V, U> {
  app: App;
  user: U;
  params: V;
  /** Path parameters, percent-decoded. */
  path: Record<string, string>;
  /** Request headers, lower-case names. */
  headers: Record<string, string>;
  method: string;
  url: string;
  ip: string;
  /**
   * The session token that authenticated the request (the web app's cookie), or null for Basic and
   * public requests: what a password change keeps logged in while ending every other session.
   */
  sessionToken: string | null;
  files: UploadedFile[];
  /**
   * The raw request body (routes declared `rawBody: true`; null otherwise): `for await` over its
   * chunks, with backpressure. A chunk's buffer is reused once the next chunk is asked for, so
   * finish with (or copy) each chunk first. Iteration throws if the client goes away mid-body.
   */
  body: BodyStream | null;
  /** Reports a parameter as ignored (e.g. PATCH /settings for an unchanged value). */
  ignore(name: string): void;
  /** Runs `fn` if the client disconnects before the reply is written (parked long-polls). */
  onAbort(fn: () => void): void;
}

/** A non-envelope reply: HTML pages, files, redirects, tus responses. */
export class Reply {
  constructor(
    readonly status: number,
    readonly headers: Record<string, string>,
    readonly body: string | Buffer = '',
  ) {}
}

/** A request body read chunk by chunk; each chunk is valid until the next is requested. */
export type BodyStream = AsyncIterable<Buffer>;

/** A reply whose body is streamed from a file on disk (downloads), never read whole into memory. */
export class FileReply {
  constructor(
    readonly status: number,
    readonly headers: Record<string, string>,
    readonly path: string,
    readonly size: number,
  ) {}
}

/**
 * Success fields already serialised as one JSON object (`{"a":1}`), for hot routes whose answer is
 * cached as text (lib/read-cache.ts): the envelope is spliced around it, byte for byte what
 * JSON.stringify of the same fields would give.
 */
export class JsonFields {
  private text?: string;
  private bytes?: Buffer;
  /** The fields without the enclosing braces, when given so (JsonFields.ofInner). */
  private inner?: string;
  constructor(readonly json: string) {}

  /**
   * Fields given without their braces (`"a":1,"b":[]`, never empty). A reply assembled from parts (a
   * parked poll's answer) is then spliced into the envelope as it is: slicing the braces off a
   * concatenated string makes V8 copy it flat once more before the socket write copies it again.
   */
  static ofInner(inner: string): JsonFields {
    const f = new JsonFields(`{${inner}}`);
    f.inner = inner;
    return f;
  }

  /**
   * The whole success body (no ignored parameters). A one-shot answer (a parked poll) goes out as the
   * text; from the second use on (an answer cached in lib/read-cache.ts) the UTF-8 bytes are kept, so
   * repeats skip the conversion.
   */
  successBody(): string | Buffer {
    if (this.bytes) return this.bytes;
    if (this.text === undefined) return (this.text = this.successText());
    return (this.bytes = Buffer.from(this.text));
  }

  /** The success body with `ignored_parameters_unsupported` when there are any (sorted). */
  successText(ignored: readonly string[] = []): string {
    const inner = this.inner !== undefined ? `,${this.inner}` : this.json.length > 2 ? `,${this.json.slice(1, -1)}` : '';
    const tail = ignored.length > 0 ? `,"ignored_parameters_unsupported":${JSON.stringify(ignored)}` : '';
    return `{"result":"success","msg":""${inner}${tail}}`;
  }
}

export type HandlerResult = Record<string, unknown> | Reply | FileReply | JsonFields;

export interface RouteDef<S extends ParamSpec, U> {
  method: Method;
  path: string;
  auth: AuthLevel;
  params?: S;
  /**
   * A role the caller must have, checked right after authentication and before any parameter is read,
   * as Zulip's @require_realm_admin / @require_realm_owner decorators do (so a member sending bad
   * parameters hears about the permission, not the parameters).
   */
  requires?: 'admin' | 'owner';
  /** Accept multipart file parts (streamed to temporary files). */
  files?: boolean;
  /** Don't parse the body: hand it to the handler as `ctx.body` (tus PATCH). Parameters come from the query only. */
  rawBody?: boolean;
  /**
   * An operator's endpoint (GET /health, GET /metrics): never rate limited, and run outside the turn's
   * write batch, so it answers (503) even when the database cannot open a transaction, and its reply
   * never waits for other requests' commit.
   */
  operational?: boolean;
  /** Extra headers for the automatic OPTIONS answer on this path (tus discovery). */
  optionsHeaders?: (app: App) => Record<string, string>;
  handle(ctx: Ctx<ParsedParams<S>, U>): HandlerResult | Promise<HandlerResult>;
}

export type AnyRoute = RouteDef<ParamSpec, UserRow | null>;

/** Declares an authenticated route. */
export function route<S extends ParamSpec = {}>(def: RouteDef<S, UserRow> & { auth: 'user' | 'user_or_session' }): AnyRoute {
  return def as unknown as AnyRoute;
}

/** Declares a route that needs no credentials. */
export function publicRoute<S extends ParamSpec = {}>(def: Omit<RouteDef<S, null>, 'auth'>): AnyRoute {
  return { ...def, auth: 'public' } as unknown as AnyRoute;
}

const API_PREFIX = '/api/v1/';

/**
 * The web app's copies of the API routes: `/json/...` for every `/api/v1/...`, the same handler and
 * parameters, authenticated by the session cookie + CSRF token instead of Basic (Zulip serves its own
 * web app the same way). Public routes stay public.
 */
export function jsonRoutes(routes: readonly AnyRoute[]): AnyRoute[] {
  return routes
    .filter((r) => r.path.startsWith(API_PREFIX))
    .map((r) => ({ ...r, path: `/json/${r.path.slice(API_PREFIX.length)}`, auth: r.auth === 'public' ? 'public' : 'session' }));
}

/** The /api/v1 pattern a route answers for (the /json copies report their API route). */
export const apiPattern = (path: string): string => (path.startsWith('/json/') ? `${API_PREFIX}${path.slice(6)}` : path);
