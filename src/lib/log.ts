// The server's log: one line per request (and per server error), as text a person reads or as JSON a
// machine parses. Lines are formatted as bytes straight into a buffer (see LineOut) and standard error
// is written in the background (see StderrOut): formatting strings, keeping them until a flush and
// writing them on the event loop cost a request ~1.3 µs of its ~11.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { putBytes, putInt } from './byte-writers';

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

/**
 * Where a logger's lines go, as bytes: each line is formatted straight into `b` at `len` (a request
 * line without making a string: strings kept until a flush outlive young-generation collections,
 * and joining and encoding them was most of the log's cost), then `done` hands it on.
 */
interface LineOut {
  b: Buffer;
  len: number;
  /** Room for `n` more bytes at `len`; false when there is none (the line is dropped). */
  reserve(n: number): boolean;
  /** The line that ends at `len` is complete. */
  done(): void;
}

/** A function sink (tests, tools): every line decoded and passed on at once. */
class SinkOut implements LineOut {
  b: Buffer = Buffer.allocUnsafe(4096);
  len = 0;
  constructor(private readonly sink: LogSink) {}
  reserve(n: number): boolean {
    if (n > this.b.length) this.b = Buffer.allocUnsafe(n);
    return true;
  }
  done(): void {
    const line = this.b.toString('utf8', 0, this.len);
    this.len = 0;
    this.sink(line);
  }
}

/** Written once this much is buffered (a write costs ~10-100 µs of the event loop: few and large), else 50 ms after a line. */
const FLUSH_AT = 256 * 1024;
/** The size of each of stderr's two buffers: what is held while a write is under way. */
const CAPACITY = 1024 * 1024;
/** Kept free in a buffer for the dropped-lines notice. */
const NOTICE_ROOM = 256;

/**
 * Standard error, written in the background: lines are buffered and written by the thread pool
 * (fs.write on fd 2) every 50 ms, at 64 KiB, and at exit. The event loop never waits for the reader:
 * while one buffer is being written the other fills, and when both are full (a reader stalled: a log
 * shipper stopped, a terminal scrolled back) lines are dropped and counted, then reported by a line
 * of their own. Module-level because stderr is the process's: every logger in it shares one.
 */
class StderrOut implements LineOut {
  b: Buffer = Buffer.allocUnsafe(CAPACITY);
  len = 0;
  private spare: Buffer | null = Buffer.allocUnsafe(CAPACITY);
  private writing = false;
  private timer: NodeJS.Timeout | null = null;
  private hooked = false;
  /** Set once stderr fails for good (EPIPE: the reader went away): lines are dropped from then on. */
  broken = false;
  dropped = 0;
  /** The format of the dropped-lines notice: the first logger's. */
  format: LogFormat = 'text';
  claimed = false;

  /** The exit flush and the guard against EPIPE: once, when a logger first uses stderr. */
  hook(): void {
    if (this.hooked) return;
    this.hooked = true;
    process.on('exit', () => {
      writeSoon();
      this.flushNow();
    });
    // Other writers use process.stderr (first-start messages, console): a closed pipe makes it emit
    // EPIPE, which with no listener is an uncaught exception. Lose the log instead of the server.
    process.stderr.on('error', () => {
      this.broken = true;
    });
  }

  reserve(n: number): boolean {
    // Lines leave room at the end for the notice of dropped lines.
    if (this.len + n <= CAPACITY - NOTICE_ROOM) return true;
    if (!this.writing && n <= CAPACITY - NOTICE_ROOM) {
      this.flush();
      return true;
    }
    this.dropped++;
    return false;
  }

  done(): void {
    if (this.len >= FLUSH_AT) this.flush();
    else if (this.timer === null) {
      // Unref'd: pending lines never keep the process alive; the exit hook writes them.
      this.timer = setTimeout(() => this.flush(), 50);
      this.timer.unref();
    }
  }

  /** Hands the buffered lines to the thread pool, unless a write is under way (its end flushes again). */
  flush(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.writing || this.spare === null) return;
    if (this.broken) {
      this.len = 0;
      return;
    }
    if (this.dropped > 0) this.noteDropped();
    if (this.len === 0) return;
    const data = this.b;
    const n = this.len;
    this.b = this.spare;
    this.spare = null;
    this.len = 0;
    this.writing = true;
    this.write(data, 0, n);
  }

  private write(data: Buffer, offset: number, n: number): void {
    fs.write(2, data, offset, n, null, (err, written) => {
      if (err) {
        // A non-blocking pipe that is full: try again shortly. Anything else (EPIPE, EBADF): give up.
        if ((err as NodeJS.ErrnoException).code === 'EAGAIN') {
          setTimeout(() => this.write(data, offset, n), 10).unref();
          return;
        }
        this.broken = true;
      } else if (written < n) {
        this.write(data, offset + written, n - written);
        return;
      }
      this.writing = false;
      this.spare = data;
      if (this.len > 0 || this.dropped > 0) {
        if (this.len >= FLUSH_AT || this.dropped > 0) this.flush();
        else this.done();
      }
    });
  }

  /** One line saying how many were lost, at the end of the buffer about to be written. */
  private noteDropped(): void {
    const count = this.dropped;
    this.dropped = 0;
    const time = new Date().toISOString();
    const line =
      this.format === 'json'
        ? `{"time":"${time}","level":"warn","msg":"log lines dropped: stderr was not read","count":${count}}\n`
        : `${time} warn log lines dropped: stderr was not read count=${count}\n`;
    this.len += this.b.write(line, this.len);
  }

  /** At exit: whatever is buffered, written now (a write still under way is then most likely done). */
  private flushNow(): void {
    if (this.broken || this.len === 0) return;
    let offset = 0;
    const deadline = Date.now() + 1000;
    while (offset < this.len && Date.now() < deadline) {
      try {
        offset += fs.writeSync(2, this.b, offset, this.len - offset);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') break;
      }
    }
    this.len = 0;
  }
}

const stderrOut = new StderrOut();

/** Request lines waiting for the microtasks queued before them (Logger.requestSoon), with their logger. */
let soon: { log: Logger; line: RequestLine }[] = [];
function writeSoon(): void {
  const waiting = soon;
  soon = [];
  for (const { log, line } of waiting) log.request(line);
}

/** Appends one whole line (a string) to `out`. */
function putLine(out: LineOut, line: string): void {
  const n = Buffer.byteLength(line);
  if (!out.reserve(n)) return;
  out.len += out.b.write(line, out.len);
  out.done();
}

/**
 * The sink for stderr, for lines made elsewhere as strings. A logger given it formats straight into
 * stderr's buffer instead.
 */
export const stderrSink: LogSink = (line) => {
  stderrOut.hook();
  putLine(stderrOut, line);
};

// Byte writers for request lines: each writes at offset `o` of `b` and returns the offset after.
/** A constant piece of a line, as bytes: copying them (TypedArray.set) is ~5x faster than by character. */
const bytes = (s: string): Buffer => Buffer.from(s, 'latin1');
const T_INFO = bytes(' info ');
const T_USER = bytes(' user=');
const T_ID = bytes('ms id=');
const J_TIME = bytes('{"time":"');
const J_ID = bytes('","level":"info","msg":"request","request_id":"');
const J_METHOD = bytes('","method":');
const J_PATH = bytes(',"path":');
const J_STATUS = bytes(',"status":');
const J_MS = bytes(',"duration_ms":');
const J_USER = bytes(',"user_id":');
const J_IP = bytes(',"ip":');
const J_END = bytes('}\n');
const NULL = bytes('null');

function putAscii(b: Buffer, o: number, s: string): number {
  for (let i = 0; i < s.length; i++) b[o + i] = s.charCodeAt(i);
  return o + s.length;
}

/**
 * `s` as is when it is printable ASCII needing no quotes: no '"' or '\\', and no space unless
 * `space`; -1 when it is not (the caller then writes the quoted form over what was written).
 */
function putPlain(b: Buffer, o: number, s: string, space: boolean): number {
  const lowest = space ? 0x20 : 0x21;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < lowest || c > 0x7e || c === 0x22 || c === 0x5c) return -1;
    b[o + i] = c;
  }
  return o + s.length;
}

function putUtf8(b: Buffer, o: number, s: string): number {
  return o + b.write(s, o);
}

/** Milliseconds with two decimals ("1.05"), from integers: printing a double is slow in V8. */
function putMs(b: Buffer, o: number, ms: number): number {
  const h = Math.round(ms * 100);
  const frac = h % 100;
  o = putInt(b, o, (h - frac) / 100);
  b[o] = 0x2e; // '.'
  b[o + 1] = 48 + Math.floor(frac / 10);
  b[o + 2] = 48 + (frac % 10);
  return o + 3;
}

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


/** A JSON string: as is between quotes when plain, else escaped (the rare path). */
function putJson(b: Buffer, o: number, s: string): number {
  b[o] = 0x22;
  const end = putPlain(b, o + 1, s, true);
  if (end === -1) return putUtf8(b, o, quote(s));
  b[end] = 0x22;
  return end + 1;
}

/** A text-format value: as is when plain, else quoted as textValue does (the rare path). */
function putText(b: Buffer, o: number, s: string): number {
  const end = s === '' ? -1 : putPlain(b, o, s, false);
  return end === -1 ? putUtf8(b, o, textValue(s)) : end;
}

/**
 * A stack for the text format, where it spans lines: every control character but the newline, and
 * HIDDEN, escaped as in JSON, so an error message holding client input can neither recolour the
 * terminal (ANSI escapes), nor rewrite a line (CR), nor break one where the indentation cannot mark it.
 */
const STACK_UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const textStack = (s: string): string => s.replace(STACK_UNSAFE, (c) => (c < '\u0080' ? JSON.stringify(c).slice(1, -1) : unicodeEscape(c)));

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
  /** lastTime as bytes (ASCII, 24 of them). */
  private readonly timeBytes = Buffer.alloc(24);
  private lastSecond = -1;
  private secondPrefix = '';

  private readonly out: LineOut | null;

  constructor(
    readonly level: LogLevel,
    readonly format: LogFormat,
    sink: LogSink | null,
  ) {
    this.rank = sink === null ? -1 : RANK[level];
    if (sink === stderrSink) {
      // Guarded from the start: the server writes its first-start messages to stderr before any line.
      stderrOut.hook();
      if (!stderrOut.claimed) {
        stderrOut.claimed = true;
        stderrOut.format = format;
      }
      this.out = stderrOut;
    } else this.out = sink === null ? null : new SinkOut(sink);
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
      this.timeBytes.write(this.lastTime, 'latin1');
    }
    return this.lastTime;
  }

  enabled(level: LogLevel): boolean {
    return RANK[level] <= this.rank;
  }

  request(r: RequestLine): void {
    if (!this.requests) return;
    const out = this.out!;
    // An upper bound of the line's bytes: any character of a value takes at most 6 (a \uXXXX escape).
    if (!out.reserve(200 + r.id.length + 6 * (r.method.length + r.path.length + (r.ip === null ? 0 : r.ip.length)))) return;
    const b = out.b;
    let o = out.len;
    const json = this.format === 'json';
    if (json) {
      o = putBytes(b, o, J_TIME);
      this.time(r.at);
      o = putBytes(b, o, this.timeBytes);
      o = putBytes(b, o, J_ID);
      o = putAscii(b, o, r.id);
      o = putBytes(b, o, J_METHOD);
      o = putJson(b, o, r.method);
      o = putBytes(b, o, J_PATH);
      o = putJson(b, o, r.path);
      o = putBytes(b, o, J_STATUS);
      o = putInt(b, o, r.status);
      o = putBytes(b, o, J_MS);
      o = putMs(b, o, r.durationMs);
      o = putBytes(b, o, J_USER);
      o = r.userId === null ? putBytes(b, o, NULL) : putInt(b, o, r.userId);
      o = putBytes(b, o, J_IP);
      o = r.ip === null ? putBytes(b, o, NULL) : putJson(b, o, r.ip);
      o = putBytes(b, o, J_END);
    } else {
      // Fixed order, space separated, like an access log: time level ip user method path status duration id.
      this.time(r.at);
      o = putBytes(b, o, this.timeBytes);
      o = putBytes(b, o, T_INFO);
      if (r.ip === null) b[o++] = 0x2d; // '-'
      else o = putText(b, o, r.ip);
      o = putBytes(b, o, T_USER);
      if (r.userId === null) b[o++] = 0x2d;
      else o = putInt(b, o, r.userId);
      b[o++] = 0x20;
      o = putText(b, o, r.method);
      b[o++] = 0x20;
      o = putText(b, o, r.path);
      b[o++] = 0x20;
      o = putInt(b, o, r.status);
      b[o++] = 0x20;
      o = putMs(b, o, r.durationMs);
      o = putBytes(b, o, T_ID);
      o = putAscii(b, o, r.id);
      b[o++] = 0x0a;
    }
    out.len = o;
    out.done();
  }

  /**
   * request(), once the microtasks queued so far have run (still in this turn, before any I/O), with
   * the time of this call. A fan-out answers many parked polls in one turn, one microtask each, and a
   * line written between two of those socket writes delays every later poller. Lines keep their
   * order; the exit hook writes any left waiting.
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
      putLine(this.out!, JSON.stringify(out).replace(HIDDEN, unicodeEscape) + '\n');
      return;
    }
    let text = `${time} ${level} ${msg.replace(/[\u0000-\u001f\u007f]/g, ' ')}`;
    for (const k in rest) text += ` ${k}=${textValue(rest[k])}`;
    // The stack follows on indented lines: a reader sees it whole, a line parser sees continuations.
    if (err !== undefined) text += '\n' + textStack(cappedStack(err)).replace(/^/gm, '  ');
    putLine(this.out!, text + '\n');
  }
}

/** A logger that writes nothing (tests, tools). */
export const silentLogger = new Logger('error', 'text', null);
