// Regenerates docs/compatibility.md from the router's own route table (src/api/index.ts allRoutes)
// against Zulip's endpoint list (../shared/reference/zulip-endpoints.tsv): each Zulip endpoint and
// whether Parley serves it, then the routes only Parley has. The "Known differences" section (read by
// scripts/check-conformance.mjs) is hand-written and kept as it is.
//
//   node --import tsx scripts/gen-compat.mjs [--check]     (--check: exit 1 if the file is stale)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(root, 'docs', 'compatibility.md');
const TSV = path.resolve(root, '..', 'shared', 'reference', 'zulip-endpoints.tsv');
const KNOWN_HEADING = '## Known differences';

const { allRoutes } = await import(path.join(root, 'src', 'api', 'index.ts'));

/** '/api/v1/users/{user_id:int}' → '/users/{}': the path relative to /api/v1, parameters unnamed. */
export const shape = (p) => p.replace(/^\/api\/v1(?=\/)/, '').replace(/\{[^}]*\}/g, '{}');

// Why a route exists that Zulip 10.2's list lacks (first matching prefix wins).
const PARLEY_ONLY_NOTES = [
  [/^\/(login|logout|welcome|join|accounts)\b/, 'web pages (sign-in, invitations, email confirmation), not REST API'],
  [/^\/health$/, 'readiness check for supervisors (Zulip serves GET /health too, outside its REST API)'],
  [/^\/metrics$/, 'Prometheus metrics (off by default)'],
  [/^\/user_uploads\/(download|temporary)\b/, 'file downloads as Zulip serves them (the REST list only has the temporary-URL endpoint)'],
  [/^\/channels\/create\b/, 'Zulip 11 (feature level 315+): create a channel'],
  [/^\/channel_folders\b/, 'Zulip 11: channel folders'],
  [/^\/default_streams\b/, 'Zulip endpoint missing from the 10.2 document'],
  [/^\/bot_storage\b/, "Zulip's bot storage API (used by the python bots; not in the OpenAPI document)"],
  [/^\/users\/me\/subscriptions\/\{\}$/, 'update one subscription setting (route exists in Zulip 10.2, undocumented)'],
  [/^\/settings\/(display|notifications)\b/, 'legacy settings endpoints Zulip still serves'],
  [/^\/realm$/, 'organization settings'],
  [/^\/tus\b/, 'tus resumable uploads (Zulip 11)'],
  [/^\/submessage$/, "Zulip's widget endpoint: poll and to-do submessages (used by the web and mobile apps; not in the OpenAPI document)"],
  [/^\/bots\b/, "Zulip's bot administration endpoints (used by the web app; not in the OpenAPI document)"],
  [/^\/realm\/profile_fields\/\{\}$/, 'edit or delete one custom profile field (Zulip serves it; undocumented in 10.2)'],
  [/^\/users\/me\/profile_data\b/, 'own custom profile field values (Zulip serves it; undocumented in 10.2)'],
  [/^\/users\/me\/avatar$/, "upload or remove one's avatar (Zulip serves it; undocumented in 10.2)"],
  [/^\/realm\/icon$/, 'the organization icon: upload, remove (Zulip serves it; undocumented in 10.2)'],
  [/^\/avatar\//, "Zulip's avatar redirects, by user ID or email"],
  [/^\/export\/realm\/\{\}$/, 'delete a data export (Zulip serves it; not in the 10.2 document)'],
  [/^\/user_avatars\/exports\//, "data export tarballs, at Zulip's path (for the organization's administrators only)"],
  [/^\/user_avatars\//, 'avatar, icon and custom emoji image files, as Zulip serves them'],
  [/^\/static\/generated\/emoji\/images\//, 'the :zulip: emoji image'],
  [/^\/static\/generated\/emoji\//, 'server_emoji_data_url: the standard emoji table'],
  [/^\/static\/images\//, 'built-in images: the default organization icon and logo, the unknown-user avatar'],
];

// Why a Zulip endpoint is not served (first matching 'METHOD shape' wins). Every endpoint Parley does
// not serve needs one (test/conformance/compat-table.test.ts).
const NOT_SERVED_REASONS = [
  [/^POST \/dev_fetch_api_key$/, 'development servers only: Zulip serves it only with its development environment'],
  [/^POST \/zulip-outgoing-webhook$/, "the payload Zulip POSTs to an outgoing-webhook bot's own server, not a route: Parley sends it (README, Bots)"],
  [/^POST \/(real-time|rest-error-handling)$/, "a documentation page in Zulip's API document, not a route (Parley follows what it describes)"],
  [/^POST \/jwt\/fetch_api_key$/, 'JWT authentication needs an external identity provider; Parley signs in with passwords and API keys'],
  [/^(GET|POST) \/calls\//, 'video calls through an external service (BigBlueButton, Nextcloud Talk, Webex, ...) that Parley has no integration with; Jitsi links need no server route'],
  [/^POST \/remotes\//, "a push notification bouncer's endpoint (the service Zulip servers send pushes through), not a chat server's"],
  [/^GET \/thumbnail\//, 'Parley makes no thumbnails: inline previews point at the uploaded file itself'],
];

function readEndpoints() {
  if (!fs.existsSync(TSV)) throw new Error(`gen-compat: ${TSV} is missing`);
  const [header, ...lines] = fs.readFileSync(TSV, 'utf8').trim().split('\n');
  const cols = header.split('\t');
  return lines.map((l) => Object.fromEntries(l.split('\t').map((v, i) => [cols[i], v])));
}

/** The Markdown of docs/compatibility.md, keeping `known` (the hand-written section) verbatim. */
export function render(known) {
  const endpoints = readEndpoints();
  const routes = allRoutes.map((r) => ({ method: r.method, path: r.path, shape: shape(r.path) }));
  const served = new Map(); // 'METHOD shape' → route patterns
  for (const r of routes) {
    const k = `${r.method} ${r.shape}`;
    served.set(k, [...(served.get(k) ?? []), r.path]);
  }
  const zulipKeys = new Set(endpoints.map((e) => `${e.method} ${shape(e.path)}`));
  const rows = endpoints.map((e) => {
    const patterns = served.get(`${e.method} ${shape(e.path)}`);
    const notes = [];
    if (e.source && e.source !== 'zulip.yaml@10.2') notes.push(e.source);
    if (patterns) notes.push(`Parley route: \`${patterns.join('`, `')}\``);
    else {
      const reason = NOT_SERVED_REASONS.find(([re]) => re.test(`${e.method} ${shape(e.path)}`))?.[1];
      notes.push(`not served: ${reason ?? 'REASON MISSING'}`);
    }
    return `| ${e.method} | \`${e.path}\` | ${e.operationId || ''} | ${patterns ? 'yes' : 'no'} | ${notes.join('; ')} |`;
  });
  const parleyOnly = routes
    .filter((r) => !zulipKeys.has(`${r.method} ${r.shape}`))
    .map((r) => {
      const note = PARLEY_ONLY_NOTES.find(([re]) => re.test(r.shape))?.[1] ?? '';
      return `| ${r.method} | \`${r.path}\` | ${note} |`;
    });
  const servedCount = endpoints.filter((e) => served.has(`${e.method} ${shape(e.path)}`)).length;
  return [
    '# Compatibility with Zulip',
    '',
    '<!-- Generated by scripts/gen-compat.mjs from src/api/index.ts (allRoutes) and',
    '     ../shared/reference/zulip-endpoints.tsv. Regenerate with `node --import tsx scripts/gen-compat.mjs`;',
    '     edit by hand only the "Known differences" section, which regeneration keeps. -->',
    '',
    `Parley serves **${servedCount} of ${endpoints.length}** endpoints in Zulip's list (Zulip 10.2's OpenAPI`,
    `document plus newer ones marked by feature level), and ${parleyOnly.length} routes of its own. Every route`,
    'in the router appears in one of the two tables (test/conformance/compat-table.test.ts).',
    '',
    '## Zulip endpoints',
    '',
    '| method | path | operationId | served | notes |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    '## Parley-only routes',
    '',
    'Routes that are not in the endpoint list: web pages, file downloads, and Zulip endpoints newer than',
    'or missing from the 10.2 document.',
    '',
    '| method | path | notes |',
    '|---|---|---|',
    ...parleyOnly,
    '',
    known.trimEnd(),
    '',
  ].join('\n');
}

/** The hand-written "Known differences" section of the current file (a stub when absent). */
export function knownSection(text) {
  const i = text.indexOf(KNOWN_HEADING);
  if (i < 0) return `${KNOWN_HEADING}\n\n(none listed)\n`;
  return text.slice(i);
}

const current = fs.existsSync(OUT) ? fs.readFileSync(OUT, 'utf8') : '';
const next = render(knownSection(current));
if (process.argv.includes('--check')) {
  if (next !== current) {
    console.error('gen-compat: docs/compatibility.md is stale: run node --import tsx scripts/gen-compat.mjs');
    process.exit(1);
  }
  console.log('gen-compat: docs/compatibility.md is up to date');
} else {
  fs.mkdirSync(path.dirname(OUT), { recursive: true });
  fs.writeFileSync(OUT, next);
  console.log(`gen-compat: wrote ${path.relative(process.cwd(), OUT)}`);
}
