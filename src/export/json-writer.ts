// Writes one JSON object of tables ({"zerver_x": [row, ...], ...}) to a file as rows arrive, so a
// table of any size never sits in memory whole. Rows go out in 256 KiB writes.
import fs from 'node:fs';

const FLUSH_BYTES = 256 * 1024;

export class JsonTablesFile {
  private fd: number;
  private parts: string[] = [];
  private pending = 0;
  private firstTable = true;
  private firstRow = true;
  private inTable = false;
  private rows = new Map<string, number>();

  constructor(readonly file: string) {
    this.fd = fs.openSync(file, 'w', 0o600);
    this.put('{');
  }

  private put(s: string): void {
    this.parts.push(s);
    this.pending += s.length;
    if (this.pending >= FLUSH_BYTES) this.flush();
  }

  private flush(): void {
    if (this.parts.length === 0) return;
    fs.writeSync(this.fd, this.parts.join(''));
    this.parts = [];
    this.pending = 0;
  }

  /** Starts the list of `table` (ends the previous one). */
  table(name: string): void {
    this.endTable();
    this.put(`${this.firstTable ? '' : ','}\n${JSON.stringify(name)}:[`);
    this.firstTable = false;
    this.firstRow = true;
    this.inTable = true;
    this.rows.set(name, 0);
    this.current = name;
  }

  private current = '';

  row(value: unknown): void {
    this.put(`${this.firstRow ? '\n' : ',\n'}${JSON.stringify(value)}`);
    this.firstRow = false;
    this.rows.set(this.current, (this.rows.get(this.current) ?? 0) + 1);
  }

  /** A whole table from a list. */
  tableOf(name: string, rows: Iterable<unknown>): void {
    this.table(name);
    for (const r of rows) this.row(r);
  }

  /** A key whose value is not a table (realm.json's import_source). */
  value(name: string, v: unknown): void {
    this.endTable();
    this.put(`${this.firstTable ? '' : ','}\n${JSON.stringify(name)}:${JSON.stringify(v)}`);
    this.firstTable = false;
  }

  private endTable(): void {
    if (this.inTable) this.put(']');
    this.inTable = false;
  }

  /** Row counts by table. */
  counts(): Record<string, number> {
    return Object.fromEntries(this.rows);
  }

  /** Ends the object and closes the file; returns its size. */
  close(): number {
    this.endTable();
    this.put('\n}\n');
    this.flush();
    fs.closeSync(this.fd);
    return fs.statSync(this.file).size;
  }

  /** Closes without finishing (the file is about to be removed). */
  abandon(): void {
    try {
      fs.closeSync(this.fd);
    } catch {
      // already closed
    }
  }
}
