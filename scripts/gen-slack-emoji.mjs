#!/usr/bin/env node
// Generates src/import/slack/emoji-names.json: Slack's emoji names that are not Zulip's name for the
// same emoji, mapped to Zulip's canonical name. Slack's names are iamcal's emoji-data short names
// (Zulip's Slack importer reads them from the same package and goes name → code point → Zulip name);
// a Slack name missing from the table means the same name in Zulip (or no such emoji).
//
// The package is large (images), so it is not a project dependency. To regenerate:
//   npm pack emoji-datasource-google@16.0.0 && tar xzf emoji-datasource-google-16.0.0.tgz package/emoji.json
//   node scripts/gen-slack-emoji.mjs package/emoji.json
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const iamcal = JSON.parse(fs.readFileSync(process.argv[2] ?? 'package/emoji.json', 'utf8'));
const zulip = JSON.parse(fs.readFileSync(path.join(root, 'src/lib/emoji-data.json'), 'utf8')).code_to_names;
const nameToCode = new Map();
for (const [code, names] of Object.entries(zulip)) for (const n of names) nameToCode.set(n, code);
// Zulip's codes: lowercase, dash-separated, without U+FE0F (as src/lib/emoji-data.json has them).
const zulipCode = (e) => (e.non_qualified ?? e.unified).toLowerCase().split('-').filter((p) => p !== 'fe0f').join('-');
const out = {};
for (const e of iamcal) {
  const code = zulipCode(e);
  const names = zulip[code];
  if (!names) continue;
  for (const slackName of new Set([e.short_name, ...e.short_names])) {
    // Only where the name alone would give another emoji, or none.
    if (nameToCode.get(slackName) !== code) out[slackName] = names[0];
  }
}
const sorted = Object.fromEntries(Object.keys(out).sort().map((k) => [k, out[k]]));
fs.writeFileSync(path.join(root, 'src/import/slack/emoji-names.json'), JSON.stringify(sorted, null, 0).replace(/","/g, '",\n"') + '\n');
console.log(`${Object.keys(sorted).length} Slack names differ from Zulip's`);
