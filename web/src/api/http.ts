// Requests to Parley's API as the web app makes them: under /json, with the session cookie (sent by the
// browser) and the CSRF token (read from the csrftoken cookie, sent back as X-CSRFToken), parameters
// form-encoded the Zulip way (strings raw, everything else as JSON).

/** The server answered with an error envelope (or a non-JSON error status). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** The server could not be reached (or the request timed out). */
export class NetworkError extends Error {}

export type Params = Record<string, unknown>;

/** Zulip clients' encoding: strings as they are, everything else JSON. */
export function encodeParams(params: Params): URLSearchParams {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    form.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  }
  return form;
}

function csrfToken(): string {
  const m = /(?:^|;\s*)csrftoken=([^;]*)/.exec(document.cookie);
  if (!m) return '';
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return m[1]; // a malformed cookie someone planted: the server refuses it, with its own error
  }
}

/** The page is being left (logging out, reloading): a 401 then must not start a second navigation. */
let leaving = false;
window.addEventListener('beforeunload', () => (leaving = true));
window.addEventListener('pageshow', () => (leaving = false));

/** Called when the session is gone (401): the app goes to the login page. */
let onUnauthorized: () => void = () => {
  if (leaving) return;
  window.location.assign('/login' + (window.location.hash ? `#${window.location.hash.slice(1)}` : ''));
};
export function setUnauthorizedHandler(fn: () => void): void {
  onUnauthorized = fn;
}

export interface RequestOptions {
  signal?: AbortSignal;
  /** Gives up after this many ms (a NetworkError). */
  timeoutMs?: number;
  /** Outlives the page (a request made while it unloads). */
  keepalive?: boolean;
}

/** Calls `/json/<path>`; resolves to the success body, throws ApiError or NetworkError. */
export async function api<T = Record<string, unknown>>(method: string, path: string, params: Params = {}, opts: RequestOptions = {}): Promise<T> {
  const form = encodeParams(params);
  let url = `/json/${path.replace(/^\//, '')}`;
  const init: RequestInit = { method, credentials: 'same-origin', headers: {}, keepalive: opts.keepalive };
  if (method === 'GET') {
    const q = form.toString();
    if (q) url += `?${q}`;
  } else {
    init.body = form;
    (init.headers as Record<string, string>)['X-CSRFToken'] = csrfToken();
  }
  const timeout = opts.timeoutMs ? AbortSignal.timeout(opts.timeoutMs) : undefined;
  const signals = [opts.signal, timeout].filter((x): x is AbortSignal => x !== undefined);
  if (signals.length) init.signal = signals.length === 1 ? signals[0] : anySignal(signals);
  let res: Response;
  try {
    res = await fetch(url, init);
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    throw new NetworkError(timeout?.aborted ? 'The server took too long to answer.' : 'Cannot reach the server.');
  }
  let body: Record<string, unknown> | null = null;
  try {
    body = (await res.json()) as Record<string, unknown>;
  } catch {
    body = null;
  }
  if (res.ok && body && body.result === 'success') return body as T;
  if (res.status === 401) onUnauthorized();
  if (!body) {
    // A proxy's error page, or the server restarting: not the API's answer.
    if (res.status >= 500 || res.status === 0) throw new NetworkError(`The server answered ${res.status}.`);
    throw new ApiError(res.status, 'BAD_RESPONSE', `The server answered ${res.status}.`, {});
  }
  throw new ApiError(res.status, String(body.code ?? 'BAD_REQUEST'), String(body.msg ?? `Error ${res.status}`), body);
}

function anySignal(signals: AbortSignal[]): AbortSignal {
  const c = new AbortController();
  for (const s of signals) {
    if (s.aborted) c.abort(s.reason);
    else s.addEventListener('abort', () => c.abort(s.reason), { once: true });
  }
  return c.signal;
}
