// Schema conformance: validates the API responses recorded during a test run
// (PARLEY_RECORD_RESPONSES=.conformance/responses.jsonl node test/run.mjs) against Zulip's OpenAPI
// document (../shared/reference/zulip-openapi-10.2.yaml), prints a summary and every mismatch, and
// exits 1 only for mismatches that docs/compatibility.md's "Known differences" section does not list.
//
//   node scripts/check-conformance.mjs [RECORDED.jsonl|DIR ...] [--openapi FILE] [--compat FILE]
//
// How the document is read (OpenAPI 3.0 → JSON Schema for ajv):
// - `nullable: true` becomes a union with null; `oneOf` becomes `anyOf` (Zulip's alternatives overlap,
//   e.g. several error shapes share result/msg/code); descriptions, examples and formats are not checked.
// - Success bodies (2xx) are checked against the operation's schema for that status.
// - Error bodies are checked against the operation's schema for that status when it documents one,
//   or else against the error schema named for their `code` (MissingArgumentError for
//   REQUEST_VARIABLE_MISSING, ...), or else Zulip's generic CodedErrorBase (result, msg, code).
// - Routes the document does not have, and statuses it does not list for an operation, are counted as
//   unchecked (listed in the summary), not as mismatches.
// A mismatch's key is `METHOD /path STATUS instancePath keyword detail`, with array indices as `*`;
// a known difference listed in backticks matches every key it is a prefix of (`*` matches anything).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import YAML from 'yaml';
import Ajv from 'ajv';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: opt, positionals } = parseArgs({
  options: {
    openapi: { type: 'string', default: path.resolve(root, '..', 'shared', 'reference', 'zulip-openapi-10.2.yaml') },
    compat: { type: 'string', default: path.join(root, 'docs', 'compatibility.md') },
    'max-examples': { type: 'string', default: '1' },
  },
  allowPositionals: true,
});
const inputs = positionals.length ? positionals : [path.join(root, '.conformance', 'responses.jsonl')];

if (!fs.existsSync(opt.openapi)) {
  console.log(`check-conformance: SKIPPED: no OpenAPI document at ${opt.openapi}`);
  process.exit(0);
}

// --- the recorded responses ---
const files = [];
for (const input of inputs) {
  if (!fs.existsSync(input)) continue;
  if (fs.statSync(input).isDirectory()) {
    for (const f of fs.readdirSync(input)) if (f.endsWith('.jsonl')) files.push(path.join(input, f));
  } else files.push(input);
}
if (files.length === 0) {
  console.error(`check-conformance: no recorded responses in ${inputs.join(', ')} (run the tests with PARLEY_RECORD_RESPONSES set)`);
  process.exit(1);
}
const records = [];
for (const f of files) {
  for (const line of fs.readFileSync(f, 'utf8').split('\n')) {
    if (line.trim()) records.push(JSON.parse(line));
  }
}

// --- the OpenAPI document as JSON Schema ---
const doc = YAML.parse(fs.readFileSync(opt.openapi, 'utf8'));

const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'schemas', 'responses', 'paths', 'content']);

/** OpenAPI 3.0 → JSON Schema. Keys of name maps (properties, ...) are names, never keywords. */
function toJsonSchema(node, isMap = false) {
  if (Array.isArray(node)) return node.map((n) => toJsonSchema(n));
  if (node === null || typeof node !== 'object') return node;
  const out = {};
  for (const [k, v] of Object.entries(node)) {
    if (isMap) {
      out[k] = toJsonSchema(v);
      continue;
    }
    if (k === 'example' || k === 'examples' || k === 'description' || k === 'format' || k.startsWith('x-')) continue;
    if (k === 'nullable' || k === 'discriminator' || k === 'deprecated') continue;
    out[k === 'oneOf' ? 'anyOf' : k] = toJsonSchema(v, SCHEMA_MAPS.has(k));
  }
  if (!isMap && node.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    if (out.type === undefined) return { anyOf: [out, { type: 'null' }] };
  }
  return out;
}

const schemaDoc = { $id: 'openapi', components: toJsonSchema(doc.components ?? {}, true), paths: toJsonSchema(doc.paths ?? {}, true) };
const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(schemaDoc);

/** A `$ref` into the document: openapi#/a/b with JSON-pointer escaping and URI encoding. */
const ref = (...parts) => 'openapi#/' + parts.map((p) => encodeURIComponent(String(p).replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');

/** Resolves `$ref: '#/components/responses/X'` at the response level. */
function resolveResponse(resp) {
  let r = resp;
  for (let i = 0; r && r.$ref && i < 5; i++) {
    const parts = r.$ref.replace(/^#\//, '').split('/');
    r = parts.reduce((o, k) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  }
  return r;
}

// OpenAPI paths by their parameter-free shape: /users/{user_id} and /users/{email} differ only in name.
const shapeOf = (p) => p.replace(/\{[^}]*\}/g, '{}');
const byShape = new Map();
for (const p of Object.keys(doc.paths ?? {})) {
  const s = shapeOf(p);
  if (!byShape.has(s)) byShape.set(s, []);
  byShape.get(s).push(p);
}

/** The OpenAPI path for a recorded route pattern ('/api/v1/users/{user_id:int}'), or null. */
function openapiPath(route) {
  if (!route.startsWith('/api/v1/')) return null;
  const p = route.slice('/api/v1'.length).replace(/\{(\w+)(:[^}]*)?\}/g, '{$1}');
  if (doc.paths[p]) return p;
  const candidates = byShape.get(shapeOf(p)) ?? [];
  return candidates[0] ?? null;
}

// Named error schemas by the code they fix (REQUEST_VARIABLE_MISSING → MissingArgumentError, ...).
const errorSchemaByCode = new Map();
for (const [name, s] of Object.entries(doc.components?.schemas ?? {})) {
  if (!name.endsWith('Error')) continue;
  const codes = [];
  (function walk(n) {
    if (!n || typeof n !== 'object') return;
    if (n.properties?.code?.enum) codes.push(...n.properties.code.enum);
    if (typeof n.example?.code === 'string') codes.push(n.example.code);
    for (const sub of n.allOf ?? []) walk(sub);
  })(s);
  for (const c of codes) errorSchemaByCode.set(c, [...(errorSchemaByCode.get(c) ?? []), name]);
}

const validators = new Map();
function validatorFor(key, ref) {
  if (!validators.has(key)) validators.set(key, ajv.compile({ $ref: ref }));
  return validators.get(key);
}
function validatorForAnyOf(key, refs) {
  if (!validators.has(key)) validators.set(key, ajv.compile({ anyOf: refs.map(($ref) => ({ $ref })) }));
  return validators.get(key);
}

// GET /events: each event is checked against the branches for its type (and op), not the whole
// 77-way alternative, so a mismatch names its event and the closest branch's errors.
const EVENTS_PARTS = ['paths', '/events', 'get', 'responses', '200', 'content', 'application/json', 'schema', 'allOf', 1, 'properties', 'events', 'items'];
const eventBranches = [];
{
  const items = EVENTS_PARTS.reduce((o, k) => o?.[k], doc);
  const enumOf = (n, prop) => {
    let found = null;
    (function walk(x) {
      if (!x || typeof x !== 'object' || found) return;
      if (x.$ref) return walk(resolveResponse(x));
      const pr = x.properties?.[prop];
      if (pr?.enum) found = pr.enum;
      else for (const sub of pr?.allOf ?? []) if (sub.enum) found = sub.enum;
      for (const sub of x.allOf ?? []) walk(sub);
    })(n);
    return found;
  };
  (items?.oneOf ?? []).forEach((branch, i) => {
    eventBranches.push({ types: enumOf(branch, 'type') ?? [], ops: enumOf(branch, 'op'), ref: ref(...EVENTS_PARTS, 'anyOf', i) });
  });
}

/** Mismatches of one event, [] when it conforms to a branch of its type. */
function checkEvent(ev) {
  const label = `[${ev?.type}${ev?.op ? ' ' + ev.op : ''}]`;
  const candidates = eventBranches.filter((b) => b.types.includes(ev?.type) && (!b.ops || b.ops.includes(ev?.op)));
  if (candidates.length === 0) return [{ instancePath: label, keyword: 'type', message: 'event type not in the document', params: {} }];
  let best = null;
  for (const b of candidates) {
    const v = validatorFor(b.ref, b.ref);
    if (v(ev)) return [];
    const errs = (v.errors ?? []).filter((e) => e.keyword !== 'anyOf');
    if (!best || errs.length < best.length) best = errs;
  }
  return best.map((e) => ({ ...e, instancePath: label + e.instancePath }));
}

// --- known differences from docs/compatibility.md ---
function knownDifferences() {
  if (!fs.existsSync(opt.compat)) return [];
  const text = fs.readFileSync(opt.compat, 'utf8');
  const m = /^## Known differences[^\n]*\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(text);
  if (!m) return [];
  const keys = [];
  for (const line of m[1].split('\n')) {
    const k = /^\s*[-|]\s*`((?:[A-Z]+ \/|\*)[^`]*)`/.exec(line);
    if (k) keys.push(k[1]);
  }
  return keys;
}
const known = knownDifferences().map((k) => ({
  key: k,
  re: new RegExp('^' + k.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')),
  used: 0,
}));

// --- validation ---
const mismatches = new Map(); // key → { count, example }
const unchecked = new Map(); // 'METHOD route status' → count (reason)
let checked = 0;
let passed = 0;

for (const rec of records) {
  const method = rec.method.toLowerCase();
  const oaPath = openapiPath(rec.route);
  const op = oaPath ? doc.paths[oaPath]?.[method] : null;
  if (!op) {
    const k = `${rec.method} ${rec.route} (not in the OpenAPI document)`;
    unchecked.set(k, (unchecked.get(k) ?? 0) + 1);
    continue;
  }
  const status = String(rec.status);
  const isError = rec.status >= 400;
  const resp = resolveResponse(op.responses?.[status]);
  const hasSchema = !!resp?.content?.['application/json']?.schema;
  let validate;
  const opRef = op.responses[status]?.$ref
    ? `openapi${op.responses[status].$ref}/content/application~1json/schema`
    : ref('paths', oaPath, method, 'responses', status, 'content', 'application/json', 'schema');
  if (hasSchema) {
    if (isError && rec.body?.code && errorSchemaByCode.has(rec.body.code)) {
      const named = errorSchemaByCode.get(rec.body.code).map((n) => `openapi#/components/schemas/${n}`);
      validate = validatorForAnyOf(`${opRef}|${rec.body.code}`, [opRef, ...named]);
    } else validate = validatorFor(opRef, opRef);
  } else if (isError) {
    const named = (rec.body?.code && errorSchemaByCode.get(rec.body.code)) || ['CodedErrorBase'];
    validate = validatorForAnyOf(named.join('|'), named.map((n) => `openapi#/components/schemas/${n}`));
  } else {
    const k = `${rec.method} ${oaPath} ${status} (status not documented)`;
    unchecked.set(k, (unchecked.get(k) ?? 0) + 1);
    continue;
  }
  checked++;
  let errs;
  if (oaPath === '/events' && method === 'get' && status === '200' && Array.isArray(rec.body?.events)) {
    const ok = validate({ ...rec.body, events: [] });
    errs = ok ? [] : [...(validate.errors ?? [])];
    for (const ev of rec.body.events) errs.push(...checkEvent(ev).map((e) => ({ ...e, instancePath: '/events/*' + e.instancePath })));
  } else {
    // The most specific errors: anyOf wrappers repeat their branches' failures.
    errs = validate(rec.body) ? [] : (validate.errors ?? []).filter((e) => e.keyword !== 'anyOf' && e.keyword !== 'if');
    if (errs.length === 0 && validate.errors?.length) errs = validate.errors;
  }
  if (errs.length === 0) {
    passed++;
    continue;
  }
  const seen = new Set();
  for (const e of errs) {
    const where = e.instancePath.replace(/\/\d+(?=\/|$)/g, '/*') || '/';
    const detail =
      e.keyword === 'additionalProperties'
        ? JSON.stringify(e.params.additionalProperty)
        : e.keyword === 'required'
          ? JSON.stringify(e.params.missingProperty)
          : e.message;
    const key = `${rec.method} ${oaPath} ${status} ${where} ${e.keyword} ${detail}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const entry = mismatches.get(key) ?? { count: 0, example: null };
    entry.count++;
    entry.example ??= JSON.stringify(rec.body).slice(0, 300);
    mismatches.set(key, entry);
  }
}

// --- report ---
const routes = new Set(records.map((r) => `${r.method} ${r.route}`));
console.log(`check-conformance: ${records.length} recorded responses from ${files.length} file(s), ${routes.size} routes`);
console.log(`  checked against ${path.basename(opt.openapi)}: ${checked}, conforming: ${passed}`);
if (unchecked.size) {
  console.log(`  unchecked (${[...unchecked.values()].reduce((a, b) => a + b, 0)} responses):`);
  for (const [k, n] of [...unchecked].sort()) console.log(`    ${k}: ${n}`);
}
let fresh = 0;
const lines = [];
for (const [key, { count, example }] of [...mismatches].sort()) {
  const k = known.find((x) => x.re.test(key));
  if (k) k.used++;
  else fresh++;
  lines.push(`  ${k ? 'known' : 'NEW  '} ${key}  (${count}x)${k ? '' : `\n          e.g. ${example}`}`);
}
console.log(`  mismatches: ${mismatches.size} distinct (${mismatches.size - fresh} known, ${fresh} new)`);
for (const l of lines) console.log(l);
for (const k of known) if (k.used === 0) console.log(`  note: known difference \`${k.key}\` did not occur in this run`);
if (fresh > 0) {
  console.log(`check-conformance: FAIL: ${fresh} mismatches not listed under "Known differences" in ${path.relative(root, opt.compat)}`);
  process.exit(1);
}
console.log('check-conformance: OK');
