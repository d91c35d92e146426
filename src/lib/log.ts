// The server's log: one line per request (and per server error), as text a person reads or as JSON a
// machine parses, written to a sink. The default sink buffers lines and writes them to stderr every
// 50 ms, at 64 KiB, and at exit: a write per request (or per event-loop turn, a few requests under
// load) costs a system call each, a measurable part of a request that takes ~12 µs.
import crypto from 'node:crypto';

export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['text', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Receives each finished line (with its trailing newline). */
export type LogSink = (line: string) => void;

const RANK: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

/** One answered (or abandoned) request, as the request log shows it. */
export interface RequestLine {
  id: string;
  method: string;
  /** The path as logged: secrets redacted, query values dropped (see loggedPath). */
  path: string;
  /** 499 when the client went away before the reply (as nginx logs it). */
  status: number;
  durationMs: number;
  userId: number | null;
  /** The client's address; null when not read (an authenticated success, or a client gone). */
  ip: string | null;
  /** When the request ended (Date.now()), if the line is written later; default: now. */
  at?: number;
}

/** Fields of a non-request line; `err` adds its stack (once). */
export interface LogFields {
  request_id?: string;
  err?: unknown;
  [key: string]: unknown;
}

let stderrBuffer: string[] = [];
let stderrBytes = 0;
let stderrTimer: NodeJS.Timeout | null = null;
let stderrHooked = false;
/** Set once stderr fails (EPIPE: the reader went away): lines are dropped from then on. */
let stderrBroken = false;

function flushStderr(): void {
  if (stderrTimer) clearTimeout(stderrTimer);
  stderrTimer = null;
  if (stderrBuffer.length === 0) return;
  const text = stderrBuffer.join('');
  stderrBuffer = [];
  stderrBytes = 0;
  if (stderrBroken) return;
  try {
    process.stderr.write(text);
  } catch {
    stderrBroken = true;
  }
}

/** Request lines waiting for the microtasks queued before them (Logger.requestSoon), with their logger. */
let soon: { log: Logger; line: RequestLine }[] = [];
function writeSoon(): void {
  const waiting = soon;
  soon = [];
  for (const { log, line } of waiting) log.request(line);
}

/** The exit flush, and the guard against EPIPE: once per process, when a logger first uses stderr. */
function hookStderr(): void {
  if (stderrHooked) return;
  stderrHooked = true;
  process.on('exit', () => {
    writeSoon();
    flushStderr();
  });
  // A closed pipe (a log shipper restarted, `parley | head`) makes stderr emit EPIPE, which with no
  // listener is an uncaught exception: the server would die for want of a reader. Lose the log instead.
  process.stderr.on('error', () => {
    stderrBroken = true;
  });
}

/**
 * Lines buffered and written to stderr within 50 ms, at once past 64 KiB, and at exit (also after an
 * uncaught exception; only a SIGKILL loses the last 50 ms). Module-level because stderr is the
 * process's: every app in the process shares one buffer.
 */
export const stderrSink: LogSink = (line) => {
  stderrBuffer.push(line);
  stderrBytes += line.length;
  hookStderr();
  if (stderrBytes >= 64 * 1024) flushStderr();
  else if (stderrTimer === null) {
    // Unref'd: pending lines never keep the process alive; the exit hook writes them.
    stderrTimer = setTimeout(flushStderr, 50);
    stderrTimer.unref();
  }
};

/**
 * Characters JSON.stringify leaves alone that still harm a log line: C1 controls (U+0085 ends a line
 * for many readers, U+009B starts a terminal escape), U+2028/U+2029 (line and paragraph separators,
 * which Python's splitlines and some viewers break on), and the bidirectional marks, embeddings,
 * overrides and isolates that make a terminal show a line in another order than it was written.
 * A client chooses them freely: uWS passes a path's UTF-8 through.
 */
const HIDDEN = /[\u0080-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const unicodeEscape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
/** JSON.stringify, with HIDDEN escaped too (JSON's own escapes: still valid JSON, parsing gives `s` back). */
const quote = (s: string): string => JSON.stringify(s).replace(HIDDEN, unicodeEscape);

/** Keeps lines from control characters (a hostile path cannot forge a second line in text format). */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f"\\ \u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
function textValue(v: unknown): string {
  const s = typeof v === 'string' ? v : v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  return s === '' || UNSAFE.test(s) ? quote(s) : s;
}

/** Printable ASCII without quote or backslash: JSON needs no escaping (the usual path, method, address). */
const PLAIN = /^[\u0020\u0021\u0023-\u005b\u005d-\u007e]*$/;
const jsonString = (s: string): string => (PLAIN.test(s) ? `"${s}"` : quote(s));

/**
 * A stack for the text format, where it spans lines: every control character but the newline, and
 * HIDDEN, escaped as in JSON, so an error message holding client input can neither recolour the
 * terminal (ANSI escapes), nor rewrite a line (CR), nor break one where the indentation cannot mark it.
 */
const STACK_UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const textStack = (s: string): string => s.replace(STACK_UNSAFE, (c) => (c < '\u0080' ? JSON.stringify(c).slice(1, -1) : unicodeEscape(c)));

/** Milliseconds with two decimals ("1.05"), from integers: printing a double is slow in V8. */
function formatMs(ms: number): string {
  const h = Math.round(ms * 100);
  const frac = h % 100;
  return `${(h - frac) / 100}.${frac < 10 ? '0' : ''}${frac}`;
}

/**
 * The most of a stack a line carries: a real one is a few KiB; an error whose message holds a client's
 * input (a 1 MB body echoed) must not turn every failing request into a megabyte of log.
 */
const MAX_STACK = 16 * 1024;

function cappedStack(err: unknown): string {
  const stack = stackOf(err);
  return stack.length <= MAX_STACK ? stack : `${stack.slice(0, MAX_STACK)}\n... (${stack.length - MAX_STACK} more characters)`;
}

/**
 * What a thrown value says of itself. Never throws: it runs while a request is failing, and a value
 * String() cannot print (a null-prototype object, a throwing toString or stack getter) must still get
 * its 500 and its line; an exception here would leave the request unanswered and escape as an
 * unhandled rejection.
 */
function stackOf(err: unknown): string {
  try {
    if (err instanceof Error) {
      const stack = err.stack;
      return typeof stack === 'string' ? stack : `${err.name}: ${err.message}`;
    }
    return String(err);
  } catch {
    try {
      return `(an unprintable ${Object.prototype.toString.call(err)} was thrown)`;
    } catch {
      return '(an unprintable value was thrown)';
    }
  }
}

export class Logger {
  private readonly rank: number;
  /** Whether request lines are written (level info or debug). */
  readonly requests: boolean;
  private readonly prefix = crypto.randomBytes(4).toString('hex');
  private counter = 0;
  // The timestamp text: toISOString was most of a line's cost, so it runs once a second and the
  // milliseconds are appended; under load many lines share one millisecond's text too.
  private lastMs = 0;
  private lastTime = '';
  private lastSecond = -1;
  private secondPrefix = '';

  constructor(
    readonly level: LogLevel,
    readonly format: LogFormat,
    private readonly sink: LogSink | null,
  ) {
    this.rank = sink === null ? -1 : RANK[level];
    // Guarded from the start: the server writes its first-start messages to stderr before any line.
    if (sink === stderrSink) hookStderr();
    this.requests = this.rank >= RANK.info;
  }

  /** A request id unique in this process and unlikely to repeat across restarts: 8 hex digits, '-', a counter. */
  nextRequestId(): string {
    return `${this.prefix}-${(++this.counter).toString(36)}`;
  }

  private time(now = Date.now()): string {
    if (now !== this.lastMs) {
      this.lastMs = now;
      const ms = now % 1000;
      const second = now - ms;
      if (second !== this.lastSecond) {
        this.lastSecond = second;
        this.secondPrefix = new Date(second).toISOString().slice(0, 20); // "2026-11-26T06:29:30."
      }
      this.lastTime = `${this.secondPrefix}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z`;
    }
    return this.lastTime;
  }

  enabled(level: LogLevel): boolean {
    return RANK[level] <= this.rank;
  }

  request(r: RequestLine): void {
    if (!this.requests) return;
    const time = this.time(r.at);
    const ms = formatMs(r.durationMs);
    if (this.format === 'json') {
      this.sink!(
        `{"time":"${time}","level":"info","msg":"request","request_id":"${r.id}","method":${jsonString(r.method)},` +
          `"path":${jsonString(r.path)},"status":${r.status},"duration_ms":${ms},"user_id":${r.userId ?? 'null'},"ip":${r.ip === null ? 'null' : jsonString(r.ip)}}\n`,
      );
    } else {
      // Fixed order, space separated, like an access log: time level ip user method path status duration id.
      this.sink!(
        `${time} info ${r.ip === null ? '-' : textValue(r.ip)} user=${r.userId ?? '-'} ${textValue(r.method)} ${textValue(r.path)} ${r.status} ${ms}ms id=${r.id}\n`,
      );
    }
  }

  /**
   * request(), once the microtasks queued so far have run (still in this turn, before any I/O), with
   * the time of this call. A fan-out answers many parked polls in one turn, one microtask each, and a
   * line formatted and written between two of those socket writes delayed every later poller (~3 µs
   * per poll, a fifth of the fan-out). Lines keep their order; the exit hook writes any left waiting.
   */
  requestSoon(r: RequestLine): void {
    if (!this.requests) return;
    r.at ??= Date.now();
    if (soon.length === 0) queueMicrotask(writeSoon);
    soon.push({ log: this, line: r });
  }

  error(msg: string, fields: LogFields = {}): void {
    this.line('error', msg, fields);
  }

  warn(msg: string, fields: LogFields = {}): void {
    this.line('warn', msg, fields);
  }

  info(msg: string, fields: LogFields = {}): void {
    this.line('info', msg, fields);
  }

  debug(msg: string, fields: LogFields = {}): void {
    this.line('debug', msg, fields);
  }

  private line(level: LogLevel, msg: string, fields: LogFields): void {
    if (RANK[level] > this.rank) return;
    const time = this.time();
    const { err, ...rest } = fields;
    if (this.format === 'json') {
      const out: Record<string, unknown> = { time, level, msg, ...rest };
      if (err !== undefined) out.stack = cappedStack(err);
      this.sink!(JSON.stringify(out).replace(HIDDEN, unicodeEscape) + '\n');
      return;
    }
    let text = `${time} ${level} ${msg.replace(/[\u0000-\u001f\u007f]/g, ' ')}`;
    for (const k in rest) text += ` ${k}=${textValue(rest[k])}`;
    // The stack follows on indented lines: a reader sees it whole, a line parser sees continuations.
    if (err !== undefined) text += '\n' + textStack(cappedStack(err)).replace(/^/gm, '  ');
    this.sink!(text + '\n');
  }
}

/** A logger that writes nothing (tests, tools). */
export const silentLogger = new Logger('error', 'text', null);
