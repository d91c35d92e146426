// The `parley` command line: serve, init, deactivate-realm, reactivate-realm, backup, export, import, zuliprc,
// install-service. Settings come from flags, the environment and the configuration file (src/config.ts).
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { createApp, type App } from './app';
import { loadConfig, type Config } from './config';
import { doCreateRealm, doSetRealmDeactivated } from './actions/realm';
import { startRetentionJob } from './actions/retention';
import { startDatabaseMaintenance } from './db/maintenance';
import { createPrivately } from './db/open';
import { startScheduledDelivery } from './actions/scheduled-messages';
import { failInterruptedExports } from './actions/realm-export';
import { doCreateStarterChannel } from './actions/starter';
import { syncApiEmails } from './actions/user-access';
import { allRoutes } from './api';
import { JsonableError } from './http/errors';
import { startServer, type Server } from './http/server';
import { checkTlsPair, TlsError, tlsValidityWarning, type CheckedTls } from './http/tls';
import { DEMO_USERS, readyInfo, seedDemo, writeReadyFile } from './demo';
import { zuliprc } from './cli/zuliprc';
import { EXPORT_TYPE_NAMES, EXPORT_USAGE, runExport } from './cli/export';
import { installService, INSTALL_SERVICE_OPTIONS, INSTALL_SERVICE_USAGE } from './cli/install-service';
import { serveSettingsHelp } from './cli/settings-doc';
import { setCacheDir } from './native';
import { ConfigError, FlagError, SETTINGS, valuesFromFlags } from './settings';
import { findRealm } from './lib/realm';
import { findUserById, type UserRow } from './lib/users';
import { randomAlnum } from './lib/secrets';
import { PARLEY_VERSION } from './version';
import { ImportError } from './import/errors';
import { IMPORT_FORMATS, runImport, type ImportFormat } from './import/run';

type Options = NonNullable<ParseArgsConfig["options"]>;
type Values = Record<string, string | boolean | undefined>;

interface Command {
  summary: string;
  usage: string;
  /** Printed after the usage by `--help` only. */
  help?: string;
  options: Options;
  run(values: Record<string, string | boolean | undefined>): Promise<number> | number;
}

class UsageError extends Error {}

/** Every command finds its data directory the same way: --data-dir, PARLEY_DATA_DIR, or the configuration file. */
const dataDirOption: Options = { config: { type: 'string' }, 'data-dir': { type: 'string' } };

/** One flag per setting (src/settings.ts); a boolean setting has --FLAG and --no-FLAG. */
const settingOptions: Options = Object.fromEntries(
  SETTINGS.flatMap((s): [string, Options[string]][] =>
    s.kind.type === 'boolean'
      ? [
          [s.flag, { type: 'boolean' }],
          [`no-${s.flag}`, { type: 'boolean' }],
        ]
      : [[s.flag, { type: 'string' }]],
  ),
);

const COMMANDS: Record<string, Command> = {
  serve: {
    summary: 'run the server',
    usage:
      'parley serve [--config FILE] [--data-dir DIR|:memory:] [--host HOST] [--port PORT] [--demo] [--ready-file PATH]\n' +
      '             [--SETTING VALUE ...] [--no-rate-limits ...]   (parley serve --help lists every setting)',
    help: serveSettingsHelp(),
    options: {
      ...dataDirOption,
      ...settingOptions,
      demo: { type: 'boolean' },
      'ready-file': { type: 'string' },
    },
    run: serve,
  },
  init: {
    summary: 'create the organization and its owner; prints one JSON line with the credentials',
    usage: 'parley init --data-dir DIR|--config FILE --realm-name NAME --email EMAIL --password PW [--full-name NAME]',
    options: {
      ...dataDirOption,
      'realm-name': { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      'full-name': { type: 'string' },
    },
    run: init,
  },
  'deactivate-realm': {
    summary: 'deactivate the organization (server stopped)',
    usage: 'parley deactivate-realm --data-dir DIR|--config FILE',
    options: dataDirOption,
    run: (v) => setRealmState(v, true),
  },
  'reactivate-realm': {
    summary: 'reactivate the organization (server stopped)',
    usage: 'parley reactivate-realm --data-dir DIR|--config FILE',
    options: dataDirOption,
    run: (v) => setRealmState(v, false),
  },
  backup: {
    summary: "copy the database consistently with SQLite's online backup (works while serving)",
    usage: 'parley backup --data-dir DIR|--config FILE BACKUP_FILE',
    options: dataDirOption,
    run: () => 0, // replaced below: needs positionals
  },
  export: {
    summary: "write the organization as a Zulip-format export tarball (works while serving)",
    usage: EXPORT_USAGE,
    help:
      'Exports everything, like Zulip\'s manage.py export. --export-type leaves out what the API\'s exports\n' +
      'do: public (only public channels\' messages) or consent (also what consenting members can read).\n',
    options: { ...dataDirOption, 'export-type': { type: 'string' } },
    run: () => 0, // replaced below: needs positionals
  },
  import: {
    summary: 'create the organization from an export (Zulip .tar.gz, Slack .zip) in an empty data dir (server stopped)',
    usage: 'parley import [--from slack|zulip] --data-dir DIR|--config FILE [--realm-name NAME] [--external-url URL] EXPORT_FILE',
    help:
      'Reads the whole export into a new database in a hidden staging directory inside the data dir, and\n' +
      'moves it into place only when everything succeeded: a failed import leaves the data dir as it was.\n' +
      'Prints one JSON line with what was imported, then one JSON line per account (email, API key, and a\n' +
      'link to set a password, on --external-url).\n' +
      '--from defaults to zulip: a Zulip export .tar.gz (Zulip\'s own or parley export\'s), under its ids and its\n' +
      'organization name unless --realm-name; --from slack takes a Slack workspace export .zip.\n',
    options: { ...dataDirOption, from: { type: 'string' }, 'realm-name': { type: 'string' }, 'external-url': { type: 'string' } },
    run: () => 0, // replaced below: needs positionals
  },
  zuliprc: {
    summary: "print a zuliprc ([api] email, key, site) for a user",
    usage: 'parley zuliprc --data-dir DIR|--config FILE --email EMAIL [--site URL]',
    options: { ...dataDirOption, email: { type: 'string' }, site: { type: 'string' } },
    run: (v) => zuliprc(openExisting(v), v),
  },
  'install-service': {
    summary: 'install Parley as a systemd service (user parley, /var/lib/parley, /etc/parley.toml)',
    usage: INSTALL_SERVICE_USAGE,
    options: INSTALL_SERVICE_OPTIONS,
    run: (v) => installService(v),
  },
};

function topUsage(): string {
  const lines = ['usage: parley <command> [options]', '', 'commands:'];
  for (const [name, c] of Object.entries(COMMANDS)) lines.push(`  ${name.padEnd(18)} ${c.summary}`);
  lines.push('', 'parley --version     print the version', 'parley <command> --help');
  return lines.join('\n');
}

function baseConfig(values: Record<string, string | boolean | undefined>, requireDataDir: boolean): Config {
  const configFlag = typeof values.config === 'string' ? values.config : undefined;
  const { config, dataDirSet, warnings } = loadConfig({ flags: valuesFromFlags(values), configFlag });
  for (const w of warnings) process.stderr.write(`parley: warning: ${w}\n`);
  if (requireDataDir && !dataDirSet) throw new UsageError('--data-dir is required (or PARLEY_DATA_DIR, or data_dir in the configuration file)');
  // Before createApp loads SQLite's addon: the executable extracts it there.
  setCacheDir(config.cacheDir);
  return config;
}

function openExisting(values: Record<string, string | boolean | undefined>): App {
  const config = baseConfig(values, true);
  if (!fs.existsSync(path.join(config.dataDir, 'parley.db'))) {
    throw new Error(`no Parley database in ${config.dataDir} (run parley init first)`);
  }
  return createApp(config);
}

function setRealmState(values: Record<string, string | boolean | undefined>, deactivated: boolean): number {
  const app = openExisting(values);
  try {
    if (!findRealm(app.db)) throw new Error('the data dir has no organization (run parley init first)');
    doSetRealmDeactivated(app, deactivated);
  } finally {
    app.close();
  }
  process.stdout.write(`organization ${deactivated ? 'deactivated' : 'reactivated'}\n`);
  return 0;
}

function init(values: Record<string, string | boolean | undefined>): number {
  const need = (name: string) => {
    const val = values[name];
    if (typeof val !== 'string' || val === '') throw new UsageError(`--${name} is required`);
    return val;
  };
  const config = baseConfig(values, true);
  const realmName = need('realm-name');
  const email = need('email');
  const password = need('password');
  const fullName = typeof values['full-name'] === 'string' ? values['full-name'] : email.split('@')[0];
  const app = createApp(config);
  try {
    if (findRealm(app.db)) {
      process.stderr.write(`parley: ${config.dataDir} is already initialised\n`);
      return 1;
    }
    const { realmId, owner } = doCreateRealm(app, { name: realmName, ownerEmail: email, ownerPassword: password, ownerFullName: fullName });
    app.batch.commit();
    process.stdout.write(JSON.stringify({ realm_id: realmId, user_id: owner.userId, email: owner.email, api_key: owner.apiKey }) + '\n');
    return 0;
  } finally {
    app.close();
  }
}

async function serve(values: Record<string, string | boolean | undefined>): Promise<number> {
  const config = baseConfig(values, false);
  // Both or neither, from whichever layers set them; checked before anything is written, so a first
  // start cannot create the organization and then fail.
  if ((config.tlsCert === null) !== (config.tlsKey === null)) throw new UsageError('--tls-cert and --tls-key go together (or PARLEY_TLS_CERT and PARLEY_TLS_KEY, tls_cert and tls_key)');
  if (config.tlsCert && config.tlsKey) warnAboutTls(checkTlsPair({ cert: config.tlsCert, key: config.tlsKey, passphrase: config.tlsKeyPassphrase }));
  const app = createApp(config);
  let readyEmails: readonly string[] = values.demo ? DEMO_USERS.map((u) => u.email) : [];
  let firstStart = false;
  if (values.demo && !findRealm(app.db)) seedDemo(app);
  if (!findRealm(app.db)) {
    // First start on an empty data dir: create an organization and tell its owner how to log in, once.
    const password = randomAlnum(16);
    const email = 'owner@parley.example.com';
    const { realmId, owner } = doCreateRealm(app, { name: 'Parley', ownerEmail: email, ownerPassword: password, ownerFullName: 'Owner' });
    doCreateStarterChannel(app, findUserById(app.db, realmId, owner.userId) as UserRow);
    app.batch.commit();
    process.stderr.write(
      `parley: created a new organization in ${config.dataDir}\n` +
        `parley: owner login: ${email} / password ${password} / API key ${owner.apiKey}\n`,
    );
    readyEmails = [email];
    firstStart = true;
  }
  // Placeholder addresses carry the public URL's host: follow a changed host, and a database from
  // before address visibility was applied (src/lib/user-emails.ts).
  syncApiEmails(app);
  // An export the previous run was making stopped with it: marked failed before anyone asks.
  failInterruptedExports(app);
  app.batch.commit();
  const server = await startServer(app, allRoutes, config.host, config.port);
  startRetentionJob(app);
  startScheduledDelivery(app);
  startDatabaseMaintenance(app);
  if (!config.externalUrl) app.publicUrl = server.url;
  // Handlers go in before the ready line: a supervisor may signal as soon as it reads it.
  const stopped = new Promise<number>((resolve) => {
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      app.shutdown();
      server
        .close()
        .then(() => app.close())
        .then(() => resolve(0), (err) => {
          console.error('parley: shutdown failed', err);
          resolve(1);
        });
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    // A renewed certificate (certbot's deploy hook, `systemctl reload`) without a restart. Without
    // TLS, SIGHUP keeps its default meaning (end) only on a terminal, where it is a hangup; a service
    // must survive `systemctl reload` (systemd counts a SIGHUP death as clean and would not restart).
    if (server.tls) process.on('SIGHUP', () => reloadTls(server));
    else if (!process.stderr.isTTY) process.on('SIGHUP', () => process.stderr.write('parley: SIGHUP: no TLS certificate to reload; still serving\n'));
  });
  // Where the web app is, for the person who just set this up (stderr: stdout's one line is for scripts).
  if (firstStart) process.stderr.write(`parley: open ${app.publicUrl}/ in a browser and log in as the owner\n`);
  process.stdout.write(`listening on ${server.url}\n`);
  // The ready file appears only once the server answers (it is listening: uWS accepts from here on).
  if (typeof values['ready-file'] === 'string') writeReadyFile(values['ready-file'], readyInfo(app, server.url, readyEmails));
  return stopped;
}

/** An expired (or not yet valid) certificate is served, but the log says why clients refuse it. */
function warnAboutTls(pair: CheckedTls): void {
  const warning = tlsValidityWarning(pair);
  if (warning) process.stderr.write(`parley: warning: ${warning}\n`);
}

/** SIGHUP: serve the renewed certificate to new connections, or keep the old one and say why. */
function reloadTls(server: Server): void {
  try {
    const before = server.tls;
    const pair = server.reloadTls();
    if (pair === before) {
      process.stderr.write(`parley: TLS certificate unchanged in ${pair.cert} (SHA-256 ${pair.fingerprint256}); nothing reloaded\n`);
      warnAboutTls(pair);
      return;
    }
    process.stderr.write(`parley: TLS certificate reloaded from ${pair.cert} (SHA-256 ${pair.fingerprint256}, valid until ${pair.validTo})\n`);
    warnAboutTls(pair);
  } catch (err) {
    const reason = err instanceof TlsError ? err.message : String(err);
    process.stderr.write(`parley: TLS reload failed, still serving the previous certificate: ${reason}\n`);
  }
}

async function backup(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: dataDirOption, allowPositionals: true, strict: true });
  if (positionals.length !== 1) throw new UsageError('backup needs exactly one BACKUP_FILE');
  const app = openExisting(values as Values);
  try {
    // Online backup copies a consistent snapshot page by page while other connections keep writing.
    // Readable by this user only, like the database it copies (when the file is new).
    createPrivately(path.resolve(positionals[0]));
    await app.db.backup(path.resolve(positionals[0]));
  } finally {
    app.close();
  }
  process.stdout.write(`backup written to ${path.resolve(positionals[0])}\n`);
  return 0;
}

async function exportCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: COMMANDS.export.options, allowPositionals: true, strict: true });
  if (positionals.length !== 1) throw new UsageError('export needs exactly one OUT.tar.gz');
  const typeName = values['export-type'] as string | undefined;
  if (typeName !== undefined && !Object.hasOwn(EXPORT_TYPE_NAMES, typeName)) throw new UsageError(`--export-type must be public or consent, not '${typeName}'`);
  const { 'export-type': _type, ...rest } = values;
  return runExport(openExisting(rest as Values), positionals[0], typeName === undefined ? undefined : EXPORT_TYPE_NAMES[typeName]);
}

async function importCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: COMMANDS.import.options, allowPositionals: true, strict: true });
  if (positionals.length !== 1) throw new UsageError('import needs exactly one EXPORT_FILE');
  const from = (values.from as string | undefined) ?? 'zulip';
  if (!(IMPORT_FORMATS as readonly string[]).includes(from)) throw new UsageError(`--from must be one of ${IMPORT_FORMATS.join(', ')}, not '${from}'`);
  // A Zulip export names its organization: '' keeps that name.
  const realmName = typeof values['realm-name'] === 'string' && values['realm-name'] !== '' ? values['realm-name'] : from === 'slack' ? 'Slack' : '';
  const config = baseConfig(values as Values, true);
  let report;
  try {
    report = await runImport(config, from as ImportFormat, positionals[0], { realmName });
  } catch (err) {
    if (err instanceof ImportError) {
      process.stderr.write(`parley: import failed, nothing was written: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  for (const w of report.warnings) process.stderr.write(`parley: warning: ${w}\n`);
  const { accounts, ...summary } = report;
  process.stdout.write(JSON.stringify(summary) + '\n');
  for (const a of accounts) process.stdout.write(JSON.stringify(a) + '\n');
  process.stderr.write(`parley: imported into ${path.resolve(config.dataDir)}; start the server with parley serve\n`);
  return 0;
}

/** Runs the CLI with `argv` (without node and script); resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-v') {
    process.stdout.write(`parley ${PARLEY_VERSION}\n`);
    return 0;
  }
  if (name === undefined) {
    process.stderr.write(topUsage() + '\n');
    return 2;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(topUsage() + '\n');
    return 0;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    process.stderr.write(`parley: unknown command '${name}'\n${topUsage()}\n`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`usage: ${command.usage}\n${command.help ?? ''}`);
    return 0;
  }
  try {
    // Exactly one configuration file is read: a second --config would silently be the only one.
    if (rest.filter((a) => a === '--config' || a.startsWith('--config=')).length > 1) throw new UsageError('--config given twice: Parley reads one configuration file');
    if (name === 'backup') return await backup(rest);
    if (name === 'export') return await exportCommand(rest);
    if (name === 'import') return await importCommand(rest);
    const { values, positionals } = parseArgs({ args: rest, options: command.options, allowPositionals: true, strict: true });
    if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
    return await command.run(values as Values);
  } catch (err) {
    if (err instanceof UsageError || err instanceof FlagError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`parley: ${(err as Error).message}\nusage: ${command.usage}\n`);
      return 2;
    }
    if (err instanceof ConfigError) {
      // A configuration mistake: exit 2 like a usage error (the service does not restart on it), but
      // the message already names the file, line and key, so no usage text.
      process.stderr.write(`parley: ${err.message}\n`);
      return 2;
    }
    if (err instanceof JsonableError) {
      process.stderr.write(`parley: ${err.message}\n`);
      return 1;
    }
    process.stderr.write(`parley: ${(err as Error).message}\n`);
    return 1;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
