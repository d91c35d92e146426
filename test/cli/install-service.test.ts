// `parley install-service` into a temporary root (--root: files under it, no command run on this
// machine) and --dry-run: the unit's whole text (packaging/parley.service with ExecStart naming the
// executable), the default /etc/parley.toml (packaging/parley.toml), an existing one kept, modes, the
// printed steps, and an executable the service could not reach refused.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { makeTempDirs, ROOT, runCli } from '../helpers/cli';

const tmp = makeTempDirs('parley-install-');
after(() => tmp.cleanup());
const SLOW = { timeoutMs: 60_000 };

const SHIPPED_UNIT = fs.readFileSync(path.join(ROOT, 'packaging', 'parley.service'), 'utf8');
const DEFAULT_CONFIG = fs.readFileSync(path.join(ROOT, 'packaging', 'parley.toml'), 'utf8');
const SHIPPED_EXEC = 'ExecStart=/usr/local/bin/parley serve --config /etc/parley.toml\n';

const FOOTER =
  '\n' +
  "The first start creates the organization and logs the owner's login once; read it with:\n" +
  "  sudo journalctl -u parley | grep 'owner login'\n" +
  'Settings: /etc/parley.toml (then: sudo systemctl restart parley). Logs: journalctl -u parley -f\n';

const USERADD = 'useradd --system --user-group --home-dir /var/lib/parley --no-create-home --shell /usr/sbin/nologin parley';

const mode = (file: string) => fs.statSync(file).mode & 0o777;

describe('parley install-service --root DIR', () => {
  it('writes the shipped unit and the default configuration, and lists the commands it did not run', async () => {
    const root = tmp.make();
    const r = await runCli(['install-service', '--root', root, '--exec', '/usr/local/bin/parley'], SLOW);
    const unit = path.join(root, 'etc/systemd/system/parley.service');
    const config = path.join(root, 'etc/parley.toml');
    const skipped = `not run (--root ${root})`;
    assert.deepEqual(r, {
      code: 0,
      signal: null,
      stderr: '',
      stdout:
        `wrote ${unit}\n` +
        `wrote ${config}\n` +
        `${skipped}: ${USERADD}\n` +
        `${skipped}: chown parley:parley /var/lib/parley\n` +
        `${skipped}: chown root:parley /etc/parley.toml\n` +
        `${skipped}: systemctl daemon-reload\n` +
        `${skipped}: systemctl enable --now parley\n` +
        FOOTER,
    });
    assert.equal(fs.readFileSync(unit, 'utf8'), SHIPPED_UNIT);
    assert.equal(fs.readFileSync(config, 'utf8'), DEFAULT_CONFIG);
    assert.deepEqual([mode(unit), mode(config), mode(path.join(root, 'var/lib/parley'))], [0o644, 0o640, 0o750]);
  });

  it('keeps an existing configuration file and rewrites the unit for a moved executable', async () => {
    const root = tmp.make();
    const config = path.join(root, 'etc/parley.toml');
    fs.mkdirSync(path.dirname(config), { recursive: true });
    fs.writeFileSync(config, 'port = 8000\n');
    const r = await runCli(['install-service', '--root', root, '--exec', '/opt/parley/parley', '--no-start'], SLOW);
    const unit = path.join(root, 'etc/systemd/system/parley.service');
    const skipped = `not run (--root ${root})`;
    assert.deepEqual(r, {
      code: 0,
      signal: null,
      stderr: '',
      stdout:
        `wrote ${unit}\n` +
        `kept ${config} (it exists)\n` +
        `${skipped}: ${USERADD}\n` +
        `${skipped}: chown parley:parley /var/lib/parley\n` +
        `${skipped}: systemctl daemon-reload\n` +
        FOOTER,
    });
    assert.equal(fs.readFileSync(config, 'utf8'), 'port = 8000\n');
    assert.equal(fs.readFileSync(unit, 'utf8'), SHIPPED_UNIT.replace(SHIPPED_EXEC, 'ExecStart=/opt/parley/parley serve --config /etc/parley.toml\n'));
  });

  it('keeps a configuration file that is a symbolic link to a file not there yet', async () => {
    // Finding: existsSync follows the link, so a dangling /etc/parley.toml (pointing at a disk not
    // mounted yet) counted as absent: the unit was written, then the 'wx' write failed with a bare
    // "EEXIST: file already exists" (exit 1) half way through the install.
    const root = tmp.make();
    const config = path.join(root, 'etc/parley.toml');
    fs.mkdirSync(path.dirname(config), { recursive: true });
    fs.symlinkSync('/srv/not-mounted/parley.toml', config);
    const r = await runCli(['install-service', '--root', root, '--exec', '/opt/parley/parley', '--no-start'], SLOW);
    const unit = path.join(root, 'etc/systemd/system/parley.service');
    const skipped = `not run (--root ${root})`;
    assert.deepEqual(r, {
      code: 0,
      signal: null,
      stderr: '',
      stdout:
        `wrote ${unit}\n` +
        `kept ${config} (it exists)\n` +
        `${skipped}: ${USERADD}\n` +
        `${skipped}: chown parley:parley /var/lib/parley\n` +
        `${skipped}: systemctl daemon-reload\n` +
        FOOTER,
    });
    assert.equal(fs.readlinkSync(config), '/srv/not-mounted/parley.toml');
  });

  it('quotes an executable path with spaces and escapes % and $ for systemd', async () => {
    const root = tmp.make();
    const r = await runCli(['install-service', '--root', root, '--exec', '/opt/my parley/100%$x'], SLOW);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      fs.readFileSync(path.join(root, 'etc/systemd/system/parley.service'), 'utf8'),
      SHIPPED_UNIT.replace(SHIPPED_EXEC, 'ExecStart="/opt/my parley/100%%$$x" serve --config /etc/parley.toml\n'),
    );
  });

  it('names the program it runs as when not told (node and the script, run from source)', async () => {
    const root = tmp.make();
    const r = await runCli(['install-service', '--root', root], SLOW);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      fs.readFileSync(path.join(root, 'etc/systemd/system/parley.service'), 'utf8'),
      SHIPPED_UNIT.replace(SHIPPED_EXEC, `ExecStart=${process.execPath} --import tsx ${path.join(ROOT, 'src', 'main.ts')} serve --config /etc/parley.toml\n`),
    );
  });

  it('refuses an executable in a home directory, which ProtectHome=yes hides from the service', async () => {
    const root = tmp.make();
    const r = await runCli(['install-service', '--root', root, '--exec', '/home/pi/parley-linux-arm64'], SLOW);
    assert.deepEqual(r, {
      code: 1,
      signal: null,
      stdout: '',
      stderr:
        'parley: the service could not run /home/pi/parley-linux-arm64: it hides home directories (ProtectHome=yes); ' +
        'copy the executable out first: sudo install -m 0755 /home/pi/parley-linux-arm64 /usr/local/bin/parley, then sudo /usr/local/bin/parley install-service\n',
    });
    assert.deepEqual(fs.readdirSync(root), []);
  });

  it('refuses an executable path with a line break or another control character, which would add lines to the unit', async () => {
    // Finding: a newline went into ExecStart as is, so a path like this one wrote a second directive
    // (ExecStartPre=, run as root before the service) into the unit.
    const root = tmp.make();
    const evil = '/opt/x\nExecStartPre=/bin/touch /tmp/owned\n';
    const [a, b] = await Promise.all([
      runCli(['install-service', '--root', root, '--exec', evil], SLOW),
      runCli(['install-service', '--root', root, '--exec', '/opt/tab\there'], SLOW),
    ]);
    assert.deepEqual(a, {
      code: 1,
      signal: null,
      stdout: '',
      stderr: `parley: the executable path ${JSON.stringify(evil)} holds a control character (a line break, a tab...), which a systemd unit cannot hold: move or rename the executable, e.g. to /usr/local/bin/parley\n`,
    });
    assert.deepEqual(b, {
      code: 1,
      signal: null,
      stdout: '',
      stderr: `parley: the executable path "/opt/tab\\there" holds a control character (a line break, a tab...), which a systemd unit cannot hold: move or rename the executable, e.g. to /usr/local/bin/parley\n`,
    });
    assert.deepEqual(fs.readdirSync(root), []);
  });

  it('refuses stray arguments and unknown flags as usage errors', async () => {
    const usage = 'usage: parley install-service [--no-start] [--dry-run] [--root DIR] [--exec PATH]\n';
    const [a, b, c, d] = await Promise.all([
      runCli(['install-service', 'now'], SLOW),
      runCli(['install-service', '--user', 'x'], SLOW),
      runCli(['install-service', '--root', ''], SLOW),
      runCli(['install-service', '--root', tmp.make(), '--exec', ''], SLOW),
    ]);
    assert.deepEqual(a, { code: 2, signal: null, stdout: '', stderr: `parley: unexpected argument 'now'\n${usage}` });
    assert.deepEqual(c, { code: 2, signal: null, stdout: '', stderr: `parley: --root needs a path\n${usage}` });
    assert.deepEqual(d, { code: 2, signal: null, stdout: '', stderr: `parley: --exec needs a path\n${usage}` });
    assert.equal(b.code, 2);
    assert.ok(b.stderr.startsWith("parley: Unknown option '--user'") && b.stderr.endsWith(usage), b.stderr);
  });
});

describe('the shipped unit', () => {
  it('supports systemctl reload (the README\'s certificate renewal): ExecReload sends SIGHUP to Parley', () => {
    // Finding: without ExecReload, `systemctl reload parley` failed ("Job type reload is not applicable").
    assert.ok(SHIPPED_UNIT.split('\n').includes('ExecReload=/bin/kill -HUP $MAINPID'), SHIPPED_UNIT);
  });
});

describe('parley install-service --dry-run', () => {
  it('prints the unit and every step, and writes nothing', async () => {
    const root = tmp.make();
    const r = await runCli(['install-service', '--dry-run', '--root', root, '--exec', '/usr/local/bin/parley'], SLOW);
    assert.deepEqual(r, {
      code: 0,
      signal: null,
      stderr: '',
      stdout:
        `would write ${path.join(root, 'etc/systemd/system/parley.service')}:\n` +
        SHIPPED_UNIT.replace(/^(?=.)/gm, '    ') +
        `would write ${path.join(root, 'etc/parley.toml')} (every setting, commented)\n` +
        `would run: ${USERADD}\n` +
        'would run: chown parley:parley /var/lib/parley\n' +
        'would run: chown root:parley /etc/parley.toml\n' +
        'would run: systemctl daemon-reload\n' +
        'would run: systemctl enable --now parley\n' +
        FOOTER,
    });
    assert.deepEqual(fs.readdirSync(root), []);
  });
});

describe('the configuration file install-service writes', () => {
  it('starts the server as it is (with the data directory moved into the test)', async () => {
    const dir = tmp.make();
    const file = path.join(dir, 'parley.toml');
    // The service values point at /var/lib/parley and 0.0.0.0: move them, keep every other line.
    fs.writeFileSync(file, DEFAULT_CONFIG.replace('data_dir = "/var/lib/parley"', 'data_dir = "data"').replace('host = "0.0.0.0"', 'host = "127.0.0.1"').replace('cache_dir = "/var/cache/parley"', 'cache_dir = "cache"'));
    const r = await runCli(['init', '--config', file, '--realm-name', 'Pi', '--email', 'pi@example.com', '--password', 'secret123'], SLOW);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(fs.existsSync(path.join(dir, 'data', 'parley.db')));
  });
});
