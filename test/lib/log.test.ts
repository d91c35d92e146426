// The logger on its own: line formats (hostile values escaped, one line each), levels, request ids.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Logger, silentLogger } from '../../src/lib/log';

/** Runs `code` (TypeScript, may import the logger as LOG) in a child process; returns its exit and stdout. */
function child(code: string, onStderr: (c: ReturnType<typeof spawn>) => void): Promise<{ code: number | null; out: string }> {
  const log = path.resolve(__dirname, '../../src/lib/log.ts');
  const c = spawn(process.execPath, ['--import', 'tsx', '-e', `const LOG = require(${JSON.stringify(log)});\n${code}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  c.stdout!.on('data', (d) => (out += d));
  onStderr(c);
  return new Promise((resolve) => c.on('exit', (exit) => resolve({ code: exit, out })));
}

const request = { id: 'abcd0123-1', method: 'GET', path: '/p', status: 200, durationMs: 1.23456, userId: 8, ip: '127.0.0.1' };

describe('Logger', () => {
  it('writes a request as one JSON object per line, escaping what needs it', () => {
    const out: string[] = [];
    const log = new Logger('info', 'json', (l) => out.push(l));
    log.request(request);
    log.request({ ...request, path: '/a"b\\c\n\u0000é', ip: null, userId: null, status: 499, durationMs: 12.3 });
    assert.equal(out.length, 2);
    for (const l of out) assert.equal(l.indexOf('\n'), l.length - 1);
    const [a, b] = out.map((l) => JSON.parse(l));
    assert.match(a.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual({ ...a, time: 'T' }, { time: 'T', level: 'info', msg: 'request', request_id: 'abcd0123-1', method: 'GET', path: '/p', status: 200, duration_ms: 1.23, user_id: 8, ip: '127.0.0.1' });
    assert.deepEqual({ ...b, time: 'T' }, { time: 'T', level: 'info', msg: 'request', request_id: 'abcd0123-1', method: 'GET', path: '/a"b\\c\n\u0000é', status: 499, duration_ms: 12.3, user_id: null, ip: null });
  });

  it('writes a request as one text line, quoting values with spaces, quotes or control characters', () => {
    const out: string[] = [];
    const log = new Logger('debug', 'text', (l) => out.push(l));
    log.request(request);
    log.request({ ...request, path: '/a b"\n', ip: '', userId: null, durationMs: 0.004 });
    log.request({ ...request, ip: null, durationMs: 1234.5 });
    assert.match(out[0], /^\S+Z info 127\.0\.0\.1 user=8 GET \/p 200 1\.23ms id=abcd0123-1\n$/);
    assert.match(out[1], /^\S+Z info "" user=- GET "\/a b\\"\\n" 200 0\.00ms id=abcd0123-1\n$/);
    assert.match(out[2], /^\S+Z info - user=8 GET \/p 200 1234\.50ms id=abcd0123-1\n$/);
  });

  it('writes a request line written later with the time its request ended (at), in both formats', () => {
    const out: string[] = [];
    const json = new Logger('info', 'json', (l) => out.push(l));
    const text = new Logger('info', 'text', (l) => out.push(l));
    const at = Date.UTC(2026, 10, 26, 8, 30, 5, 7);
    json.request({ ...request, at });
    text.request({ ...request, at });
    json.request({ ...request, at: at + 1001 });
    assert.equal(JSON.parse(out[0]).time, '2026-11-26T08:30:05.007Z');
    assert.equal(out[1], '2026-11-26T08:30:05.007Z info 127.0.0.1 user=8 GET /p 200 1.23ms id=abcd0123-1\n');
    assert.equal(JSON.parse(out[2]).time, '2026-11-26T08:30:06.008Z');
  });

  it('writes a requestSoon line once the microtasks queued before it have run, in order, with the time of the call', async () => {
    const out: string[] = [];
    const log = new Logger('info', 'text', (l) => out.push(l));
    const seen: string[][] = [];
    queueMicrotask(() => seen.push([...out]));
    log.requestSoon({ ...request, id: 'abcd0123-2' });
    log.requestSoon({ ...request, id: 'abcd0123-3', at: Date.UTC(2026, 10, 26, 8, 30, 5, 7) });
    assert.equal(out.length, 0, 'nothing yet');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(seen, [[]], 'the microtask queued first ran first');
    assert.equal(out.length, 2);
    assert.match(out[0], /^\S+Z info 127\.0\.0\.1 user=8 GET \/p 200 1\.23ms id=abcd0123-2\n$/);
    assert.equal(out[1], '2026-11-26T08:30:05.007Z info 127.0.0.1 user=8 GET /p 200 1.23ms id=abcd0123-3\n');
    new Logger('warn', 'text', (l) => out.push(l)).requestSoon(request);
    await new Promise((r) => setImmediate(r));
    assert.equal(out.length, 2, 'warn writes no request lines');
  });

  it('escapes Unicode line breaks, C1 controls and direction overrides in both formats (no forged or reordered line)', () => {
    // U+2028/U+2029/U+0085 end a line for many readers (Python's splitlines, editors, some log viewers);
    // U+202E and U+2066-2069 reorder what a terminal shows; U+009B is an 8-bit CSI (terminal escapes).
    const hostile = '/a\u2028b\u2029c\u0085d\u009b31me\u202ef\u2066g\u200fh\u061ci';
    const breaksOrHidden = /[\u0080-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\u061c]/;
    const json: string[] = [];
    new Logger('info', 'json', (l) => json.push(l)).request({ ...request, path: hostile, ip: hostile });
    assert.doesNotMatch(json[0], breaksOrHidden);
    assert.deepEqual([JSON.parse(json[0]).path, JSON.parse(json[0]).ip], [hostile, hostile]);
    const text: string[] = [];
    new Logger('info', 'text', (l) => text.push(l)).request({ ...request, path: hostile, ip: hostile });
    assert.doesNotMatch(text[0], breaksOrHidden);
    const quoted = '"/a\\u2028b\\u2029c\\u0085d\\u009b31me\\u202ef\\u2066g\\u200fh\\u061ci"';
    assert.equal(text[0].replace(/^\S+Z /, 'T '), `T info ${quoted} user=8 GET ${quoted} 200 1.23ms id=abcd0123-1\n`);
  });

  it("escapes an error stack's control characters in text: ANSI escapes, CR and Unicode line breaks cannot forge or recolour lines", () => {
    const out: string[] = [];
    const err = new Error('a\u001b[31mred\r\n2026-11-26T00:00:00.000Z info forged\u2028x\u0085y\u202ez');
    new Logger('error', 'text', (l) => out.push(l)).error('unexpected error', { err });
    assert.doesNotMatch(out[0], /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e]/);
    const [head, first, second, ...frames] = out[0].trimEnd().split('\n');
    assert.match(head, /^\S+Z error unexpected error$/);
    assert.equal(first, '  Error: a\\u001b[31mred\\r');
    assert.equal(second, '  2026-11-26T00:00:00.000Z info forged\\u2028x\\u0085y\\u202ez');
    assert.ok(frames.length > 0 && frames.every((l) => l.startsWith('      at ')), frames.join('\n'));
  });

  it('writes other lines with their fields, and an error stack once on indented lines', () => {
    const out: string[] = [];
    const text = new Logger('info', 'text', (l) => out.push(l));
    const err = new Error('boom');
    text.error('it broke\nbadly', { request_id: 'x-1', path: '/a b' });
    text.warn('careful', { err });
    text.debug('not at info');
    assert.equal(out.length, 2);
    assert.match(out[0], /^\S+Z error it broke badly request_id=x-1 path="\/a b"\n$/);
    assert.match(out[1], /^\S+Z warn careful\n {2}Error: boom\n {6}at /);
    const json: string[] = [];
    new Logger('error', 'json', (l) => json.push(l)).error('it broke', { request_id: 'x-2', err });
    const parsed = JSON.parse(json[0]);
    assert.deepEqual({ ...parsed, time: 'T', stack: 'S' }, { time: 'T', level: 'error', msg: 'it broke', request_id: 'x-2', stack: 'S' });
    assert.equal(parsed.stack, err.stack);
  });

  it('caps an error line: a 1 MB message (or a stack of a million lines) writes at most 16 KiB of stack', () => {
    for (const message of ['x'.repeat(1024 * 1024), '\n'.repeat(1024 * 1024)]) {
      const err = new Error(message);
      const json: string[] = [];
      new Logger('error', 'json', (l) => json.push(l)).error('unexpected error', { request_id: 'x-3', err });
      const { stack, ...rest } = JSON.parse(json[0]);
      assert.deepEqual({ ...rest, time: 'T' }, { time: 'T', level: 'error', msg: 'unexpected error', request_id: 'x-3' });
      assert.equal(stack, `${err.stack!.slice(0, 16 * 1024)}\n... (${err.stack!.length - 16 * 1024} more characters)`);
      const text: string[] = [];
      new Logger('error', 'text', (l) => text.push(l)).error('unexpected error', { err });
      assert.ok(text[0].length < 16 * 1024 * 3 + 200, String(text[0].length));
      assert.ok(text[0].endsWith(`  ... (${err.stack!.length - 16 * 1024} more characters)\n`));
    }
  });

  it('honours the level: error drops warn, info and requests; warn drops requests', () => {
    const out: string[] = [];
    const error = new Logger('error', 'json', (l) => out.push(l));
    error.warn('w');
    error.info('i');
    error.request(request);
    assert.deepEqual([out.length, error.requests, error.enabled('error'), error.enabled('warn')], [0, false, true, false]);
    const warn = new Logger('warn', 'json', (l) => out.push(l));
    warn.request(request);
    warn.warn('w');
    assert.deepEqual([out.length, warn.requests], [1, false]);
    assert.equal(new Logger('info', 'text', () => undefined).requests, true);
  });

  it('gives distinct request ids with one per-process prefix; the silent logger writes nothing', () => {
    const log = new Logger('info', 'text', () => undefined);
    const ids = Array.from({ length: 100 }, () => log.nextRequestId());
    assert.equal(new Set(ids).size, 100);
    for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-z]+$/);
    assert.equal(new Set(ids.map((i) => i.split('-')[0])).size, 1);
    assert.equal(silentLogger.requests, false);
    assert.equal(silentLogger.enabled('error'), false);
    silentLogger.error('nothing happens');
  });

  it('keeps the process alive when stderr is a closed pipe (EPIPE drops the lines, never crashes)', async () => {
    // The reader (a log shipper, `parley | head`) goes away after the first line; the writer goes on.
    const { code, out } = await child(
      `let n = 0;
       const iv = setInterval(() => {
         LOG.stderrSink('line ' + n++ + '\\n');
         if (n === 30) { clearInterval(iv); setTimeout(() => process.stdout.write('alive'), 100); }
       }, 10);`,
      (c) => c.stderr!.once('data', () => c.stderr!.destroy()),
    );
    assert.deepEqual({ code, out }, { code: 0, out: 'alive' });
  });

  it('never waits for a reader that stopped reading: lines past the buffers are dropped, then counted on a line of their own', async () => {
    // The child logs ~30 MB of request lines while its stderr is not read (a stalled log shipper).
    // With writes on the event loop it would block in write(2) and never say "done"; here it goes
    // on, drops what the buffers cannot hold, and says how many once the reader is back.
    let err = '';
    let resumed = false;
    const { code, out } = await child(
      `const log = new LOG.Logger('info', 'text', LOG.stderrSink);
       const line = { id: 'abcd0123-1', method: 'GET', path: '/api/v1/users/me', status: 200, durationMs: 1, userId: 8, ip: null };
       let n = 0;
       const step = () => {
         for (let i = 0; i < 10000; i++) log.request(line);
         if (++n < 300) setImmediate(step);
         else { process.stdout.write('done'); setTimeout(() => { log.warn('last line'); }, 300); setTimeout(() => {}, 600); }
       };
       step();`,
      (c) => {
        c.stderr!.pause();
        c.stdout!.on('data', (d) => {
          if (String(d).includes('done') && !resumed) {
            resumed = true;
            c.stderr!.on('data', (d) => (err += d));
            c.stderr!.resume();
          }
        });
      },
    );
    assert.deepEqual({ code, out }, { code: 0, out: 'done' });
    const dropped = [...err.matchAll(/warn log lines dropped: stderr was not read count=(\d+)\n/g)].reduce((sum, m) => sum + Number(m[1]), 0);
    const written = err.split('\n').filter((l) => l.endsWith(' id=abcd0123-1')).length;
    assert.equal(written + dropped, 3_000_000);
    assert.ok(written > 0 && dropped > 0, `${written} written, ${dropped} dropped`);
    assert.match(err, /warn last line\n$/);
  });

  it('writes a requestSoon line still waiting when the process dies of an uncaught exception', async () => {
    let err = '';
    const { code } = await child(
      `const log = new LOG.Logger('info', 'text', LOG.stderrSink);
       log.requestSoon({ id: 'abcd0123-9', method: 'GET', path: '/p', status: 200, durationMs: 1, userId: 8, ip: null });
       throw new Error('boom');`,
      (c) => c.stderr!.on('data', (d) => (err += d)),
    );
    assert.notEqual(code, 0);
    assert.match(err, /info - user=8 GET \/p 200 1\.00ms id=abcd0123-9\n/);
  });

  it('guards stderr from the moment a logger writes to it, before its first line (first-start messages go straight to stderr)', async () => {
    const { code, out } = await child(
      `new LOG.Logger('info', 'text', LOG.stderrSink);
       setTimeout(() => {
         for (let i = 0; i < 20; i++) process.stderr.write('parley: open http://127.0.0.1/ in a browser\\n');
         setTimeout(() => process.stdout.write('alive'), 100);
       }, 200);`,
      (c) => c.stderr!.destroy(),
    );
    assert.deepEqual({ code, out }, { code: 0, out: 'alive' });
  });
});

