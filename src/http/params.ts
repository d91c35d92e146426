// Zulip's parameter conventions: strings are raw form values; booleans, integers, lists and objects are
// JSON-encoded. A route declares its parameters once; the router parses them into typed values,
// raises REQUEST_VARIABLE_MISSING / BAD_REQUEST in Zulip's wording, and knows which request keys it
// used (the rest become ignored_parameters_unsupported).
import * as v from 'valibot';
import { errors, JsonableError } from './errors';

/** A value was not given and the parameter is optional without a default. */
export type Optional<T> = T | undefined;

export interface Param<T> {
  readonly required: boolean;
  readonly aliases: readonly string[];
  readonly defaultValue: T | undefined;
  /** Converts the raw form value (never undefined) for the parameter named `name`. */
  parse(raw: string, name: string): T;
  optional(): Param<T | undefined>;
  default(value: T): Param<T>;
  alias(...names: string[]): Param<T>;
}

class ParamImpl<T> implements Param<T> {
  constructor(
    readonly parse: (raw: string, name: string) => T,
    readonly required = true,
    readonly defaultValue: T | undefined = undefined,
    readonly aliases: readonly string[] = [],
  ) {}
  optional(): Param<T | undefined> {
    return new ParamImpl<T | undefined>(this.parse, false, undefined, this.aliases);
  }
  default(value: T): Param<T> {
    return new ParamImpl<T>(this.parse, false, value, this.aliases);
  }
  alias(...names: string[]): Param<T> {
    return new ParamImpl<T>(this.parse, this.required, this.defaultValue, [...this.aliases, ...names]);
  }
}

// --- JSON values validated by valibot, errors in Zulip's wording -------------------------------------

function varPath(name: string, path: v.IssuePathItem[] | undefined): string {
  let out = name;
  for (const item of path ?? []) {
    const key = (item as { key: unknown }).key;
    out += typeof key === 'number' ? `[${key}]` : `[${JSON.stringify(String(key))}]`;
  }
  return out;
}

/** Maps the first valibot issue to the message Zulip's typed_endpoint would give. */
export function issueToError(name: string, issue: v.BaseIssue<unknown>): JsonableError {
  const path = issue.path;
  const isObjectKey = path && path.length > 0 && path[path.length - 1].type === 'object';
  if ((issue.type === 'strict_object' || issue.type === 'object') && issue.expected === 'never' && path?.length) {
    const parentPath = path.slice(0, -1);
    const key = String((path[path.length - 1] as { key: unknown }).key);
    return errors.badRequest('Argument "{argument}" at {var_name} is unexpected', {
      argument: key,
      var_name: varPath(name, parentPath),
    });
  }
  const varName = varPath(name, path);
  if (issue.received === 'undefined' && isObjectKey) {
    return errors.badRequest('{var_name} field is missing: Field required', { var_name: varName });
  }
  // Schemas built below carry Zulip templates as their messages; anything else falls back by type.
  const template = issue.message.includes('{var_name}') ? issue.message : fallbackTemplate(issue.type);
  return errors.badRequest(template, { var_name: varName, ...(issue.requirement !== undefined ? limitVars(issue) : {}) });
}

function limitVars(issue: v.BaseIssue<unknown>): Record<string, unknown> {
  return { max_length: issue.requirement, min_length: issue.requirement, length: issue.requirement };
}

function fallbackTemplate(type: string): string {
  switch (type) {
    case 'boolean':
      return '{var_name} is not a boolean';
    case 'number':
    case 'integer':
    case 'safe_integer':
      return '{var_name} is not an integer';
    case 'string':
      return '{var_name} is not a string';
    case 'array':
      return '{var_name} is not a list';
    case 'object':
    case 'strict_object':
    case 'record':
    case 'loose_object':
      return '{var_name} is not a dict';
    case 'min_value':
      return '{var_name} is too small';
    case 'max_value':
      return '{var_name} is too large';
    case 'max_length':
      return '{var_name} is too long (limit: {max_length} characters)';
    case 'min_length':
      return '{var_name} is too short.';
    case 'regex':
      return '{var_name} has invalid format';
    default:
      return 'Invalid {var_name}';
  }
}

/** Integers the way Zulip clients send them; bounded to what SQLite and JavaScript store exactly. */
export function zInt(opts: { min?: number; max?: number } = {}) {
  const min = opts.min ?? Number.MIN_SAFE_INTEGER;
  const max = opts.max ?? Number.MAX_SAFE_INTEGER;
  return v.pipe(
    v.number('{var_name} is not an integer'),
    v.integer('{var_name} is not an integer'),
    v.minValue(min, '{var_name} is too small'),
    v.maxValue(max, '{var_name} is too large'),
  );
}

export function zStr(opts: { max?: number; min?: number } = {}) {
  const pipes: v.PipeItem<string, string, v.BaseIssue<unknown>>[] = [];
  if (opts.min === 1) pipes.push(v.minLength(1, '{var_name} cannot be blank'));
  else if (opts.min !== undefined) pipes.push(v.minLength(opts.min, '{var_name} is too short.'));
  if (opts.max !== undefined) pipes.push(v.maxLength(opts.max, '{var_name} is too long (limit: {max_length} characters)'));
  return v.pipe(v.string('{var_name} is not a string'), ...pipes);
}

export const zBool = () => v.boolean('{var_name} is not a boolean');

/**
 * A JSON number written with a fraction or an exponent (`1.0`, `1e3`, `1e30`). JavaScript reads these
 * as plain numbers, integral ones included; Python (and so Zulip's strict validation) reads them as
 * floats, which no integer parameter accepts. Kept boxed so that number schemas refuse them.
 */
export class JsonFloat {
  constructor(readonly value: number) {}
  toJSON(): number {
    return this.value;
  }
}

const NUMBER_TOKEN = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const FLOAT_MARK = `\u0000float-${Math.random().toString(36).slice(2)}:`;

/** JSON.parse, except that integral numbers written as floats come back as JsonFloat (see above). */
export function parseJson(raw: string): unknown {
  const plain = JSON.parse(raw); // throws on invalid JSON before any rewriting
  if (!/[.eE]/.test(raw)) return plain;
  // Valid JSON: outside strings, a '-' or a digit always starts a number token.
  let out = '';
  let last = 0;
  let found = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === '"') {
      for (i++; raw[i] !== '"'; i++) if (raw[i] === '\\') i++;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      NUMBER_TOKEN.lastIndex = i;
      const token = (NUMBER_TOKEN.exec(raw) as RegExpExecArray)[0];
      if (/[.eE]/.test(token) && Number.isInteger(Number(token))) {
        out += raw.slice(last, i) + JSON.stringify(FLOAT_MARK + token);
        last = i + token.length;
        found = true;
      }
      i += token.length - 1;
    }
  }
  if (!found) return plain;
  const unmark = (value: unknown): unknown => {
    if (typeof value === 'string') return value.startsWith(FLOAT_MARK) ? new JsonFloat(Number(value.slice(FLOAT_MARK.length))) : value;
    if (Array.isArray(value)) return value.map(unmark);
    if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        const u = unmark(v);
        // defineProperty: a key named __proto__ stays an own property
        if (u !== v) Object.defineProperty(value, k, { value: u, writable: true, enumerable: true, configurable: true });
      }
    }
    return value;
  };
  return unmark(JSON.parse(out + raw.slice(last)));
}

/**
 * Refuses a JSON text holding an object of more than MAX_JSON_LIST_ITEMS members, before it is parsed.
 * Lists are checked after parsing (checkJsonLists), which is cheap for them; an object of 300,000
 * keys (5 MB) took ~160 ms to parse and ~360 ms more to walk, so its members are counted in the text:
 * the commas directly inside each object, strings skipped. A malformed text is left to JSON.parse.
 */
function checkJsonObjectSizes(raw: string, name: string): void {
  // One entry per open bracket: its commas so far, negative for a list (not counted here).
  const commas: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === 0x22 /* " */) {
      for (i++; i < raw.length; i++) {
        const d = raw.charCodeAt(i);
        if (d === 0x5c /* \ */) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x7b /* { */) commas.push(0);
    else if (c === 0x5b /* [ */) commas.push(-1);
    else if (c === 0x7d /* } */ || c === 0x5d /* ] */) commas.pop();
    else if (c === 0x2c /* , */ && commas.length > 0 && commas[commas.length - 1] >= 0) {
      if (++commas[commas.length - 1] >= MAX_JSON_LIST_ITEMS) {
        throw errors.badRequest('{var_name} is too long (limit: {max_length} items)', { var_name: name, max_length: MAX_JSON_LIST_ITEMS });
      }
    }
  }
}

function decodeJson(raw: string, name: string): unknown {
  checkJsonObjectSizes(raw, name);
  let value: unknown;
  try {
    value = parseJson(raw);
  } catch {
    throw errors.badRequest('{var_name} is not valid JSON', { var_name: name });
  }
  checkJsonLists(value, name);
  return value;
}

/**
 * Longest list (and most members of an object) a JSON parameter may hold at any depth. Every handler
 * does some work per item; without a bound a request body of 32 MB holds millions of ids and blocks
 * the process for seconds. Routes whose items cost more set lower bounds (p.list); no client needs
 * more than this in one request.
 */
export const MAX_JSON_LIST_ITEMS = 10_000;

/** Refuses a decoded value holding a list longer than MAX_JSON_LIST_ITEMS, naming where it is. */
function checkJsonLists(value: unknown, name: string): void {
  if (value === null || typeof value !== 'object') return;
  // Iterative (a deeply nested value must not overflow the stack); parents are kept to name the path.
  const stack: { value: object; parent: number; key: string | number }[] = [{ value, parent: -1, key: '' }];
  const push = (child: unknown, parent: number, key: string | number) => {
    if (child !== null && typeof child === 'object') stack.push({ value: child, parent, key });
  };
  for (let i = 0; i < stack.length; i++) {
    const node = stack[i].value;
    if (!Array.isArray(node)) {
      for (const [key, child] of Object.entries(node)) push(child, i, key);
      continue;
    }
    if (node.length > MAX_JSON_LIST_ITEMS) {
      let path = '';
      for (let j = i; j > 0; j = stack[j].parent) {
        const key = stack[j].key;
        path = (typeof key === 'number' ? `[${key}]` : `[${JSON.stringify(key)}]`) + path;
      }
      checkListLength(node, name + path, MAX_JSON_LIST_ITEMS);
    }
    for (let k = 0; k < node.length; k++) push(node[k], i, k);
  }
}

/** Validates an already-decoded value against a valibot schema, with Zulip's wording. */
export function validate<S extends v.GenericSchema>(schema: S, value: unknown, name: string): v.InferOutput<S> {
  const result = v.safeParse(schema, value, { abortEarly: true });
  if (!result.success) throw issueToError(name, result.issues[0]);
  return result.output;
}

// --- parameter kinds ---------------------------------------------------------------------------------

export const p = {
  /**
   * A raw string. `max` counts code points, like Python's len(). `strip`: surrounding whitespace is
   * removed before the length checks (pydantic's StringConstraints(strip_whitespace=True)).
   */
  str(opts: { max?: number; min?: number; strip?: boolean } = {}): Param<string> {
    return new ParamImpl((raw, name) => {
      const value = opts.strip ? raw.trim() : raw;
      if (opts.min === 1 && value.length === 0) throw errors.badRequest('{var_name} cannot be blank', { var_name: name });
      if (opts.max !== undefined && codePoints(value) > opts.max) {
        throw errors.badRequest('{var_name} is too long (limit: {max_length} characters)', {
          var_name: name,
          max_length: opts.max,
        });
      }
      return value;
    });
  },
  /**
   * One of a fixed set of raw strings; `message` is the refusal's template ("Invalid {var_name}", or
   * typed_endpoint's wording of check_string_in_validator's ValueError).
   */
  oneOf<const T extends string>(values: readonly T[], message = 'Invalid {var_name}'): Param<T> {
    return new ParamImpl((raw, name) => {
      if (!(values as readonly string[]).includes(raw)) throw errors.badRequest(message, { var_name: name });
      return raw as T;
    });
  },
  /** A JSON-encoded integer (a bare decimal is the same thing). */
  int(opts: { min?: number; max?: number } = {}): Param<number> {
    const schema = zInt(opts);
    return new ParamImpl((raw, name) => validate(schema, decodeJson(raw, name), name));
  },
  /** A JSON-encoded boolean. */
  bool(): Param<boolean> {
    return new ParamImpl((raw, name) => validate(zBool(), decodeJson(raw, name), name));
  },
  /** A JSON-encoded value checked by a valibot schema (lists, objects, unions). */
  json<S extends v.GenericSchema>(schema: S): Param<v.InferOutput<S>> {
    return new ParamImpl((raw, name) => validate(schema, decodeJson(raw, name), name));
  },
  /**
   * A JSON-encoded list of at most `max` items. The length is checked before any item, so an
   * oversized list costs its JSON parse and no more: a handler's work per item stays bounded.
   */
  list<S extends v.GenericSchema>(item: S, opts: { max: number; message?: string }): Param<v.InferOutput<S>[]> {
    const schema = v.array(item, opts.message ?? '{var_name} is not a list');
    return new ParamImpl((raw, name) => {
      const value = decodeJson(raw, name);
      if (Array.isArray(value)) checkListLength(value, name, opts.max);
      return validate(schema, value, name);
    });
  },
  /** A value that may come JSON-encoded or raw (Zulip's "string or JSON" fields such as `to`). */
  jsonOrStr<S extends v.GenericSchema>(schema: S): Param<v.InferOutput<S> | string> {
    return new ParamImpl((raw, name) => {
      let decoded: unknown;
      try {
        decoded = parseJson(raw);
      } catch {
        return raw;
      }
      checkJsonLists(decoded, name);
      return validate(v.union([schema, v.string()]), decoded, name);
    });
  },
};

/**
 * Refuses a list a client sent with more than `max` items. Zulip bounds few lists (message_ids at
 * 5000); Parley bounds every list whose items cost work, each at a documented size (README, Security).
 */
export function checkListLength(list: readonly unknown[], varName: string, max: number): void {
  if (list.length > max) throw errors.badRequest('{var_name} is too long (limit: {max_length} items)', { var_name: varName, max_length: max });
}

/** Length in Unicode code points, as Zulip (Python) counts. */
export function codePoints(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff) n++;
  }
  return n;
}

/**
 * The first `n` code points of `s` (all of it when shorter), without splitting a surrogate pair.
 * Walks only as far as it keeps: Array.from(s).slice(0, n) makes an array of the whole string first,
 * a quarter second for a 10 MB message that is then cut to 10,000 characters.
 */
export function prefixCodePoints(s: string, n: number): string {
  let i = 0;
  for (let kept = 0; kept < n && i < s.length; kept++) {
    const c = s.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < s.length ? 2 : 1;
  }
  return s.slice(0, i);
}

export type ParamSpec = Record<string, Param<unknown>>;
export type ParsedParams<S extends ParamSpec> = { [K in keyof S]: S[K] extends Param<infer T> ? T : never };

const NOTHING_USED: ReadonlySet<string> = new Set();

/**
 * Reads every declared parameter from the merged form values. Returns the parsed values and the set
 * of form keys the route used (for ignored_parameters_unsupported).
 */
export function readParams<S extends ParamSpec>(spec: S | undefined, form: Map<string, string>): { values: ParsedParams<S>; used: ReadonlySet<string> } {
  const values: Record<string, unknown> = {};
  if (spec === undefined) return { values: values as ParsedParams<S>, used: NOTHING_USED };
  const used = new Set<string>();
  for (const name in spec) {
    const param = spec[name];
    let foundKey: string | undefined;
    for (const key of [name, ...param.aliases]) {
      if (!form.has(key)) continue;
      if (foundKey !== undefined) throw errors.confusing(foundKey, key);
      foundKey = key;
    }
    if (foundKey === undefined) {
      if (param.required) throw errors.missing(name);
      values[name] = param.defaultValue;
      continue;
    }
    used.add(foundKey);
    values[name] = param.parse(form.get(foundKey) as string, foundKey);
  }
  return { values: values as ParsedParams<S>, used };
}
