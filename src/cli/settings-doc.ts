// Texts made from the settings registry (src/settings.ts): `parley serve --help`, the README's settings
// table (test/cli/settings-doc.test.ts keeps README.md equal to it) and the default configuration file
// that `parley install-service` writes (packaging/parley.toml is the same text, checked by that test).
import { OTHER_ENV, SETTINGS, type Kind, type Setting, type Value } from '../settings';

function typeText(kind: Kind): string {
  switch (kind.type) {
    case 'integer':
      return kind.max === Number.MAX_SAFE_INTEGER ? `integer ≥ ${kind.min}` : `integer ${kind.min}–${kind.max}`;
    case 'enum':
      return kind.values.map((v) => `\`${v}\``).join(' or ');
    case 'url':
      return `${kind.protocols.map((p) => p.slice(0, -1)).join('/')} URL`;
    case 'rate':
      return '`N/S` string';
    case 'addresses':
      return 'addresses, CIDR ranges (comma-separated string)';
    default:
      return kind.type;
  }
}

/** A value as TOML writes it (strings as basic strings: JSON's escapes are TOML's). */
function toml(value: Value): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

function defaultText(s: Setting): string {
  return s.default === null ? (s.defaultText ?? 'none') : `\`${toml(s.default)}\``;
}

function flagText(s: Setting): string {
  return s.kind.type === 'boolean' ? `--${s.flag}, --no-${s.flag}` : `--${s.flag} ${s.metavar ?? 'VALUE'}`;
}

/** Appended to `parley serve --help`: every setting's flag, environment variable and file key. */
export function serveSettingsHelp(): string {
  const rows = SETTINGS.map((s) => [flagText(s), s.env, s.key, s.doc.replace(/`/g, '')]);
  rows.unshift(['--config FILE', 'PARLEY_CONFIG', '', 'the configuration file']);
  // Columns as wide as most entries need; the two longest flags (--no-access-limits-presence) overflow.
  const width = (i: number, cap: number) => Math.min(cap, Math.max(...rows.map((r) => r[i].length)));
  const [w0, w1, w2] = [width(0, 33), width(1, 34), width(2, 27)];
  return (
    '\nsettings: flag, environment variable, key in the configuration file (flags win over the environment,\n' +
    'which wins over the file; the file is --config FILE, else /etc/parley.toml, else DATA_DIR/parley.conf):\n' +
    rows.map((r) => `  ${r[0].padEnd(w0)} ${r[1].padEnd(w1)} ${r[2].padEnd(w2)} ${r[3]}`.trimEnd()).join('\n') +
    '\n'
  );
}

/** The README's settings table (Markdown), every setting in one table. */
export function readmeSettingsTable(): string {
  const esc = (t: string) => t.replace(/\|/g, '\\|');
  const lines = ['| key in the file | flag | environment | type | default | meaning |', '|---|---|---|---|---|---|'];
  for (const s of SETTINGS) {
    const flags = s.kind.type === 'boolean' ? `\`--${s.flag}\`, \`--no-${s.flag}\`` : `\`--${s.flag}\``;
    lines.push(`| \`${s.key}\` | ${flags} | \`${s.env}\` | ${esc(typeText(s.kind))} | ${esc(defaultText(s))} | ${esc(s.doc)} |`);
  }
  for (const o of OTHER_ENV) {
    lines.push(`| | ${o.flag ? `\`--${o.flag}\`` : ''} | \`${o.env}\` | | | ${esc(o.doc)} |`);
  }
  return lines.join('\n') + '\n';
}

/** Settings the service's file sets (uncommented); every other one is listed commented, at its default. */
const SERVICE_VALUES: Record<string, { value: Value; comment: string }> = {
  data_dir: { value: '/var/lib/parley', comment: "data directory: parley.db, uploads/, outbox/ (the service's StateDirectory)" },
  host: { value: '0.0.0.0', comment: 'address to listen on: every IPv4 interface, so other machines reach Parley; "127.0.0.1" behind a reverse proxy' },
  cache_dir: { value: '/var/cache/parley', comment: "where the executable extracts its native addons (the service's CacheDirectory)" },
};

/** The /etc/parley.toml that `parley install-service` writes when there is none. */
export function defaultConfigToml(): string {
  const out = [
    "# Parley's configuration (TOML). `sudo systemctl restart parley` after a change.",
    '# Every setting is below: a commented line shows its default (or an example). PARLEY_* environment',
    '# variables and `parley serve` flags override this file; the README lists them all.',
  ];
  for (const s of SETTINGS) {
    out.push('');
    const service = SERVICE_VALUES[s.key];
    if (service) {
      out.push(`# ${service.comment}`, `${s.key} = ${toml(service.value)}`);
      continue;
    }
    const doc = s.default === null ? `${s.doc}; default: ${(s.defaultText ?? 'none').replace(/`/g, '')}` : s.doc;
    out.push(`# ${doc.replace(/`/g, '')}`, `# ${s.key} = ${toml(s.default ?? s.example ?? '')}`);
  }
  return out.join('\n') + '\n';
}

const TABLE_START = /^<!-- settings table: .*-->\n/m;
const TABLE_END = '<!-- end of settings table -->';

/** The README's text between its settings-table markers (the table), or null without the markers. */
export function currentSettingsTable(readme: string): string | null {
  const start = TABLE_START.exec(readme);
  const end = readme.indexOf(TABLE_END);
  if (!start || end < start.index) return null;
  return readme.slice(start.index + start[0].length, end);
}

/** `readme` with `table` between the markers. */
export function replaceSettingsTable(readme: string, table: string): string {
  const current = currentSettingsTable(readme);
  if (current === null) throw new Error('README.md has lost its settings table markers');
  const start = TABLE_START.exec(readme)!;
  const at = start.index + start[0].length;
  return readme.slice(0, at) + table + readme.slice(at + current.length);
}
