// The configuration file: TOML (smol-toml), one top-level key per setting of src/settings.ts.
// Which file: `--config FILE`, else $PARLEY_CONFIG, else /etc/parley.toml if it exists, else
// DATA_DIR/parley.conf if it exists (DATA_DIR from the flag, the environment or the default). Exactly one
// file is read. Anything wrong in it stops the start with FILE:LINE and the key (ConfigError).
import fs from 'node:fs';
import path from 'node:path';
import { parse, TomlError } from 'smol-toml';
import { check, ConfigError, expected, settingByKey, show, type Values } from './settings';

export const ETC_CONFIG = '/etc/parley.toml';
export const DATA_DIR_CONFIG = 'parley.conf';

/** Files larger than this are refused before parsing: a settings file is a few kilobytes. */
const MAX_FILE_BYTES = 1024 * 1024;

export interface FileChoice {
  file: string;
  /** Named on purpose (--config, PARLEY_CONFIG): it must exist. */
  explicit: boolean;
  /** DATA_DIR/parley.conf: it cannot move the data directory it lives in. */
  inDataDir: boolean;
}

/** The file to read, or null when there is none. `etc` is /etc/parley.toml (tests pass another). */
export function chooseConfigFile(opts: { flag?: string; env: NodeJS.ProcessEnv; dataDir: string; etc?: string }): FileChoice | null {
  const named = opts.flag ?? (opts.env.PARLEY_CONFIG || undefined);
  if (named !== undefined) return { file: path.resolve(named), explicit: true, inDataDir: false };
  const etc = opts.etc ?? ETC_CONFIG;
  if (fs.existsSync(etc)) return { file: etc, explicit: false, inDataDir: false };
  if (opts.dataDir === ':memory:') return null;
  const local = path.join(opts.dataDir, DATA_DIR_CONFIG);
  return fs.existsSync(local) ? { file: local, explicit: false, inDataDir: true } : null;
}

/** The line (1-based) where top-level `key` is set or its table opens; 0 when not found. */
function lineOf(text: string, key: string): number {
  // The first key of a line (or of a [table] header), bare or quoted; quoted ones are decoded by the
  // TOML parser itself, so "p\u006frt" is found as port.
  const re = /^\s*(?:\[\[?\s*)?("(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_-]+)\s*[.=\]]/;
  const decode = (token: string): string => {
    if (token.startsWith("'")) return token.slice(1, -1);
    if (!token.startsWith('"')) return token;
    try {
      return String(parse(`k = ${token}`).k);
    } catch {
      return token;
    }
  };
  const lines = text.split(/\r?\n/);
  // Lines inside a multi-line string (""" or ''') are text, not keys.
  let open: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const m = open === null ? re.exec(lines[i]) : null;
    if (m && decode(m[1]) === key) return i + 1;
    for (const q of lines[i].matchAll(/"""|'''/g)) {
      if (open === null) open = q[0];
      else if (open === q[0]) open = null;
    }
  }
  return 0;
}

/** The bytes as text; TOML is UTF-8, and other bytes would silently become U+FFFD in a setting. */
function utf8(file: string, bytes: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    let line = 1;
    let start = 0;
    for (let i = 0; i <= bytes.length; i++) {
      if (i < bytes.length && bytes[i] !== 0x0a) continue;
      try {
        new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(start, i));
      } catch {
        break;
      }
      line++;
      start = i + 1;
    }
    throw new ConfigError(`${file}, line ${line}: not valid TOML: the file is not UTF-8 text`);
  }
}

/** The first `limit` bytes of the file at most: a device that never ends (/dev/zero) is not read to its end. */
function readAtMost(file: string, limit: number): Buffer {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(limit);
    let n = 0;
    while (n < limit) {
      const got = fs.readSync(fd, buf, n, limit - n, null);
      if (got === 0) break;
      n += got;
    }
    return buf.subarray(0, n);
  } finally {
    fs.closeSync(fd);
  }
}

/** Reads and checks the file: the settings it sets. */
export function readConfigFile(choice: FileChoice): Values {
  const { file } = choice;
  let text: string;
  try {
    const st = fs.statSync(file);
    // A FIFO or socket would block the start forever waiting for a writer. Character devices stay
    // allowed (/dev/null is an empty file); the bounded read below stops /dev/zero.
    if (st.isFIFO() || st.isSocket()) throw new ConfigError(`cannot read the configuration file ${file}: not a regular file`);
    if (st.size > MAX_FILE_BYTES) throw new ConfigError(`${file}: too large for a configuration file (${st.size} bytes, at most ${MAX_FILE_BYTES})`);
    const bytes = readAtMost(file, MAX_FILE_BYTES + 1);
    if (bytes.length > MAX_FILE_BYTES) throw new ConfigError(`${file}: too large for a configuration file (more than ${MAX_FILE_BYTES} bytes)`);
    text = utf8(file, bytes);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    const e = err as NodeJS.ErrnoException;
    const reason = { ENOENT: 'no such file', EACCES: 'permission denied', EISDIR: 'it is a directory', ELOOP: 'a loop of symbolic links' }[e.code ?? ''] ?? e.message;
    throw new ConfigError(`cannot read the configuration file ${file}: ${reason}`);
  }
  let doc: Record<string, unknown>;
  try {
    doc = parse(text);
  } catch (err) {
    if (!(err instanceof TomlError)) throw err;
    const reason = err.message.split('\n')[0].replace(/^Invalid TOML document: /, '');
    throw new ConfigError(`${file}, line ${err.line}, column ${err.column}: not valid TOML: ${reason}`);
  }
  const base = path.dirname(file);
  const out: Values = {};
  for (const [key, value] of Object.entries(doc)) {
    const at = `${file}, line ${lineOf(text, key)}`;
    const setting = settingByKey(key);
    if (!setting) throw new ConfigError(`${at}: unknown key ${JSON.stringify(key)} (the settings are listed in the README and in parley serve --help)`);
    if (choice.inDataDir && key === 'data_dir') throw new ConfigError(`${at}: data_dir cannot be set in the data directory's own ${DATA_DIR_CONFIG}`);
    const v = check(setting.kind, value, base);
    if (v === null) throw new ConfigError(`${at}: ${key} must be ${expected(setting.kind, 'file')}, got ${show(value)}`);
    out[key] = v;
  }
  return out;
}
