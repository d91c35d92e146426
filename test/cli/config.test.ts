// Settings from the configuration file, the environment and the flags (src/config.ts, src/config-file.ts,
// src/settings.ts), checked on loadConfig itself: precedence flag > env > file > default for settings of
// every type, which file is read, and the whole message for every kind of bad input. The same rules
// through the real command line: test/cli/config-cli.test.ts.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig, type LoadedConfig } from '../../src/config';
import { valuesFromFlags } from '../../src/settings';
import { makeTempDirs } from '../helpers/cli';

const temps = makeTempDirs('parley-config-');
after(() => temps.cleanup());

/** A directory with `parley.toml` holding `text`; returns the file's path. */
function tomlFile(text: string, name = 'parley.toml'): string {
  const file = path.join(temps.make(), name);
  fs.writeFileSync(file, text);
  return file;
}

/** loadConfig with no /etc/parley.toml (a path that does not exist) unless `etc` is given. */
function load(opts: { file?: string; env?: NodeJS.ProcessEnv; flags?: Record<string, string | boolean>; etc?: string }): LoadedConfig {
  return loadConfig({
    flags: valuesFromFlags(opts.flags ?? {}),
    configFlag: opts.file,
    env: opts.env ?? {},
    etc: opts.etc ?? path.join(temps.make(), 'no-such-parley.toml'),
  });
}

function message(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return `${(err as Error).constructor.name}: ${(err as Error).message}`;
  }
  assert.fail('no error');
}

const FILE = `# every type of setting
port = 4000
external_url = "https://file.example.com/"
rate_limits = false
synchronous = "full"
rate_limit_user = "10/60"
smtp_url = "smtp://mail.example.com:25"
email_from = "File <file@example.com>"
data_dir = "data-from-file"
`;

describe('precedence: flag over environment over file over defaults', () => {
  it('takes the defaults when nothing is set', () => {
    const { config, file, dataDirSet } = load({});
    assert.equal(file, null);
    assert.equal(dataDirSet, false);
    assert.deepEqual(
      [config.port, config.externalUrl, config.rateLimits, config.synchronous, config.rateLimitRules.apiByUser, config.smtpUrl, config.emailFrom, config.dataDir],
      [9991, null, true, 'normal', [{ max: 200, windowMs: 60_000 }], null, null, path.resolve('./data')],
    );
  });

  it('takes the file over the defaults (relative paths from the file, trailing slashes off URLs)', () => {
    const f = tomlFile(FILE);
    const { config, file, dataDirSet } = load({ file: f });
    assert.equal(file, f);
    assert.equal(dataDirSet, true);
    assert.deepEqual(
      [config.port, config.externalUrl, config.rateLimits, config.synchronous, config.rateLimitRules.apiByUser, config.smtpUrl, config.emailFrom, config.dataDir],
      [4000, 'https://file.example.com', false, 'full', [{ max: 10, windowMs: 60_000 }], 'smtp://mail.example.com:25', 'File <file@example.com>', path.join(path.dirname(f), 'data-from-file')],
    );
  });

  it('takes the environment over the file', () => {
    const env = {
      PARLEY_PORT: '5000',
      PARLEY_EXTERNAL_URL: 'https://env.example.com',
      PARLEY_RATE_LIMITS: 'on',
      PARLEY_SYNCHRONOUS: 'normal',
      PARLEY_RATE_LIMIT_USER: '20/60',
      PARLEY_SMTP_URL: 'smtps://env.example.com',
      PARLEY_EMAIL_FROM: 'env@example.com',
      PARLEY_DATA_DIR: 'env-data',
    };
    const { config } = load({ file: tomlFile(FILE), env });
    assert.deepEqual(
      [config.port, config.externalUrl, config.rateLimits, config.synchronous, config.rateLimitRules.apiByUser, config.smtpUrl, config.emailFrom, config.dataDir],
      [5000, 'https://env.example.com', true, 'normal', [{ max: 20, windowMs: 60_000 }], 'smtps://env.example.com', 'env@example.com', path.resolve('env-data')],
    );
  });

  it('takes the flags over the environment', () => {
    const env = { PARLEY_PORT: '5000', PARLEY_EXTERNAL_URL: 'https://env.example.com', PARLEY_RATE_LIMITS: 'on', PARLEY_SYNCHRONOUS: 'normal', PARLEY_RATE_LIMIT_USER: '20/60', PARLEY_EMAIL_FROM: 'env@example.com' };
    const flags = {
      port: '6000',
      'external-url': 'http://flag.example.com//',
      'no-rate-limits': true,
      synchronous: 'full',
      'rate-limit-user': '30/10',
      'email-from': 'flag@example.com',
      'data-dir': ':memory:',
    };
    const { config } = load({ file: tomlFile(FILE), env, flags });
    assert.deepEqual(
      [config.port, config.externalUrl, config.rateLimits, config.synchronous, config.rateLimitRules.apiByUser, config.smtpUrl, config.emailFrom, config.dataDir],
      [6000, 'http://flag.example.com', false, 'full', [{ max: 30, windowMs: 10_000 }], 'smtp://mail.example.com:25', 'flag@example.com', ':memory:'],
    );
  });

  it('decides setting by setting: a flag for one, the file for another', () => {
    const { config } = load({ file: tomlFile('port = 4000\nheartbeat_seconds = 7\n'), env: { PARLEY_HEARTBEAT_SECONDS: '8' }, flags: { port: '0' } });
    assert.deepEqual([config.port, config.heartbeatSeconds, config.queueLifespanSeconds], [0, 8, 600]);
  });

  it('reads every boolean spelling from the environment, and an empty variable as unset', () => {
    const spellings: [string, boolean][] = [['on', true], ['1', true], ['true', true], ['YES', true], ['off', false], ['0', false], ['false', false], ['no', false]];
    for (const [raw, want] of spellings) assert.equal(load({ env: { PARLEY_WEB_PUBLIC_STREAMS: raw } }).config.webPublicStreamsEnabled, want, raw);
    assert.equal(load({ env: { PARLEY_PORT: '' } }).config.port, 9991);
  });

  it('builds the push service from push_url and push_token, from any layer', () => {
    const { config } = load({ file: tomlFile('push_url = "https://push.example.com"\n'), env: { PARLEY_PUSH_TOKEN: 'secret' } });
    assert.deepEqual(config.pushService, { url: 'https://push.example.com', token: 'secret' });
  });
});

describe('which file is read', () => {
  it('reads /etc/parley.toml when it exists and nothing names a file', () => {
    const etc = tomlFile('port = 4100\n');
    assert.deepEqual([load({ etc }).file, load({ etc }).config.port], [etc, 4100]);
  });

  it('reads DATA_DIR/parley.conf when there is no /etc/parley.toml', () => {
    const dataDir = temps.make();
    fs.writeFileSync(path.join(dataDir, 'parley.conf'), 'port = 4200\n');
    const r = load({ env: { PARLEY_DATA_DIR: dataDir } });
    assert.deepEqual([r.file, r.config.port, r.config.dataDir], [path.join(dataDir, 'parley.conf'), 4200, dataDir]);
    const viaFlag = load({ flags: { 'data-dir': dataDir } });
    assert.deepEqual([viaFlag.file, viaFlag.config.port], [path.join(dataDir, 'parley.conf'), 4200]);
  });

  it('reads only one file: /etc/parley.toml hides DATA_DIR/parley.conf, --config hides both', () => {
    const dataDir = temps.make();
    fs.writeFileSync(path.join(dataDir, 'parley.conf'), 'port = 4200\n');
    const etc = tomlFile('port = 4100\n');
    assert.equal(load({ etc, env: { PARLEY_DATA_DIR: dataDir } }).config.port, 4100);
    assert.equal(load({ etc, env: { PARLEY_DATA_DIR: dataDir }, file: tomlFile('port = 4300\n') }).config.port, 4300);
  });

  it('takes PARLEY_CONFIG as --config, and --config over it', () => {
    const a = tomlFile('port = 4400\n');
    const b = tomlFile('port = 4500\n');
    assert.equal(load({ env: { PARLEY_CONFIG: a } }).config.port, 4400);
    assert.equal(load({ env: { PARLEY_CONFIG: a }, file: b }).config.port, 4500);
  });

  it('looks for no parley.conf for an in-memory database', () => {
    assert.equal(load({ flags: { 'data-dir': ':memory:' } }).file, null);
  });
});

describe('bad input', () => {
  it('names the file, the line and the key for a value of the wrong type', () => {
    const cases: [string, string][] = [
      ['# comment\n\nport = "9991"\n', 'line 3: port must be an integer from 0 to 65535, got "9991"'],
      ['port = 70000\n', 'line 1: port must be an integer from 0 to 65535, got 70000'],
      ['port = 1.5\n', 'line 1: port must be an integer from 0 to 65535, got 1.5'],
      ['host = "::"\nmax_body_bytes = 0\n', 'line 2: max_body_bytes must be an integer of at least 1, got 0'],
      ['host = 127\n', 'line 1: host must be a non-empty string, got 127'],
      ['host = ""\n', 'line 1: host must be a non-empty string, got ""'],
      ['rate_limits = "off"\n', 'line 1: rate_limits must be true or false, got "off"'],
      ['synchronous = "extra"\n', 'line 1: synchronous must be "normal" or "full", got "extra"'],
      ['rate_limit_login = "5 per minute"\n', 'line 1: rate_limit_login must be requests/seconds like "200/60", got "5 per minute"'],
      ['external_url = "chat.example.com"\n', 'line 1: external_url must be an http or https URL without credentials, query or fragment, got "chat.example.com"'],
      ['smtp_url = "http://mail.example.com"\n', 'line 1: smtp_url must be an smtp or smtps URL, got "http://mail.example.com"'],
      ['data_dir = ""\n', 'line 1: data_dir must be a path, got ""'],
      ['port = [1, 2]\n', 'line 1: port must be an integer from 0 to 65535, got an array'],
      ['email_from = 2024-01-01\n', 'line 1: email_from must be a non-empty string, got a date'],
      ["  'port' = true\n", 'line 1: port must be an integer from 0 to 65535, got true'],
      ['email_from = """\nport = 1\n"""\nport = "x"\n', 'line 4: port must be an integer from 0 to 65535, got "x"'],
      // Finding: a key spelled with an escape was found on no line, and the message said "line 0".
      ['host = "::"\n"p\\u006frt" = "x"\n', 'line 2: port must be an integer from 0 to 65535, got "x"'],
    ];
    for (const [text, want] of cases) {
      const f = tomlFile(text);
      assert.equal(message(() => load({ file: f })), `ConfigError: ${f}, ${want}`, text);
    }
  });

  it('names the file, the line and the key for an unknown key, a table or a dotted key', () => {
    const cases: [string, string][] = [
      ['port = 1\nprot = 2\n', 'line 2: unknown key "prot"'],
      ['port = 1\n\n[smtp]\nurl = "smtp://x"\n', 'line 3: unknown key "smtp"'],
      ['smtp.url = "smtp://x"\n', 'line 1: unknown key "smtp"'],
      ['"__proto__" = 1\n', 'line 1: unknown key "__proto__"'],
    ];
    for (const [text, want] of cases) {
      const f = tomlFile(text);
      assert.equal(message(() => load({ file: f })), `ConfigError: ${f}, ${want} (the settings are listed in the README and in parley serve --help)`, text);
    }
  });

  it('names the file, the line and the column of a file that does not parse', () => {
    const cases: [string, string][] = [
      ['port = \n', 'line 1, column 8: not valid TOML: invalid value'],
      ['port = 1\nport = 2\n', 'line 2, column 1: not valid TOML: trying to redefine an already defined table or value'],
      ['host = "unterminated\nport = 1\n', 'line 1, column 21: not valid TOML: control characters are not allowed in strings'],
    ];
    for (const [text, want] of cases) {
      const f = tomlFile(text);
      assert.equal(message(() => load({ file: f })), `ConfigError: ${f}, ${want}`, text);
    }
  });

  it('refuses a named file that is missing, a directory, or too large', () => {
    const dir = temps.make();
    const missing = path.join(dir, 'nope.toml');
    assert.equal(message(() => load({ file: missing })), `ConfigError: cannot read the configuration file ${missing}: no such file`);
    assert.equal(message(() => load({ env: { PARLEY_CONFIG: missing } })), `ConfigError: cannot read the configuration file ${missing}: no such file`);
    assert.equal(message(() => load({ file: dir })), `ConfigError: cannot read the configuration file ${dir}: it is a directory`);
    const big = tomlFile('# ' + 'x'.repeat(1024 * 1024) + '\n');
    assert.equal(message(() => load({ file: big })), `ConfigError: ${big}: too large for a configuration file (1048579 bytes, at most 1048576)`);
  });

  it('warns when a file every user can read holds a secret', () => {
    // Finding: push_token, tls_key_passphrase or an SMTP password in a world-readable file (the
    // usual 0644 of a file made with an editor) went unnoticed; install-service writes 0640.
    const f = tomlFile('push_url = "https://push.example.com"\npush_token = "T"\nsmtp_url = "smtp://u:pw@mail.example.com"\n');
    fs.chmodSync(f, 0o644);
    assert.deepEqual(load({ file: f }).warnings, [`${f} holds secrets (push_token, smtp_url) and every user of this machine can read it: chmod o-r ${f}`]);
    fs.chmodSync(f, 0o640);
    assert.deepEqual(load({ file: f }).warnings, []);
    const plain = tomlFile('port = 1\nsmtp_url = "smtp://mail.example.com"\n');
    fs.chmodSync(plain, 0o644);
    assert.deepEqual(load({ file: plain }).warnings, []);
    assert.deepEqual(load({}).warnings, []);
  });

  it('refuses a file that is not UTF-8, naming the line', () => {
    // Finding: Latin-1 bytes were decoded as U+FFFD without a word (email_from = "Parley Café" became
    // "Parley Caf\uFFFD"); TOML files are UTF-8.
    const f = path.join(temps.make(), 'latin1.toml');
    fs.writeFileSync(f, Buffer.concat([Buffer.from('port = 1\nemail_from = "Parley Caf'), Buffer.from([0xe9]), Buffer.from(' <a@example.com>"\n')]));
    assert.equal(message(() => load({ file: f })), `ConfigError: ${f}, line 2: not valid TOML: the file is not UTF-8 text`);
  });

  it('refuses data_dir in the data directory\'s own parley.conf', () => {
    const dataDir = temps.make();
    const f = path.join(dataDir, 'parley.conf');
    fs.writeFileSync(f, 'port = 1\ndata_dir = "/elsewhere"\n');
    assert.equal(message(() => load({ env: { PARLEY_DATA_DIR: dataDir } })), `ConfigError: ${f}, line 2: data_dir cannot be set in the data directory's own parley.conf`);
  });

  it('names the environment variable with a bad value', () => {
    const cases: [Record<string, string>, string][] = [
      [{ PARLEY_PORT: 'abc' }, 'PARLEY_PORT must be an integer from 0 to 65535, got "abc"'],
      [{ PARLEY_PORT: '1e3' }, 'PARLEY_PORT must be an integer from 0 to 65535, got "1e3"'],
      [{ PARLEY_HEARTBEAT_SECONDS: '0' }, 'PARLEY_HEARTBEAT_SECONDS must be an integer from 1 to 86400, got "0"'],
      [{ PARLEY_RATE_LIMITS: 'maybe' }, 'PARLEY_RATE_LIMITS must be on or off, got "maybe"'],
      [{ PARLEY_SYNCHRONOUS: 'FULL' }, 'PARLEY_SYNCHRONOUS must be "normal" or "full", got "FULL"'],
      [{ PARLEY_RATE_LIMIT_IP: '0/60' }, 'PARLEY_RATE_LIMIT_IP must be requests/seconds like "200/60", got "0/60"'],
      [{ PARLEY_PUSH_URL: 'ftp://push' }, 'PARLEY_PUSH_URL must be an http or https URL without credentials, query or fragment, got "ftp://push"'],
    ];
    for (const [env, want] of cases) assert.equal(message(() => load({ env })), `ConfigError: ${want}`, JSON.stringify(env));
  });

  it('names the flag with a bad value (a FlagError: the command line adds its usage)', () => {
    const cases: [Record<string, string | boolean>, string][] = [
      [{ port: 'x' }, '--port must be an integer from 0 to 65535, got "x"'],
      [{ 'max-body-bytes': '-1' }, '--max-body-bytes must be an integer of at least 1, got "-1"'],
      [{ 'external-url': 'nowhere' }, '--external-url must be an http or https URL without credentials, query or fragment, got "nowhere"'],
      [{ 'web-public-streams': true, 'no-web-public-streams': true }, '--web-public-streams and --no-web-public-streams contradict each other'],
    ];
    for (const [flags, want] of cases) assert.equal(message(() => load({ flags })), `FlagError: ${want}`, JSON.stringify(flags));
  });

  it('refuses a path with surrounding spaces and a blank string, which a copy-paste or an Environment= line leaves', () => {
    // Finding: PARLEY_DATA_DIR=" /var/lib/parley" resolved to "./ /var/lib/parley" under the working
    // directory, where serve silently created a new, empty organization; PARLEY_HOST="  " was taken.
    const cases: [Record<string, string>, string][] = [
      [{ PARLEY_DATA_DIR: ' /var/lib/parley' }, 'PARLEY_DATA_DIR must be a path, got " /var/lib/parley"'],
      [{ PARLEY_TLS_CERT: '/etc/cert.pem\t' }, 'PARLEY_TLS_CERT must be a path, got "/etc/cert.pem\\t"'],
      [{ PARLEY_DATA_DIR: '   ' }, 'PARLEY_DATA_DIR must be a path, got "   "'],
      [{ PARLEY_HOST: '  ' }, 'PARLEY_HOST must be a non-empty string, got "  "'],
    ];
    for (const [env, want] of cases) assert.equal(message(() => load({ env })), `ConfigError: ${want}`, JSON.stringify(env));
    assert.equal(message(() => load({ flags: { 'data-dir': 'data ' } })), 'FlagError: --data-dir must be a path, got "data "');
    const f = tomlFile('data_dir = "/srv/parley "\n');
    assert.equal(message(() => load({ file: f })), `ConfigError: ${f}, line 1: data_dir must be a path, got "/srv/parley "`);
    // Spaces inside a path are fine.
    assert.equal(load({ env: { PARLEY_DATA_DIR: '/srv/my parley' } }).config.dataDir, '/srv/my parley');
  });

  it('refuses a public or push URL with credentials, a query or a fragment', () => {
    // Finding: external_url = "https://admin:secret@chat.example.com" was taken, and the public URL
    // is realm_url in the unauthenticated GET /server_settings: the password went to anyone who asked.
    // A query or fragment broke every link (paths are appended to the URL).
    const cases: [Record<string, string>, string][] = [
      [{ PARLEY_EXTERNAL_URL: 'https://admin:secret@chat.example.com' }, 'PARLEY_EXTERNAL_URL must be an http or https URL without credentials, query or fragment, got "https://admin:secret@chat.example.com"'],
      [{ PARLEY_EXTERNAL_URL: 'https://chat.example.com/?x=1' }, 'PARLEY_EXTERNAL_URL must be an http or https URL without credentials, query or fragment, got "https://chat.example.com/?x=1"'],
      [{ PARLEY_EXTERNAL_URL: 'https://chat.example.com#top' }, 'PARLEY_EXTERNAL_URL must be an http or https URL without credentials, query or fragment, got "https://chat.example.com#top"'],
      [{ PARLEY_PUSH_URL: 'https://u@push.example.com' }, 'PARLEY_PUSH_URL must be an http or https URL without credentials, query or fragment, got "https://u@push.example.com"'],
    ];
    for (const [env, want] of cases) assert.equal(message(() => load({ env })), `ConfigError: ${want}`, JSON.stringify(env));
    // The mail server's URL is where its credentials go.
    assert.equal(load({ env: { PARLEY_SMTP_URL: 'smtp://user:pass@mail.example.com:587' } }).config.smtpUrl, 'smtp://user:pass@mail.example.com:587');
    assert.equal(load({ env: { PARLEY_EXTERNAL_URL: 'https://chat.example.com:8443/' } }).config.externalUrl, 'https://chat.example.com:8443');
  });

  it('bounds the settings that become timers below setTimeout\'s 2^31 ms limit', () => {
    // Finding: heartbeat_seconds = 3000000 (or an outgoing-webhook timeout/retry past ~24.8 days)
    // was accepted, and Node fires a timer past 2^31-1 ms after 1 ms: every GET /events answered a
    // heartbeat at once (clients spin), and every webhook request timed out at once.
    const cases: [Record<string, string>, string][] = [
      [{ PARLEY_HEARTBEAT_SECONDS: '3000000' }, 'PARLEY_HEARTBEAT_SECONDS must be an integer from 1 to 86400, got "3000000"'],
      [{ PARLEY_OUTGOING_WEBHOOK_TIMEOUT_MS: '2147483648' }, 'PARLEY_OUTGOING_WEBHOOK_TIMEOUT_MS must be an integer from 1 to 3600000, got "2147483648"'],
      [{ PARLEY_OUTGOING_WEBHOOK_RETRY_MS: '600000000' }, 'PARLEY_OUTGOING_WEBHOOK_RETRY_MS must be an integer from 0 to 3600000, got "600000000"'],
    ];
    for (const [env, want] of cases) assert.equal(message(() => load({ env })), `ConfigError: ${want}`, JSON.stringify(env));
    const f = tomlFile('heartbeat_seconds = 86401\n');
    assert.equal(message(() => load({ file: f })), `ConfigError: ${f}, line 1: heartbeat_seconds must be an integer from 1 to 86400, got 86401`);
    const edge = load({ env: { PARLEY_HEARTBEAT_SECONDS: '86400', PARLEY_OUTGOING_WEBHOOK_TIMEOUT_MS: '3600000', PARLEY_OUTGOING_WEBHOOK_RETRY_MS: '3600000' } }).config;
    assert.deepEqual([edge.heartbeatSeconds, edge.outgoingWebhooks.timeoutMs, edge.outgoingWebhooks.retryBaseMs], [86400, 3_600_000, 3_600_000]);
  });

  it('checks the file before the environment could hide a bad value in it', () => {
    const f = tomlFile('port = "x"\n');
    assert.equal(message(() => load({ file: f, env: { PARLEY_PORT: '1' } })), `ConfigError: ${f}, line 1: port must be an integer from 0 to 65535, got "x"`);
  });
});
