// Checks the files of a Zulip-format export against the description in zulip-format.ts: every table
// the importer reads unconditionally is there, every row has the fields the importer cannot do
// without, with the right types, no field the description does not know (the importer builds rows
// with Model(**row): an unknown key fails the import), ids unique, and every foreign key resolving.
// Fed file by file (the message files one at a time, as an importer reads them); the foreign keys
// into tables not seen yet are checked at the end. Used by the export's test and by `parley import`
// (with allowUnknown: Zulip's own exports carry more) to refuse a malformed archive with a message
// naming what is wrong.
import {
  LIST_FKS,
  MESSAGE_FILE,
  RECIPIENT_TYPE,
  RECORDS,
  TABLES,
  TABLE_NAMES,
  type FieldSpec,
  type FileKind,
  type RecordsSpec,
  type TableName,
} from './zulip-format';

type Row = Record<string, unknown>;

/** A value as a message shows it: short, and whatever its depth (an import reads hostile files). */
function brief(v: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(v);
  } catch {
    return '(a value nested too deeply)';
  }
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}

/** A row of a file's table, named in a message only when there is a problem to report. */
interface RowAt {
  file: string;
  t: string;
  i: number;
}

interface PendingRef {
  where: string;
  table: TableName;
  value: number;
}

/**
 * The waiting references of one field of one table of one file, kept as two lists of numbers (the
 * row, the id) rather than an object and a string each: realm.json's reactions all wait for the
 * message files, a fifth of the messages' number of them.
 */
interface PendingField {
  file: string;
  t: string;
  field: string;
  table: TableName;
  rows: number[];
  values: number[];
}

export interface CheckerOptions {
  /**
   * Zulip's own exports carry many more tables and fields than Parley writes (and than it reads):
   * the importer (`parley import`) ignores those, where the export's test refuses them. It also
   * takes an export without the group settings and channel references of later Zulip releases.
   */
  allowUnknown?: boolean;
}

export class ExportChecker {
  readonly problems: string[] = [];
  constructor(private readonly opts: CheckerOptions = {}) {}
  /** Ids seen per table. */
  private ids = new Map<TableName, Set<number>>();
  private pending: PendingRef[] = [];
  private pendingFields = new Map<string, PendingField>();
  /** Row counts per table, over all files. */
  readonly counts: Partial<Record<TableName, number>> = {};
  private realmEmojiNames = new Map<number, string>();
  private uploadPaths = new Set<string>();
  private attachmentPaths: { where: string; path: string }[] = [];
  private seen = new Set<FileKind | string>();
  /** Tables whose every id is known (seal()): a reference into one is checked at once, not at finish(). */
  private sealed = new Set<TableName>();
  private accountsMerged = false;

  private problem(msg: string): void {
    // Enough to act on without flooding: the first 200.
    if (this.problems.length < 200) this.problems.push(msg);
  }

  private idsOf(t: TableName): Set<number> {
    let s = this.ids.get(t);
    if (!s) this.ids.set(t, (s = new Set()));
    return s;
  }

  /** Checks one file's object of tables. */
  file(name: string, data: unknown): void {
    const kind: FileKind | null = name === 'realm.json' ? 'realm.json' : name === 'attachment.json' ? 'attachment.json' : MESSAGE_FILE.test(name) ? 'messages' : null;
    if (kind === null) return this.problem(`${name}: not a file of a Zulip export`);
    this.seen.add(kind);
    if (data === null || typeof data !== 'object' || Array.isArray(data)) return this.problem(`${name}: not a JSON object`);
    const obj = data as Record<string, unknown>;
    const tables = TABLE_NAMES.filter((t) => TABLES[t].file === kind);
    for (const t of tables) {
      if (!(t in obj)) {
        if (TABLES[t].required) this.problem(`${name}: table ${t} is missing`);
        continue;
      }
      const rows = obj[t];
      if (!Array.isArray(rows)) {
        this.problem(`${name}: ${t} is not a list`);
        continue;
      }
      this.table(name, t, rows as unknown[]);
    }
    for (const key of Object.keys(obj)) {
      if (key === 'import_source' && kind === 'realm.json') continue;
      if (!(tables as string[]).includes(key) && !this.opts.allowUnknown) this.problem(`${name}: unknown table ${key}`);
    }
    // Recent Zulip releases write it; an importer takes an earlier export without it.
    if (kind === 'realm.json' && typeof obj.import_source !== 'string' && !(this.opts.allowUnknown && obj.import_source === undefined)) this.problem(`${name}: import_source is missing`);
    if (kind === 'realm.json' && Array.isArray(obj.zerver_realm) && obj.zerver_realm.length !== 1) this.problem(`${name}: zerver_realm must hold exactly one row, not ${obj.zerver_realm.length}`);
    if (kind === 'messages' && Array.isArray(obj.zerver_message) && Array.isArray(obj.zerver_usermessage)) {
      // The importer asserts each per-user row's message is in the same file.
      const here = new Set((obj.zerver_message as Row[]).map((m) => m.id));
      (obj.zerver_usermessage as Row[]).forEach((um, i) => {
        if (!here.has(um.message)) this.problem(`${name}: zerver_usermessage[${i}].message ${String(um.message)} is not a message of this file`);
      });
    }
  }

  private table(file: string, t: TableName, rows: unknown[]): void {
    const spec = TABLES[t];
    this.counts[t] = (this.counts[t] ?? 0) + rows.length;
    const ids = this.idsOf(t);
    const fields = Object.entries(spec.fields);
    for (let i = 0; i < rows.length; i++) {
      const raw = rows[i];
      // A row is named only when a problem needs it (no string, no closure per row): a history
      // has tens of millions of per-user rows to check.
      const loc = { file, t, i };
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
        this.problem(`${file}: ${t}[${i}]: not an object`);
        continue;
      }
      const row = raw as Row;
      if (!this.opts.allowUnknown) for (const key of Object.keys(row)) if (!(key in spec.fields)) this.problem(`${file}: ${t}[${i}]: unknown field ${key}`);
      for (const [field, f] of fields) this.field(loc, row, field, f);
      if (t === 'zerver_usermessage') continue;
      const where = `${file}: ${t}[${i}]`;
      // Per-user message rows are the bulk of an export (20 for each message in a 20-person
      // organization) and their ids are not kept by an importer: not remembered (memory stays flat).
      if (spec.ids && typeof row.id === 'number') {
        if (ids.has(row.id)) this.problem(`${where}: id ${row.id} is used twice`);
        ids.add(row.id);
      }
      const lists = LIST_FKS[t];
      if (lists) {
        for (const [field, target] of Object.entries(lists)) {
          const v = row[field];
          if (Array.isArray(v)) for (const x of v) if (typeof x === 'number') this.pending.push({ where: `${where}.${field}`, table: target, value: x });
        }
      }
      this.special(where, t, row);
    }
  }

  private waitFor(at: RowAt, field: string, table: TableName, value: number): void {
    const key = `${at.file}\u0000${at.t}\u0000${field}`;
    let p = this.pendingFields.get(key);
    if (!p) this.pendingFields.set(key, (p = { file: at.file, t: at.t, field, table, rows: [], values: [] }));
    p.rows.push(at.i);
    p.values.push(value);
  }

  /** Reports the waiting references into `tables` (all when absent) that resolve to no id, and forgets them. */
  private resolvePending(tables?: ReadonlySet<TableName>): void {
    const still: PendingRef[] = [];
    for (const ref of this.pending) {
      if (tables && !tables.has(ref.table)) still.push(ref);
      else if (!this.idsOf(ref.table).has(ref.value)) this.problem(`${ref.where}: ${ref.value} is not an id of ${ref.table}`);
    }
    this.pending = still;
    for (const [key, p] of this.pendingFields) {
      if (tables && !tables.has(p.table)) continue;
      const ids = this.idsOf(p.table);
      p.values.forEach((v, k) => {
        if (!ids.has(v)) this.problem(`${p.file}: ${p.t}[${p.rows[k]}].${p.field}: ${v} is not an id of ${p.table}`);
      });
      this.pendingFields.delete(key);
    }
  }

  /** Where a field is, for a message. */
  private static fieldAt(at: string | RowAt, name: string): string {
    return typeof at === 'string' ? at : `${at.file}: ${at.t}[${at.i}].${name}`;
  }

  private field(at: string | RowAt, row: Row, name: string, f: FieldSpec): void {
    if (!(name in row)) {
      // Zulip adds group settings and announcement channels release by release: an export of an
      // earlier Zulip lacks the newer ones, which `parley import` fills with Zulip's defaults.
      const defaulted = this.opts.allowUnknown && (f.fk === 'zerver_usergroup' || (f.fk === 'zerver_stream' && f.nullable));
      if (f.required && !defaulted) this.problem(`${ExportChecker.fieldAt(at, name)}: missing`);
      return;
    }
    const v = row[name];
    if (v === null) {
      if (!f.nullable) this.problem(`${ExportChecker.fieldAt(at, name)}: null`);
      return;
    }
    const ok =
      f.type === 'int'
        ? Number.isSafeInteger(v)
        : f.type === 'float'
          ? typeof v === 'number' && Number.isFinite(v)
          : f.type === 'bool'
            ? typeof v === 'boolean'
            : f.type === 'string'
              ? typeof v === 'string'
              : f.type === 'int[]'
                ? Array.isArray(v) && v.every((x) => Number.isSafeInteger(x))
                : true;
    if (!ok) return this.problem(`${ExportChecker.fieldAt(at, name)}: ${brief(v)} is not of type ${f.type}`);
    // Resolved at once when the target row is known already (realm.json is read before the message
    // files): only the rest waits for finish(), so the pending list does not grow with the history.
    if (f.fk && typeof v === 'number' && !this.idsOf(f.fk).has(v)) {
      if (this.sealed.has(f.fk)) this.problem(`${ExportChecker.fieldAt(at, name)}: ${v} is not an id of ${f.fk}`);
      else if (typeof at === 'string') this.pending.push({ where: at, table: f.fk, value: v });
      else this.waitFor(at, name, f.fk, v);
    }
  }

  /** The rules that are not one field's. */
  private special(where: string, t: TableName, row: Row): void {
    if (t === 'zerver_recipient') {
      const target = ({ [RECIPIENT_TYPE.personal]: 'zerver_userprofile', [RECIPIENT_TYPE.stream]: 'zerver_stream', [RECIPIENT_TYPE.huddle]: 'zerver_huddle' } as Record<number, TableName>)[row.type as number];
      if (!target) this.problem(`${where}.type: ${String(row.type)} is not 1, 2 or 3`);
      else if (typeof row.type_id === 'number') this.pending.push({ where: `${where}.type_id`, table: target, value: row.type_id });
    }
    if (t === 'zerver_realmemoji' && typeof row.id === 'number') this.realmEmojiNames.set(row.id, String(row.name));
    if ((t === 'zerver_reaction' || t === 'zerver_userstatus') && row.reaction_type === 'realm_emoji') {
      // re_map_realm_emoji_codes: emoji_code is str(realm emoji id), and the names must agree.
      this.pending.push({ where: `${where}.emoji_code`, table: 'zerver_realmemoji', value: Number(row.emoji_code) });
      this.emojiNameChecks.push({ where, id: Number(row.emoji_code), name: String(row.emoji_name) });
    }
    if (t === 'zerver_namedusergroup' && row.id !== row.usergroup_ptr) this.problem(`${where}: id and usergroup_ptr differ`);
    if (t === 'zerver_attachment' && typeof row.path_id === 'string') this.attachmentPaths.push({ where: `${where}.path_id`, path: row.path_id });
    if (t === 'zerver_userprofile_crossrealm' && typeof row.recipient_id === 'number') this.crossRealmRecipients.add(row.recipient_id);
  }

  private emojiNameChecks: { where: string; id: number; name: string }[] = [];
  /** The cross-realm bots' personal recipients: on the exporting server, not in zerver_recipient, yet valid targets. */
  private crossRealmRecipients = new Set<number>();

  /** Checks a folder's records.json; `hasFile` says whether a path exists in the folder. */
  records(folder: RecordsSpec['folder'], data: unknown, hasFile: (rel: string) => boolean): void {
    const name = `${folder}/records.json`;
    if (!Array.isArray(data)) return this.problem(`${name}: not a list`);
    const spec = RECORDS[folder];
    data.forEach((raw, i) => {
      const where = `${name}[${i}]`;
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return this.problem(`${where}: not an object`);
      const row = raw as Row;
      for (const [field, f] of Object.entries(spec.fields)) this.field(`${where}.${field}`, row, field, f);
      if (typeof row.path === 'string') {
        if (row.path.split('/').some((s) => s === '..' || s === '') || row.path.startsWith('/')) this.problem(`${where}.path: ${row.path} leaves the folder`);
        else if (!hasFile(row.path)) this.problem(`${where}.path: no file ${folder}/${row.path}`);
      }
      if (folder === 'uploads' && typeof row.s3_path === 'string') this.uploadPaths.add(row.s3_path);
    });
  }

  /** Adds the accounts and recipients realm.json lists apart to the ids they stand beside (once). */
  private mergeAccounts(): void {
    if (this.accountsMerged) return;
    this.accountsMerged = true;
    // A Zulip user id may also be one of the cross-realm or mirror-dummy accounts.
    const users = this.idsOf('zerver_userprofile');
    for (const t of ['zerver_userprofile_crossrealm', 'zerver_userprofile_mirrordummy'] as const) for (const id of this.idsOf(t)) users.add(id);
    // Before Zulip 9.0 there was no NamedUserGroup: subgroups were zerver_usergroup rows.
    const named = this.idsOf('zerver_namedusergroup');
    if (this.opts.allowUnknown && named.size === 0) for (const id of this.idsOf('zerver_usergroup')) named.add(id);
    const recipients = this.idsOf('zerver_recipient');
    for (const id of this.crossRealmRecipients) {
      if (recipients.has(id)) this.problem(`realm.json: zerver_userprofile_crossrealm recipient_id ${id} is also an id of zerver_recipient`);
      recipients.add(id);
    }
  }

  /**
   * After realm.json and attachment.json: every table they hold is complete, so a message file's
   * reference into one (a sender, a recipient, a client) is checked as the file is, and an importer
   * may write each message file right after checking it (one parse per file). The references into
   * messages (reactions, attachments) still wait for finish().
   */
  seal(): void {
    this.mergeAccounts();
    for (const t of TABLE_NAMES) if (TABLES[t].file === 'realm.json' || TABLES[t].file === 'attachment.json') this.sealed.add(t);
    this.resolvePending(this.sealed);
  }

  /** The checks that need every file: call once, after all of them. Returns the problems. */
  finish(): string[] {
    for (const kind of ['realm.json', 'attachment.json'] as const) if (!this.seen.has(kind)) this.problem(`${kind} is missing`);
    this.mergeAccounts();
    this.resolvePending();
    for (const c of this.emojiNameChecks) {
      const name = this.realmEmojiNames.get(c.id);
      if (name !== undefined && name !== c.name) this.problem(`${c.where}.emoji_name: ${c.name} is not the name of realm emoji ${c.id} (${name})`);
    }
    for (const a of this.attachmentPaths) if (!this.uploadPaths.has(a.path)) this.problem(`${a.where}: ${a.path} is not in uploads/records.json`);
    return this.problems;
  }
}
