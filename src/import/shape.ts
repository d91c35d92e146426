// Checking the shape of JSON an import reads, with messages that say where: "channels.json[2].members
// must be a list of strings". A value of the wrong shape stops the import before anything is written.
import { ImportError } from './errors';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** A JSON value and where it came from, for messages. */
export class At {
  constructor(
    readonly where: string,
    readonly value: unknown,
  ) {}

  fail(what: string): never {
    throw new ImportError(`${this.where} ${what}`);
  }

  get present(): boolean {
    return this.value !== undefined && this.value !== null;
  }

  /** The member `key` of this object (this must be an object). */
  get(key: string): At {
    const obj = this.object();
    return new At(`${this.where}.${key}`, Object.hasOwn(obj, key) ? obj[key] : undefined);
  }

  object(): JsonObject {
    if (typeof this.value !== 'object' || this.value === null || Array.isArray(this.value)) this.fail('must be an object');
    return this.value as JsonObject;
  }

  list(): At[] {
    if (!Array.isArray(this.value)) this.fail('must be a list');
    return (this.value as unknown[]).map((v, i) => new At(`${this.where}[${i}]`, v));
  }

  string(): string {
    if (typeof this.value !== 'string') this.fail('must be a string');
    return this.value as string;
  }

  optString(): string | undefined {
    return this.present ? this.string() : undefined;
  }

  bool(): boolean {
    if (!this.present) return false;
    if (typeof this.value !== 'boolean') this.fail('must be true or false');
    return this.value as boolean;
  }

  /** A number, or a string holding one (Slack writes timestamps both ways). */
  number(): number {
    const v = typeof this.value === 'string' && this.value.trim() !== '' ? Number(this.value) : this.value;
    if (typeof v !== 'number' || !Number.isFinite(v)) this.fail('must be a number');
    return v as number;
  }

  strings(): string[] {
    return this.list().map((x) => x.string());
  }
}
