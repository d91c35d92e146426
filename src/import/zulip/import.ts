// `parley import` of a Zulip export (`manage.py export`, Zulip Cloud's export, or `parley export`):
// the tarball is unpacked into the staging directory (tar.ts: a tarball's order is arbitrary), every
// file is checked against the description of Zulip's format (src/export/zulip-check.ts) before
// anything is written, then the organization is written: realm.json's tables, the files and their
// attachment rows, the message files one at a time (each one write), and what points into messages
// (reactions, attachment links). Zulip's ids are kept for users, channels, messages, groups and the
// rest, so links into the history keep working. Any failure throws ImportError; the framework
// (run.ts) then throws the staging directory away, unpacked files and all.
import fs from 'node:fs';
import v8 from 'node:v8';
import vm from 'node:vm';
import path from 'node:path';
import type { App } from '../../app';
import { stmt } from '../../db/stmt';
import { ExportChecker } from '../../export/zulip-check';
import { MESSAGE_FILE, RECORDS, type RecordsSpec } from '../../export/zulip-format';
import { ImportError } from '../errors';
import type { Importer } from '../run';
import { unpackTarGz } from '../tar';
import { rowsOf, type Row, type ZulipImport } from './context';
import { attachmentLinks, writeImages, writeUploads } from './files';
import { finishMessages, writeMessageFile, writeReactions } from './messages';
import { writeRealmTables } from './realm';

/** Most bytes of one JSON file of the export read into memory (realm.json is the largest). */
export const MAX_JSON_BYTES = 512 * 1024 * 1024;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Where realm.json is: the archive's top, or its one top directory (Zulip's tarball is its export directory). */
function findRoot(dir: string, files: ReadonlyMap<string, number>): string {
  if (files.has('realm.json')) return dir;
  const tops = new Set([...files.keys()].map((f) => f.split('/')[0]));
  if (tops.size === 1) {
    const [top] = tops;
    if (files.has(`${top}/realm.json`)) return path.join(dir, top);
  }
  throw new ImportError('the archive holds no realm.json (at its top or in its one top directory): it is not a Zulip export');
}

/** A JSON file of the export, parsed; the message names the file when it is too large, not UTF-8 or not JSON. */
function readJson(root: string, rel: string): unknown {
  const file = path.join(root, rel);
  const st = fs.statSync(file, { throwIfNoEntry: false });
  if (!st || !st.isFile()) throw new ImportError(`${rel} is missing from the export`);
  if (st.size > MAX_JSON_BYTES) throw new ImportError(`${rel} holds ${st.size} bytes, more than the ${MAX_JSON_BYTES} a JSON file of an export may`);
  let text: string;
  try {
    text = utf8.decode(fs.readFileSync(file));
  } catch {
    throw new ImportError(`${rel} is not valid UTF-8`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ImportError(`${rel} is not valid JSON (${(err as Error).message})`);
  }
}

/** The messages-NNNNNN.json files, in number order. */
function messageFiles(root: string): string[] {
  return fs
    .readdirSync(root)
    .filter((f) => MESSAGE_FILE.test(f))
    .sort();
}

/**
 * A full garbage collection, on demand. Each message file's rows live through its write, so V8 moves
 * them to the old generation, and with nothing else to run it lets the garbage of hundreds of files
 * pile up before collecting it: 1,000,000 messages peaked at 526 MB of RSS against about 40 MB of live
 * heap. Collecting every GC_EVERY_FILES files (about a second in all) keeps the peak flat.
 * The command's own process only: `parley import` ends when the import does.
 */
function fullCollector(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}
const GC_EVERY_FILES = 10;

/** The checker's problems as one ImportError. */
function refuse(problems: string[]): never {
  const shown = problems.slice(0, 20);
  throw new ImportError(`the export is not what Zulip's exporter writes:\n  ${shown.join('\n  ')}${problems.length > shown.length ? `\n  ... and ${problems.length - shown.length} more` : ''}`);
}

/**
 * Checks realm.json, attachment.json and the folders' records against Zulip's format, before anything
 * is written; throws ImportError listing what is wrong. The message files are checked one by one as
 * they are read for writing (one parse each: importZulip), and what refers across files (reactions and
 * attachments to messages) at the end: whatever fails, the staging directory goes with all of it.
 */
function checkRealm(root: string): ExportChecker {
  const checker = new ExportChecker({ allowUnknown: true });
  checker.file('realm.json', readJson(root, 'realm.json'));
  checker.file('attachment.json', readJson(root, 'attachment.json'));
  for (const folder of Object.keys(RECORDS) as RecordsSpec['folder'][]) {
    const rel = `${folder}/records.json`;
    if (!fs.existsSync(path.join(root, rel))) continue;
    checker.records(folder, readJson(root, rel), (p) => {
      const st = fs.statSync(path.join(root, folder, p), { throwIfNoEntry: false });
      return st !== undefined && st.isFile();
    });
  }
  checker.seal();
  if (checker.problems.length > 0) refuse(checker.problems);
  return checker;
}

async function importZulip(app: App, file: string, opts: { realmName: string }) {
  // Inside the staging directory: thrown away with it whatever happens.
  const unpacked = path.join(path.dirname(app.uploadsDir), 'zulip-export');
  fs.mkdirSync(unpacked);
  const files = await unpackTarGz(file, unpacked);
  const root = findRoot(unpacked, files);
  const collect = fullCollector();
  let checker: ExportChecker | null = checkRealm(root);

  let realmData: Row | null = readJson(root, 'realm.json') as Row;
  const z: ZulipImport = {
    app,
    realmId: 0,
    root,
    warnings: [],
    rerendered: 0,
    counts: {},
    recipients: new Map(),
    huddleMembers: new Map(),
    users: new Map(),
    clients: new Map(rowsOf(realmData as Row, 'zerver_client').map((c) => [c.id as number, c.name as string])),
    directGroups: new Map(),
    linkChanges: new Map(),
  };
  app.batch.write(() => {
    writeRealmTables(z, realmData as Row, opts.realmName);
    // The subscriptions made cursors (schema.sql); the history's rows are all written by the import,
    // so none may be implied until the end (finishMessages).
    stmt(app.db, 'DELETE FROM usermessage_cursor').run();
  });
  const attachmentData = readJson(root, 'attachment.json') as Row;
  let attachments: Row[] = [];
  app.batch.write(() => {
    attachments = writeUploads(z, attachmentData);
    writeImages(z, realmData as Row);
  });
  // Not held while the history streams through: realm.json's tables (its reactions alone are a
  // fifth of the messages' number) would stay in memory for nothing; it is read again at the end.
  // (The checker keeps the ids it needs: a set of message ids, a few bytes each.)
  realmData = null;
  let messages = 0;
  let rows = 0;
  let filesDone = 0;
  for (const f of messageFiles(root)) {
    const data = readJson(root, f) as Row;
    const check = checker as ExportChecker;
    check.file(f, data);
    // Once anything is wrong the rest is only checked (all is thrown away below), so that the
    // message names every problem, as a check before writing would.
    if (check.problems.length === 0) {
      app.batch.write(() => {
        const n = writeMessageFile(z, f, data);
        messages += n.messages;
        rows += n.rows;
      });
      app.batch.commit();
    }
    // Its files are done with: the disk they took is given back as the import goes.
    fs.rmSync(path.join(root, f));
    if (++filesDone % GC_EVERY_FILES === 0) collect();
  }
  const problems = checker.finish();
  if (problems.length > 0) refuse(problems);
  // Its ids (one per message) are not needed while realm.json is read again.
  checker = null;
  collect();
  app.batch.write(() => {
    // After the messages they point to (foreign keys): realm.json read again for its reactions.
    z.counts.reactions = writeReactions(z, readJson(root, 'realm.json') as Row);
    attachmentLinks(z, attachments);
    finishMessages(z);
  });
  app.batch.commit();
  fs.rmSync(unpacked, { recursive: true, force: true });
  if (z.rerendered > 0) {
    z.warnings.push(`${z.rerendered} message(s) carried HTML not of the kind Zulip's Markdown writes (a script, an event handler, an unknown tag or link); they were rendered again from their Markdown`);
  }
  return { realmId: z.realmId, counts: { ...z.counts, messages, usermessages: rows }, warnings: z.warnings };
}

/** `parley import` (`--from zulip`, the default): the .tar.gz at `file`. */
export const importZulipExport: Importer = (app, file, opts) => importZulip(app, file, opts);
