// `parley --version`, `--help`, `<command> --help`, and the usage errors (exit 2, usage on stderr).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../helpers/cli';
import { PARLEY_VERSION } from '../../src/version';

const TOP_USAGE = `usage: parley <command> [options]

commands:
  serve              run the server
  init               create the organization and its owner; prints one JSON line with the credentials
  deactivate-realm   deactivate the organization (server stopped)
  reactivate-realm   reactivate the organization (server stopped)
  backup             copy the database consistently with SQLite's online backup (works while serving)
  zuliprc            print a zuliprc ([api] email, key, site) for a user

parley --version     print the version
parley <command> --help
`;

const SERVE_USAGE =
  'usage: parley serve [--data-dir DIR|:memory:] [--host HOST] [--port PORT] [--external-url URL] [--no-rate-limits] [--synchronous normal|full]\n' +
  '             [--demo] [--ready-file PATH] [--log-level error|warn|info|debug] [--log-format text|json] [--metrics]\n' +
  '  env: PARLEY_DATA_DIR, PARLEY_HOST, PARLEY_PORT, PARLEY_EXTERNAL_URL, PARLEY_RATE_LIMITS=off, PARLEY_SYNCHRONOUS,\n' +
  '       PARLEY_LOG_LEVEL, PARLEY_LOG_FORMAT, PARLEY_METRICS=on, PARLEY_METRICS_TOKEN\n';
const INIT_USAGE = 'usage: parley init --data-dir DIR --realm-name NAME --email EMAIL --password PW [--full-name NAME]\n';

describe('parley --version', () => {
  it('prints the version and exits 0', async () => {
    assert.deepEqual(await runCli(['--version']), { code: 0, signal: null, stdout: `parley ${PARLEY_VERSION}\n`, stderr: '' });
  });
});

describe('parley --help', () => {
  it('prints the command list on stdout and exits 0', async () => {
    assert.deepEqual(await runCli(['--help']), { code: 0, signal: null, stdout: TOP_USAGE, stderr: '' });
  });
});

describe('parley <command> --help', () => {
  it('prints the usage of each command and exits 0', async () => {
    const cases: [string, string][] = [
      ['serve', SERVE_USAGE],
      ['init', INIT_USAGE],
      ['deactivate-realm', 'usage: parley deactivate-realm --data-dir DIR\n'],
      ['reactivate-realm', 'usage: parley reactivate-realm --data-dir DIR\n'],
      ['backup', 'usage: parley backup --data-dir DIR FILE\n'],
      ['zuliprc', 'usage: parley zuliprc --data-dir DIR --email EMAIL [--site URL]\n'],
    ];
    const results = await Promise.all(cases.map(([cmd]) => runCli([cmd, '--help'])));
    cases.forEach(([cmd, usage], i) => {
      assert.deepEqual(results[i], { code: 0, signal: null, stdout: usage, stderr: '' }, cmd);
    });
  });
});

describe('usage errors', () => {
  it('refuses an unknown command with the command list on stderr and exit 2', async () => {
    assert.deepEqual(await runCli(['frobnicate']), {
      code: 2,
      signal: null,
      stdout: '',
      stderr: `parley: unknown command 'frobnicate'\n${TOP_USAGE}`,
    });
  });

  it('refuses an unknown flag with the command usage on stderr and exit 2', async () => {
    assert.deepEqual(await runCli(['serve', '--bogus']), {
      code: 2,
      signal: null,
      stdout: '',
      stderr:
        `parley: Unknown option '--bogus'. To specify a positional argument starting with a '-', ` +
        `place it at the end of the command after '--', as in '-- "--bogus"\n${SERVE_USAGE}`,
    });
  });

  it('refuses a flag without its value, a bad port, a stray argument and a missing required flag', async () => {
    const cases: [string[], string][] = [
      [['serve', '--port'], `parley: Option '--port <value>' argument missing\n${SERVE_USAGE}`],
      [['serve', '--port', 'abc'], `parley: invalid --port abc\n${SERVE_USAGE}`],
      [['serve', '--port', '70000'], `parley: invalid --port 70000\n${SERVE_USAGE}`],
      [['serve', 'extra'], `parley: unexpected argument 'extra'\n${SERVE_USAGE}`],
      [['serve', '--log-level', 'loud'], `parley: --log-level must be one of error, warn, info, debug, got "loud"\n${SERVE_USAGE}`],
      [['serve', '--log-format', 'xml'], `parley: --log-format must be one of text, json, got "xml"\n${SERVE_USAGE}`],
      [['serve', '--log-level'], `parley: Option '--log-level <value>' argument missing\n${SERVE_USAGE}`],
      [['init', '--data-dir', '/nonexistent/parley-test'], `parley: --realm-name is required\n${INIT_USAGE}`],
      [['deactivate-realm'], 'parley: --data-dir is required\nusage: parley deactivate-realm --data-dir DIR\n'],
      [['backup', '--data-dir', '/nonexistent/parley-test'], 'parley: backup needs exactly one FILE\nusage: parley backup --data-dir DIR FILE\n'],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli(args)));
    cases.forEach(([args, stderr], i) => {
      assert.deepEqual(results[i], { code: 2, signal: null, stdout: '', stderr }, args.join(' '));
    });
  });

  it('refuses a bad PARLEY_LOG_LEVEL or PARLEY_LOG_FORMAT as a usage error (exit 2)', async () => {
    const [level, format] = await Promise.all([
      runCli(['serve', '--port', '0'], { env: { PARLEY_LOG_LEVEL: 'verbose', PARLEY_DATA_DIR: ':memory:' } }),
      runCli(['serve', '--port', '0'], { env: { PARLEY_LOG_FORMAT: 'JSON', PARLEY_DATA_DIR: ':memory:' } }),
    ]);
    assert.deepEqual(level, {
      code: 2,
      signal: null,
      stdout: '',
      stderr: `parley: PARLEY_LOG_LEVEL must be one of error, warn, info, debug, got "verbose"\n${SERVE_USAGE}`,
    });
    assert.deepEqual(format, { code: 2, signal: null, stdout: '', stderr: `parley: PARLEY_LOG_FORMAT must be one of text, json, got "JSON"\n${SERVE_USAGE}` });
  });
});
