// `parley --version`, `--help`, `<command> --help`, and the usage errors (exit 2, usage on stderr).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../helpers/cli';
import { PARLEY_VERSION } from '../../src/version';
import { serveSettingsHelp } from '../../src/cli/settings-doc';

const TOP_USAGE = `usage: parley <command> [options]

commands:
  serve              run the server
  init               create the organization and its owner; prints one JSON line with the credentials
  deactivate-realm   deactivate the organization (server stopped)
  reactivate-realm   reactivate the organization (server stopped)
  backup             copy the database consistently with SQLite's online backup (works while serving)
  export             write the organization as a Zulip-format export tarball (works while serving)
  import             create the organization from an export (Zulip .tar.gz, Slack .zip) in an empty data dir (server stopped)
  zuliprc            print a zuliprc ([api] email, key, site) for a user
  install-service    install Parley as a systemd service (user parley, /var/lib/parley, /etc/parley.toml)

parley --version     print the version
parley <command> --help
`;

const SERVE_USAGE =
  'usage: parley serve [--config FILE] [--data-dir DIR|:memory:] [--host HOST] [--port PORT] [--demo] [--ready-file PATH]\n' +
  '             [--SETTING VALUE ...] [--no-rate-limits ...]   (parley serve --help lists every setting)\n';
const INIT_USAGE = 'usage: parley init --data-dir DIR|--config FILE --realm-name NAME --email EMAIL --password PW [--full-name NAME]\n';

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
      ['serve', SERVE_USAGE + serveSettingsHelp()],
      ['init', INIT_USAGE],
      ['deactivate-realm', 'usage: parley deactivate-realm --data-dir DIR|--config FILE\n'],
      ['reactivate-realm', 'usage: parley reactivate-realm --data-dir DIR|--config FILE\n'],
      ['backup', 'usage: parley backup --data-dir DIR|--config FILE BACKUP_FILE\n'],
      [
        'export',
        'usage: parley export --data-dir DIR|--config FILE [--export-type public|consent] OUT.tar.gz\n' +
          "Exports everything, like Zulip's manage.py export. --export-type leaves out what the API's exports\n" +
          "do: public (only public channels' messages) or consent (also what consenting members can read).\n",
      ],
      ['zuliprc', 'usage: parley zuliprc --data-dir DIR|--config FILE --email EMAIL [--site URL]\n'],
      ['install-service', 'usage: parley install-service [--no-start] [--dry-run] [--root DIR] [--exec PATH]\n'],
    ];
    // Started together on a shared machine: a generous harness timeout (this checks output, not speed).
    const results = await Promise.all(cases.map(([cmd]) => runCli([cmd, '--help'], { timeoutMs: 60_000 })));
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
      [['serve', '--port', 'abc'], `parley: --port must be an integer from 0 to 65535, got "abc"\n${SERVE_USAGE}`],
      [['serve', '--port', '70000'], `parley: --port must be an integer from 0 to 65535, got "70000"\n${SERVE_USAGE}`],
      [['serve', '--rate-limits', '--no-rate-limits'], `parley: --rate-limits and --no-rate-limits contradict each other\n${SERVE_USAGE}`],
      [['serve', '--synchronous', 'off'], `parley: --synchronous must be "normal" or "full", got "off"\n${SERVE_USAGE}`],
      [['serve', 'extra'], `parley: unexpected argument 'extra'\n${SERVE_USAGE}`],
      [['serve', '--log-level', 'loud'], `parley: --log-level must be "error" or "warn" or "info" or "debug", got "loud"\n${SERVE_USAGE}`],
      [['serve', '--log-format', 'xml'], `parley: --log-format must be "text" or "json", got "xml"\n${SERVE_USAGE}`],
      [['serve', '--log-level'], `parley: Option '--log-level <value>' argument missing\n${SERVE_USAGE}`],
      // Only one configuration file is ever read: a second --config was silently the only one read.
      [['serve', '--config', '/dev/null', '--config=/nonexistent/b.toml'], `parley: --config given twice: Parley reads one configuration file\n${SERVE_USAGE}`],
      [['backup', '--config', '/dev/null', '--config', '/dev/null', 'out.db'], 'parley: --config given twice: Parley reads one configuration file\nusage: parley backup --data-dir DIR|--config FILE BACKUP_FILE\n'],
      [['init', '--data-dir', '/nonexistent/parley-test'], `parley: --realm-name is required\n${INIT_USAGE}`],
      [
        ['deactivate-realm'],
        'parley: --data-dir is required (or PARLEY_DATA_DIR, or data_dir in the configuration file)\nusage: parley deactivate-realm --data-dir DIR|--config FILE\n',
      ],
      [['backup', '--data-dir', '/nonexistent/parley-test'], 'parley: backup needs exactly one BACKUP_FILE\nusage: parley backup --data-dir DIR|--config FILE BACKUP_FILE\n'],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli(args, { timeoutMs: 60_000 })));
    cases.forEach(([args, stderr], i) => {
      assert.deepEqual(results[i], { code: 2, signal: null, stdout: '', stderr }, args.join(' '));
    });
  });

  it('refuses a TLS certificate without its key (flags, environment or file) and a trusted proxy that is not an address', async () => {
    const apart = `parley: --tls-cert and --tls-key go together (or PARLEY_TLS_CERT and PARLEY_TLS_KEY, tls_cert and tls_key)\n${SERVE_USAGE}`;
    const cases: [string[], Record<string, string>, string][] = [
      [['serve', '--tls-cert', '/nonexistent/cert.pem'], {}, apart],
      [['serve', '--tls-key', '/nonexistent/key.pem'], {}, apart],
      [['serve', '--data-dir', ':memory:'], { PARLEY_TLS_CERT: '/nonexistent/cert.pem' }, apart],
      [
        ['serve', '--trusted-proxies', '127.0.0.1,proxy.local'],
        {},
        `parley: --trusted-proxies must be addresses or CIDR ranges separated by commas, like "127.0.0.1,::1", got "127.0.0.1,proxy.local"\n${SERVE_USAGE}`,
      ],
    ];
    for (const [args, env, stderr] of cases) {
      assert.deepEqual(await runCli(args, { env }), { code: 2, signal: null, stdout: '', stderr }, args.join(' '));
    }
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
      stderr: 'parley: PARLEY_LOG_LEVEL must be "error" or "warn" or "info" or "debug", got "verbose"\n',
    });
    assert.deepEqual(format, { code: 2, signal: null, stdout: '', stderr: 'parley: PARLEY_LOG_FORMAT must be "text" or "json", got "JSON"\n' });
  });
});
