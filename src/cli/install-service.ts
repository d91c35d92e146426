// `parley install-service`: runs Parley as a systemd service. Writes the unit (packaging/parley.service,
// embedded in the executable, with ExecStart naming this executable) and, when there is none, a
// commented /etc/parley.toml; creates the `parley` system user; then daemon-reload and
// `enable --now` (skipped with --no-start). `--root DIR` writes under DIR and runs no command (they would
// act on this machine, not on DIR); `--dry-run` only prints what it would do. Without systemd as init
// (a container) the files are written and the systemctl steps skipped, with a note.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { ParseArgsConfig } from 'node:util';
import { seaModule } from '../native';
import { defaultConfigToml } from './settings-doc';

declare const PARLEY_SERVICE_UNIT: string | undefined;

export const INSTALL_SERVICE_USAGE = 'parley install-service [--no-start] [--dry-run] [--root DIR] [--exec PATH]';

export const INSTALL_SERVICE_OPTIONS: NonNullable<ParseArgsConfig['options']> = {
  'no-start': { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  root: { type: 'string' },
  exec: { type: 'string' },
};

const UNIT_PATH = '/etc/systemd/system/parley.service';
const CONFIG_PATH = '/etc/parley.toml';
const DATA_DIR = '/var/lib/parley';
const USER = 'parley';
/** The ExecStart line of packaging/parley.service; the command replaces its executable. */
const SHIPPED_EXEC_START = 'ExecStart=/usr/local/bin/parley serve --config /etc/parley.toml';

/** The shipped unit's text (inlined by build.mjs; read from the repository when run from source). */
export function shippedUnit(): string {
  if (typeof PARLEY_SERVICE_UNIT === 'string') return PARLEY_SERVICE_UNIT;
  return fs.readFileSync(path.join(__dirname, '..', '..', 'packaging', 'parley.service'), 'utf8');
}

/** One word of a systemd command line: quoted when needed, with % and $ doubled (systemd.service(5)). */
function systemdWord(word: string): string {
  const escaped = word.replace(/%/g, '%%').replace(/\$/g, '$$$$');
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(escaped) ? escaped : `"${escaped.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The command that runs this very program: the executable itself, or node with its script when run from source. */
function selfCommand(): string[] {
  if (seaModule()) return [process.execPath];
  return [process.execPath, ...process.execArgv, path.resolve(process.argv[1])];
}

/** The unit for an executable at `exec` (words of the command that runs Parley). */
export function unitText(exec: readonly string[]): string {
  const unit = shippedUnit();
  if (!unit.includes(SHIPPED_EXEC_START + '\n')) throw new Error('packaging/parley.service has lost its ExecStart line');
  return unit.replace(SHIPPED_EXEC_START, `ExecStart=${[...exec, 'serve', '--config', CONFIG_PATH].map(systemdWord).join(' ')}`);
}

function commandExists(cmd: string): boolean {
  return (process.env.PATH ?? '').split(':').some((dir) => dir !== '' && fs.existsSync(path.join(dir, cmd)));
}

function userExists(name: string): boolean {
  try {
    execFileSync('id', ['-u', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export function installService(values: Record<string, string | boolean | undefined>): number {
  if (values.root === '' || values.exec === '') {
    // An empty --root would mean the working directory, an empty --exec this directory: neither is meant.
    process.stderr.write(`parley: --${values.root === '' ? 'root' : 'exec'} needs a path\nusage: ${INSTALL_SERVICE_USAGE}\n`);
    return 2;
  }
  const dryRun = values['dry-run'] === true;
  const root = path.resolve(typeof values.root === 'string' ? values.root : '/');
  const onThisSystem = root === '/';
  const exec = typeof values.exec === 'string' ? [path.resolve(values.exec)] : selfCommand();
  const out = (line: string) => process.stdout.write(line + '\n');
  const at = (p: string) => path.join(root, p);

  if (onThisSystem && !dryRun && process.getuid?.() !== 0) {
    process.stderr.write('parley: install-service writes to /etc and creates a user: run it as root (sudo parley install-service)\n');
    return 1;
  }

  // A unit file is read line by line: a line break in a path would end ExecStart and start another
  // directive (ExecStartPre= runs as root). Quoting cannot carry it, so such a path is refused.
  // eslint-disable-next-line no-control-regex
  const unsafe = exec.find((word) => /[\x00-\x1f\x7f]/.test(word));
  if (unsafe !== undefined) {
    process.stderr.write(
      `parley: the executable path ${JSON.stringify(unsafe)} holds a control character (a line break, a tab...), which a systemd unit cannot hold: ` +
        'move or rename the executable, e.g. to /usr/local/bin/parley\n',
    );
    return 1;
  }

  // ProtectHome=yes hides /home, /root and /run/user from the service: it could not start from there.
  const hidden = exec.find((word) => /^\/(home|root|run\/user)(\/|$)/.test(word));
  if (hidden) {
    process.stderr.write(
      `parley: the service could not run ${hidden}: it hides home directories (ProtectHome=yes); ` +
        `copy the executable out first: sudo install -m 0755 ${hidden} /usr/local/bin/parley, then sudo /usr/local/bin/parley install-service\n`,
    );
    return 1;
  }

  // Files: the unit always (an upgrade may have moved the executable), the configuration only if absent.
  const unit = unitText(exec);
  const unitFile = at(UNIT_PATH);
  const configFile = at(CONFIG_PATH);
  // lstat, not existsSync: a symbolic link to a file not there yet (a disk mounted later) is the
  // administrator's configuration too, and must be kept as it is.
  const configExists = (() => {
    try {
      fs.lstatSync(configFile);
      return true;
    } catch {
      return false;
    }
  })();
  if (dryRun) {
    out(`would write ${unitFile}:`);
    process.stdout.write(unit.replace(/^(?=.)/gm, '    '));
    out(configExists ? `would keep ${configFile} (it exists)` : `would write ${configFile} (every setting, commented)`);
  } else {
    fs.mkdirSync(path.dirname(unitFile), { recursive: true });
    fs.writeFileSync(unitFile, unit, { mode: 0o644 });
    fs.chmodSync(unitFile, 0o644);
    out(`wrote ${unitFile}`);
    if (configExists) out(`kept ${configFile} (it exists)`);
    else {
      fs.mkdirSync(path.dirname(configFile), { recursive: true });
      // 0640: the file may hold SMTP and push credentials; the service reads it as group parley.
      fs.writeFileSync(configFile, defaultConfigToml(), { mode: 0o640, flag: 'wx' });
      out(`wrote ${configFile}`);
    }
    fs.mkdirSync(at(DATA_DIR), { recursive: true, mode: 0o750 });
  }

  // Commands, each on this machine only.
  // Under --root the user database is not this machine's: the useradd is listed, never checked.
  const commands: string[][] = [];
  if (!onThisSystem || !userExists(USER)) {
    commands.push(['useradd', '--system', '--user-group', '--home-dir', DATA_DIR, '--no-create-home', '--shell', '/usr/sbin/nologin', USER]);
  }
  commands.push(['chown', `${USER}:${USER}`, DATA_DIR]);
  // Only a file this command wrote: an existing one keeps the owner its administrator gave it.
  if (!configExists) commands.push(['chown', `root:${USER}`, CONFIG_PATH]);
  const systemd = fs.existsSync('/run/systemd/system') && commandExists('systemctl');
  const systemctl: string[][] = [['systemctl', 'daemon-reload']];
  if (values['no-start'] !== true) systemctl.push(['systemctl', 'enable', '--now', 'parley']);
  if (!onThisSystem || dryRun || systemd) commands.push(...systemctl);

  const why = dryRun ? 'would run' : `not run (--root ${root})`;
  for (const cmd of commands) {
    if (dryRun || !onThisSystem) {
      out(`${why}: ${cmd.join(' ')}`);
      continue;
    }
    out(`running: ${cmd.join(' ')}`);
    execFileSync(cmd[0], cmd.slice(1), { stdio: 'inherit' });
  }
  if (onThisSystem && !dryRun && !systemd) {
    out('systemd is not running here: the service is installed but not started (start it with systemctl where systemd runs)');
  }
  out('');
  out('The first start creates the organization and logs the owner\'s login once; read it with:');
  out("  sudo journalctl -u parley | grep 'owner login'");
  out(`Settings: ${CONFIG_PATH} (then: sudo systemctl restart parley). Logs: journalctl -u parley -f`);
  return 0;
}
