// Widgets (Zulip's zerver/lib/widget.py and the poll/todo checks of zerver/lib/validator.py): the
// widget a message's content starts (/poll, /todo) and the shape of the submessages that act on it.
import { errors } from '../http/errors';
import { JsonFloat } from '../http/params';

export type WidgetType = 'poll' | 'todo';

/** The first submessage of a widget message, as Zulip's do_widget_post_save_actions writes it. */
export interface WidgetSubmessage {
  msgType: 'widget';
  content: string;
}

// Python's str.isspace() characters: what Zulip's `\s`, split() and strip() treat as whitespace.
const PY_WS = '\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const FIRST_TOKEN = new RegExp(`^[^${PY_WS}]*`);
const STRIP = new RegExp(`^[${PY_WS}]+|[${PY_WS}]+$`, 'g');
// Python's str.splitlines() boundaries (a trailing one does not start an empty line).
const LINE_BREAK = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;
// Zulip's re.sub(r"(\s*[-*]?\s*)", "", line.strip(), count=1) on a stripped line: a list marker.
const LIST_MARKER = new RegExp(`^[${PY_WS}]*[-*]?[${PY_WS}]*`);

const pyStrip = (s: string) => s.replace(STRIP, '');

function splitLines(s: string): string[] {
  if (s === '') return [];
  const lines = s.split(LINE_BREAK);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * Zulip's get_widget_data: the widget a message starts, from its first word (`/poll`, `/todo`), and
 * the widget's extra data read from the rest: the first line is the question (or the task list's
 * title), each later non-blank line an option (or a task, "task: description"), list markers dropped.
 */
export function widgetData(content: string): { widgetType: WidgetType; extraData: Record<string, unknown> } | null {
  // The cheap test first: sends without a widget pay one character comparison.
  if (content.charCodeAt(0) !== 0x2f /* / */) return null;
  const token = (FIRST_TOKEN.exec(content) as RegExpExecArray)[0];
  if (token !== '/poll' && token !== '/todo') return null;
  const lines = splitLines(content.slice(token.length));
  let heading = '';
  if (lines.length > 0 && lines[0] !== '') heading = pyStrip(lines.shift() as string);
  const items = lines.map((line) => pyStrip(line).replace(LIST_MARKER, '')).filter((item) => item.length > 0);
  if (token === '/poll') return { widgetType: 'poll', extraData: { question: heading, options: items } };
  const tasks = items.map((item) => {
    const at = item.indexOf(': ');
    return at === -1 ? { task: pyStrip(item), desc: '' } : { task: pyStrip(item.slice(0, at)), desc: pyStrip(item.slice(at + 2)) };
  });
  return { widgetType: 'todo', extraData: { task_list_title: heading, tasks } };
}

/**
 * JSON as Python's json.dumps writes it (", " and ": " separators, non-ASCII as \u escapes), so that
 * a stored widget's content is the same string Zulip stores and sends.
 */
export function pythonJsonDumps(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([k, v]) => `${pythonJsonDumps(k)}: ${pythonJsonDumps(v)}`)
      .join(', ')}}`;
  }
  const json = JSON.stringify(value) ?? 'null';
  return typeof value === 'string' ? json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : json;
}

/** The widget submessage a message's content asks for, or null (most messages). */
export function widgetSubmessageFor(content: string): WidgetSubmessage | null {
  const data = widgetData(content);
  if (data === null) return null;
  return { msgType: 'widget', content: pythonJsonDumps({ widget_type: data.widgetType, extra_data: data.extraData }) };
}

// ---- the checks of Zulip's validate_poll_data and validate_todo_data --------------------------------

/** Zulip's MAX_IDX: the highest option or task index (it matches the clients' widgets). */
const MAX_IDX = 1000;

type Check = (name: string, value: unknown) => void;

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof JsonFloat);
// Python's int: a JSON number written without a fraction or exponent (parseJson boxes the others).
// zulip-compat: Python also takes true/false as 1/0 here; JSON's booleans are not integers to Parley.
const isInt = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value);

const checkString: Check = (name, value) => {
  if (typeof value !== 'string') throw errors.badRequest('{var_name} is not a string', { var_name: name });
};
const checkBool: Check = (name, value) => {
  if (typeof value !== 'boolean') throw errors.badRequest('{var_name} is not a boolean', { var_name: name });
};
const checkInt: Check = (name, value) => {
  if (!isInt(value)) throw errors.badRequest('{var_name} is not an integer', { var_name: name });
};
const checkIntIn =
  (allowed: number[]): Check =>
  (name, value) => {
    checkInt(name, value);
    if (!allowed.includes(value as number)) throw errors.badRequest('Invalid {var_name}', { var_name: name });
  };
const checkIntRange =
  (low: number, high: number): Check =>
  (name, value) => {
    checkInt(name, value);
    if ((value as number) < low) throw errors.badRequest('{var_name} is too small', { var_name: name });
    if ((value as number) > high) throw errors.badRequest('{var_name} is too large', { var_name: name });
  };

/** Zulip's check_dict (and check_dict_only: `only`), with its error texts. */
function checkDict(name: string, value: unknown, required: [string, Check][], only: boolean): asserts value is Record<string, unknown> {
  if (!isObject(value)) throw errors.badRequest('{var_name} is not a dict', { var_name: name });
  for (const [key, check] of required) {
    if (!Object.hasOwn(value, key)) throw errors.badRequest('{key_name} key is missing from {var_name}', { key_name: key, var_name: name });
    check(`${name}["${key}"]`, value[key]);
  }
  if (only) {
    const listed = new Set(required.map(([k]) => k));
    // Python names them in a set's order; sorted here, so the text is stable.
    const extra = Object.keys(value).filter((k) => !listed.has(k)).sort();
    if (extra.length > 0) throw errors.badRequest('Unexpected arguments: {keys}', { keys: extra.join(', ') });
  }
}

/** Zulip's validate_poll_data: a vote, a new option, or (by the poll's author only) a new question. */
export function checkPollData(data: unknown, isWidgetAuthor: boolean): void {
  const name = 'poll data';
  checkDict(name, data, [['type', checkString]], false);
  switch (data.type) {
    case 'vote':
      return checkDict(name, data, [['type', checkString], ['key', checkString], ['vote', checkIntIn([1, -1])]], true);
    case 'question':
      if (!isWidgetAuthor) throw errors.badRequest("You can't edit a question unless you are the author.");
      return checkDict(name, data, [['type', checkString], ['question', checkString]], true);
    case 'new_option':
      return checkDict(name, data, [['type', checkString], ['option', checkString], ['idx', checkIntRange(0, MAX_IDX)]], true);
    default:
      throw errors.badRequest('Unknown type for poll data: {type}', { type: data.type });
  }
}

/** Zulip's validate_todo_data: a new task, a (un)strike, or (by the list's author only) a new title. */
export function checkTodoData(data: unknown, isWidgetAuthor: boolean): void {
  const name = 'todo data';
  checkDict(name, data, [['type', checkString]], false);
  switch (data.type) {
    case 'new_task':
      return checkDict(
        name,
        data,
        [['type', checkString], ['key', checkIntRange(0, MAX_IDX)], ['task', checkString], ['desc', checkString], ['completed', checkBool]],
        true,
      );
    case 'strike':
      return checkDict(name, data, [['type', checkString], ['key', checkString]], true);
    case 'new_task_list_title':
      if (!isWidgetAuthor) throw errors.badRequest("You can't edit the task list title unless you are the author.");
      return checkDict(name, data, [['type', checkString], ['title', checkString]], true);
    default:
      throw errors.badRequest('Unknown type for todo data: {type}', { type: data.type });
  }
}
