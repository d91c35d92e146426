// The one error catalogue. Every client-visible failure is a JsonableError: a machine-readable code,
// an HTTP status, a message template (English; translated when rendered), extra top-level keys and
// headers. Anything thrown that is not a JsonableError becomes a logged 500 without internals.

export type ErrorCode =
  | 'BAD_REQUEST'
  | 'REQUEST_VARIABLE_MISSING'
  | 'REQUEST_VARIABLE_INVALID'
  | 'REQUEST_CONFUSING_VAR'
  | 'INVALID_JSON'
  | 'INVALID_API_KEY'
  | 'UNAUTHORIZED'
  | 'CSRF_FAILED'
  | 'USER_DEACTIVATED'
  | 'REALM_DEACTIVATED'
  | 'AUTHENTICATION_FAILED'
  | 'PASSWORD_AUTH_DISABLED'
  | 'RATE_LIMIT_HIT'
  | 'STREAM_DOES_NOT_EXIST'
  | 'CHANNEL_ALREADY_EXISTS'
  | 'INVITATION_FAILED'
  | 'UNAUTHORIZED_PRINCIPAL'
  | 'PERMISSION_DENIED'
  | 'PUSH_SERVICE_NOT_CONFIGURED'
  | 'INVALID_PUSH_DEVICE_TOKEN'
  | 'NO_ACTIVE_PUSH_DEVICE'
  | 'ADMIN_ACTION_REQUIRED'
  | 'FAILED_TO_CONNECT_BOUNCER'
  | 'INTERNAL_SERVER_ERROR_ON_BOUNCER'
  | 'INVALID_REMOTE_PUSH_DEVICE_TOKEN'
  | 'BAD_NARROW'
  | 'BAD_EVENT_QUEUE_ID'
  | 'BAD_IMAGE'
  | 'REALM_UPLOAD_QUOTA'
  | 'CANNOT_DEACTIVATE_LAST_USER'
  | 'REACTION_ALREADY_EXISTS'
  | 'REACTION_DOES_NOT_EXIST'
  | 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED'
  | 'EXPECTATION_MISMATCH'
  | 'SYSTEM_GROUP_REQUIRED'
  | 'CANNOT_DEACTIVATE_GROUP_IN_USE'
  | 'TOPIC_WILDCARD_MENTION_NOT_ALLOWED'
  | 'STREAM_WILDCARD_MENTION_NOT_ALLOWED'
  | 'REQUEST_TIMEOUT'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'PAYLOAD_TOO_LARGE'
  | 'INTERNAL_SERVER_ERROR'
  | 'SERVER_NOT_READY';

export interface ErrorOptions {
  code?: ErrorCode;
  status?: number;
  /** Extra top-level keys of the error body (var_name, stream_id, ...). */
  data?: Record<string, unknown>;
  headers?: Record<string, string>;
  /** Values for {placeholders} in the template. */
  vars?: Record<string, unknown>;
}

/** A client-visible error; `template` is English with {placeholders}, rendered per locale. */
export class JsonableError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly data: Record<string, unknown>;
  readonly headers: Record<string, string>;
  readonly template: string;
  readonly vars: Record<string, unknown>;

  constructor(template: string, opts: ErrorOptions = {}) {
    const vars = { ...(opts.data ?? {}), ...(opts.vars ?? {}) };
    // A client error needs no stack trace: skip capturing one.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(template.replace(/\{(\w+)\}/g, (w, k: string) => (k in vars ? String(vars[k]) : w)));
    Error.stackTraceLimit = limit;
    this.template = template;
    this.vars = vars;
    this.code = opts.code ?? 'BAD_REQUEST';
    this.status = opts.status ?? 400;
    this.data = opts.data ?? {};
    this.headers = opts.headers ?? {};
  }
}

const BASIC = { 'WWW-Authenticate': 'Basic realm="zulip"' };
/**
 * zulip-compat: /json answers 401 with a "Session" challenge (json_unauthorized(www_authenticate=
 * "session")): a Basic challenge would make the browser pop up its own password dialog.
 */
const SESSION = { 'WWW-Authenticate': 'Session realm="zulip"' };

/** The same error as `e` with the session challenge instead of Basic (a 401 on /json). */
export function withSessionChallenge(e: JsonableError): JsonableError {
  if (e.status !== 401 || e.headers['WWW-Authenticate'] === undefined) return e;
  return new JsonableError(e.template, { code: e.code, status: e.status, data: e.data, vars: e.vars, headers: { ...e.headers, ...SESSION } });
}

// One constructor per machine-readable failure, so handlers never spell codes or statuses.
export const errors = {
  badRequest: (template: string, vars?: Record<string, unknown>) => new JsonableError(template, { vars }),
  missing: (varName: string) =>
    new JsonableError("Missing '{var_name}' argument", { code: 'REQUEST_VARIABLE_MISSING', data: { var_name: varName } }),
  /**
   * Zulip's RequestVariableConversionError: a value of the right type that a setting cannot take (a time
   * limit or retention period of zero, an unknown special word); var_name and bad_value as keys too.
   */
  badValue: (varName: string, badValue: string | number) =>
    new JsonableError("Bad value for '{var_name}': {bad_value}", {
      code: 'REQUEST_VARIABLE_INVALID',
      data: { var_name: varName, bad_value: badValue },
    }),
  confusing: (a: string, b: string) =>
    new JsonableError("Can't decide between '{var_name1}' and '{var_name2}' arguments", {
      code: 'REQUEST_CONFUSING_VAR',
      data: { var_name1: a, var_name2: b },
    }),
  incompatible: (names: string[]) =>
    new JsonableError('Unsupported parameter combination: {parameters}', { data: { parameters: names.join(', ') } }),
  /** Zulip's BadImageError (an upload that is not an image it accepts). */
  badImage: (template: string) => new JsonableError(template, { code: 'BAD_IMAGE' }),
  invalidJson: () => new JsonableError('Malformed JSON', { code: 'INVALID_JSON' }),
  unauthorized: (template = 'Not logged in: API authentication or user session required') =>
    new JsonableError(template, { code: 'UNAUTHORIZED', status: 401, headers: BASIC }),
  /** Zulip's CsrfFailureError (403, the reason also as a key), for /json writes without the right X-CSRFToken. */
  csrfFailed: (reason: string) =>
    new JsonableError('CSRF error: {reason}', { code: 'CSRF_FAILED', status: 403, data: { reason } }),
  invalidApiKey: (template = 'Invalid API key') =>
    new JsonableError(template, { code: 'INVALID_API_KEY', status: 401, headers: BASIC }),
  userDeactivated: () =>
    new JsonableError('Account is deactivated', { code: 'USER_DEACTIVATED', status: 401, headers: BASIC }),
  realmDeactivated: () =>
    new JsonableError('This organization has been deactivated', { code: 'REALM_DEACTIVATED', status: 401, headers: BASIC }),
  authenticationFailed: () =>
    new JsonableError('Your username or password is incorrect', { code: 'AUTHENTICATION_FAILED', status: 401 }),
  rateLimited: (retryAfter: number, headers: Record<string, string> = {}) =>
    new JsonableError('API usage exceeded rate limit', {
      code: 'RATE_LIMIT_HIT',
      status: 429,
      data: { 'retry-after': retryAfter },
      headers: { 'Retry-After': String(retryAfter), ...headers },
    }),
  adminRequired: () => new JsonableError('Must be an organization administrator', { code: 'UNAUTHORIZED_PRINCIPAL' }),
  ownerRequired: () => new JsonableError('Must be an organization owner', { code: 'UNAUTHORIZED_PRINCIPAL' }),
  memberRequired: () => new JsonableError('Must be an organization member', { code: 'UNAUTHORIZED_PRINCIPAL' }),
  notForGuests: () => new JsonableError('Not allowed for guest users'),
  notForBots: () => new JsonableError('This endpoint does not accept bot requests.'),
  /** Bot-only endpoints (bot storage) called by a human: the spec's PERMISSION_DENIED. */
  botRequired: () => new JsonableError('This endpoint is only available to bots.', { code: 'PERMISSION_DENIED' }),
  insufficientPermission: () => new JsonableError('Insufficient permission'),
  accessDenied: () => new JsonableError('Access denied', { status: 403 }),
  notFound: (template = 'Not Found') => new JsonableError(template, { status: 404 }),
  noSuchUser: () => new JsonableError('No such user'),
  methodNotAllowed: (allowed: string[]) =>
    new JsonableError('Method Not Allowed', {
      status: 405,
      data: { allowed_methods: allowed },
      headers: { Allow: allowed.join(', ') },
    }),
  payloadTooLarge: (limitBytes: number) =>
    new JsonableError('Request body too large (limit: {limit} bytes)', { status: 413, vars: { limit: limitBytes } }),
  streamIdMissing: (streamId: number) =>
    new JsonableError("Channel with ID '{stream_id}' does not exist", {
      code: 'STREAM_DOES_NOT_EXIST',
      data: { stream_id: streamId },
    }),
  cannotDeactivateLast: (entity: string, isLastOwner: boolean) =>
    new JsonableError('Cannot deactivate the only {entity}.', {
      code: 'CANNOT_DEACTIVATE_LAST_USER',
      data: { is_last_owner: isLastOwner, entity },
    }),
  badEventQueueId: (queueId: string) =>
    new JsonableError('Bad event queue ID: {queue_id}', { code: 'BAD_EVENT_QUEUE_ID', data: { queue_id: queueId } }),
  /** POST /invites: some or all invitations not sent (Zulip's InvitationError; always all four keys). */
  invitationFailed: (
    template: string,
    opts: { errors?: [string, string, boolean][]; sentInvitations: boolean; dailyLimitReached?: boolean; licenseLimitReached?: boolean },
  ) =>
    new JsonableError(template, {
      code: 'INVITATION_FAILED',
      data: {
        errors: opts.errors ?? [],
        sent_invitations: opts.sentInvitations,
        license_limit_reached: opts.licenseLimitReached ?? false,
        daily_limit_reached: opts.dailyLimitReached ?? false,
      },
    }),
  /**
   * Zulip's ValidationFailureError (a model's full_clean failed): the first message, and every
   * message by field (`__all__` for the whole object) under `errors`.
   */
  validationFailure: (fieldErrors: Record<string, string[]>) =>
    new JsonableError('{message}', { vars: { message: Object.values(fieldErrors)[0][0] }, data: { errors: fieldErrors } }),
  internal: () => new JsonableError('Internal server error', { code: 'INTERNAL_SERVER_ERROR', status: 500 }),
  /**
   * GET /health when the database cannot be read or written: Zulip's ServerNotReadyError (its code; the
   * texts name SQLite's failure rather than postgresql's), answered 503 so supervisors retry. `data`
   * carries the health body's fields.
   */
  serverNotReady: (template: string, data: Record<string, unknown>) =>
    new JsonableError(template, { code: 'SERVER_NOT_READY', status: 503, data }),
  realmUploadQuota: () =>
    new JsonableError("Upload would exceed your organization's upload quota.", { code: 'REALM_UPLOAD_QUOTA' }),
  pushServiceNotConfigured: () =>
    new JsonableError('Server is not configured to use push notification service.', { code: 'PUSH_SERVICE_NOT_CONFIGURED' }),
  invalidPushDeviceToken: () => new JsonableError('Device not recognized', { code: 'INVALID_PUSH_DEVICE_TOKEN' }),
  noActivePushDevice: () => new JsonableError('No active registered push device', { code: 'NO_ACTIVE_PUSH_DEVICE' }),
  // The push service's answers to a request a client waits for (Zulip's E2EE test notification).
  pushServiceRefused: () =>
    new JsonableError('Push notification configuration issue on server, contact the server administrator or retry later.', {
      code: 'ADMIN_ACTION_REQUIRED',
      status: 403,
    }),
  pushServiceUnreachable: () =>
    new JsonableError('Network error while connecting to Zulip push notification service.', { code: 'FAILED_TO_CONNECT_BOUNCER', status: 502 }),
  pushServiceFailed: () =>
    new JsonableError('Internal server error on Zulip push notification service, retry later.', { code: 'INTERNAL_SERVER_ERROR_ON_BOUNCER', status: 502 }),
  invalidRemotePushDeviceToken: () =>
    new JsonableError('Device not recognized by the push bouncer', { code: 'INVALID_REMOTE_PUSH_DEVICE_TOKEN' }),
};
