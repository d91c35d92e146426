// <time:...> parsing for the Markdown renderer (src/lib/markdown.ts). Zulip's Timestamp pattern runs python-dateutil's
// parser.parse(text, tzinfos=common_timezones) and, when that fails, reads Unix seconds with
// float(). Below is a port of dateutil 2.9's parser with its default parserinfo (English names,
// month before day, not fuzzy), so the same texts are accepted with the same meaning, quirks too.
// zulip-compat: fields the text leaves out come from today (midnight, UTC as on a Zulip server),
// so "<time:10:30>" is today at 10:30 and "<time:2017>" is today's date in 2017; "12" is the
// 12th of this month, not Unix second 12.
// Runs only for <time:...>, so it favours being easy to compare with dateutil over speed.

// zerver/lib/timezone.py: common_timezones, abbreviations Zulip understands (seconds east of UTC).
const ZULIP_TIMEZONES: Readonly<Record<string, number>> = {
  SST: -39600, HST: -36000, AKST: -32400, HDT: -32400, AKDT: -28800, PST: -28800, MST: -25200, PDT: -25200,
  CST: -21600, MDT: -21600, CDT: -18000, EST: -18000, AST: -14400, EDT: -14400, NST: -12600, ADT: -10800,
  NDT: -9000, GMT: 0, UTC: 0, WET: 0, BST: 3600, CET: 3600, MET: 3600, WAT: 3600, WEST: 3600, CAT: 7200,
  CEST: 7200, EET: 7200, MEST: 7200, SAST: 7200, EAT: 10800, EEST: 10800, IDT: 10800, MSK: 10800,
  PKT: 18000, IST: 19800, WIB: 25200, AWST: 28800, HKT: 28800, WITA: 28800, JST: 32400, KST: 32400,
  WIT: 32400, ACST: 34200, AEST: 36000, ChST: 36000, ACDT: 37800, AEDT: 39600, NZST: 43200, NZDT: 46800,
};

// dateutil's parserinfo word lists, keyed by lower-case word.
const wordIndex = (groups: readonly (readonly string[])[], base = 0): ReadonlyMap<string, number> =>
  new Map(groups.flatMap((words, i) => words.map((w) => [w.toLowerCase(), i + base] as const)));
const DU_JUMP = new Set([' ', '.', ',', ';', '-', '/', "'", 'at', 'on', 'and', 'ad', 'm', 't', 'of', 'st', 'nd', 'rd', 'th']);
const DU_WEEKDAYS = wordIndex([['Mon', 'Monday'], ['Tue', 'Tuesday'], ['Wed', 'Wednesday'], ['Thu', 'Thursday'], ['Fri', 'Friday'], ['Sat', 'Saturday'], ['Sun', 'Sunday']]);
const DU_MONTHS = wordIndex(
  [['Jan', 'January'], ['Feb', 'February'], ['Mar', 'March'], ['Apr', 'April'], ['May'], ['Jun', 'June'], ['Jul', 'July'], ['Aug', 'August'], ['Sep', 'Sept', 'September'], ['Oct', 'October'], ['Nov', 'November'], ['Dec', 'December']],
  1,
);
const DU_HMS = wordIndex([['h', 'hour', 'hours'], ['m', 'minute', 'minutes'], ['s', 'second', 'seconds']]);
const DU_AMPM = wordIndex([['am', 'a'], ['pm', 'p']]);
const DU_UTCZONE = ['UTC', 'GMT', 'Z', 'z'];
const duJump = (t: string): boolean => DU_JUMP.has(t.toLowerCase());
const duWeekday = (t: string): number | undefined => DU_WEEKDAYS.get(t.toLowerCase());
const duMonth = (t: string): number | undefined => DU_MONTHS.get(t.toLowerCase());
const duHms = (t: string | undefined): number | undefined => (t === undefined ? undefined : DU_HMS.get(t.toLowerCase()));
const duAmpm = (t: string | undefined): number | undefined => (t === undefined ? undefined : DU_AMPM.get(t.toLowerCase()));
const duUtcZone = (t: string): boolean => DU_UTCZONE.some((z) => z.toLowerCase() === t.toLowerCase());

// Python's str.isalpha / isdigit (after asciiDigits) / isspace, per code point.
const DU_ALPHA_RE = /^\p{L}$/u;
const DU_DIGIT_RE = /^[0-9]$/;
const DU_SPACE_RE = /^[\t-\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/;
const DU_DIGITS_RE = /^[0-9]+$/;
const DU_DECIMAL_RE = /^([0-9]+)(?:\.([0-9]*))?$/;
const DU_NONFINITE_RE = /^(?:nan|inf|infinity)$/i;
const DU_SPLIT_DECIMAL_RE = /([.,])/;

// Any failure: dateutil raises ValueError (or IndexError inside its loop), which Zulip catches.
const NO_PARSE = new Error('not a dateutil date');
function fail(): never {
  throw NO_PARSE;
}
// Python's int() of a token (tokens never hold spaces or signs).
function pyInt(s: string | undefined): number {
  if (s === undefined || !DU_DIGITS_RE.test(s)) fail();
  return Number(s);
}

// A numeric token as a Decimal: integer part and fraction digits (never negative).
interface DuDecimal {
  int: number;
  frac: string;
}
function duDecimal(t: string | undefined): DuDecimal {
  const m = t === undefined ? null : DU_DECIMAL_RE.exec(t);
  if (!m) fail();
  return { int: Number(m[1]), frac: m[2] ?? '' };
}
const hasFraction = (d: DuDecimal): boolean => /[1-9]/.test(d.frac);
const decGt = (d: DuDecimal, n: number): boolean => d.int > n || (d.int === n && hasFraction(d));
const decLe = (d: DuDecimal, n: number): boolean => !decGt(d, n);
// int(60 * (value % 1)), exactly.
function sixtieths(d: DuDecimal): number {
  return d.frac === '' ? 0 : Number((60n * BigInt(d.frac)) / 10n ** BigInt(d.frac.length));
}

// dateutil's _timelex: runs of letters, runs of digits (with "." or "," inside), one token per
// other character; a dotted run that has letters or several dots ("Sep.20.2009") is split up.
function duLex(text: string): string[] {
  const chars = Array.from(text.replace(/\0/g, ''));
  const tokens: string[] = [];
  const isWord = (c: string): boolean => DU_ALPHA_RE.test(c);
  const isNum = (c: string): boolean => DU_DIGIT_RE.test(c);
  let i = 0;
  while (i < chars.length) {
    let token = chars[i++]!;
    let state: 'a' | '0' | 'a.' | '0.';
    if (isWord(token)) state = 'a';
    else if (isNum(token)) state = '0';
    else {
      tokens.push(DU_SPACE_RE.test(token) ? ' ' : token);
      continue;
    }
    // As dateutil: letters count as seen once a character is read in a letter state.
    let seenLetters = false;
    for (; i < chars.length; i++) {
      const c = chars[i]!;
      if (state === 'a' || state === 'a.') seenLetters = true;
      if (state === 'a') {
        if (isWord(c)) token += c;
        else if (c === '.') (token += c), (state = 'a.');
        else break;
      } else if (state === '0') {
        if (isNum(c)) token += c;
        else if (c === '.' || (c === ',' && token.length >= 2)) (token += c), (state = '0.');
        else break;
      } else if (state === 'a.') {
        if (c === '.' || isWord(c)) token += c;
        else if (isNum(c) && token.endsWith('.')) (token += c), (state = '0.');
        else break;
      } else {
        if (c === '.' || isNum(c)) token += c;
        else if (isWord(c) && token.endsWith('.')) (token += c), (state = 'a.');
        else break;
      }
    }
    const rest: string[] = [];
    if ((state === 'a.' || state === '0.') && (seenLetters || token.split('.').length > 2 || token.endsWith('.') || token.endsWith(','))) {
      const parts = token.split(DU_SPLIT_DECIMAL_RE);
      token = parts[0]!;
      for (const p of parts.slice(1)) if (p !== '') rest.push(p);
    }
    if (state === '0.' && !token.includes('.')) token = token.split(',').join('.');
    tokens.push(token, ...rest);
  }
  return tokens;
}

interface DuResult {
  year: number | null;
  month: number | null;
  day: number | null;
  weekday: number | null;
  hour: number | null;
  minute: number | null;
  second: number | null;
  microsecond: number | null;
  tzname: string | null;
  tzoffset: number | null;
  ampm: number | null;
}

// dateutil's _ymd: the date numbers seen, and which of them a month name or a long year marked.
class DuYmd {
  readonly values: number[] = [];
  centurySpecified = false;
  mstridx = -1;
  ystridx = -1;

  append(val: string | DuDecimal, label?: 'M' | 'Y'): void {
    let n: number;
    if (typeof val === 'string') {
      if (DU_DIGITS_RE.test(val) && val.length > 2) {
        this.centurySpecified = true;
        label = 'Y';
      }
      n = pyInt(val);
    } else {
      if (decGt(val, 100)) {
        this.centurySpecified = true;
        label = 'Y';
      }
      n = val.int;
    }
    this.values.push(n);
    if (label === 'M') {
      if (this.mstridx >= 0) fail();
      this.mstridx = this.values.length - 1;
    } else if (label === 'Y') {
      if (this.ystridx >= 0) fail();
      this.ystridx = this.values.length - 1;
    }
  }

  couldBeDay(value: DuDecimal): boolean {
    const max = this.mstridx < 0 ? 31 : daysInMonth(this.ystridx < 0 ? 2000 : this.values[this.ystridx]!, this.values[this.mstridx]!);
    return value.int >= 1 && decLe(value, max);
  }

  // resolve_ymd with dayfirst and yearfirst off.
  resolve(): [number | null, number | null, number | null] {
    const v = this.values;
    const n = v.length;
    const strids: Record<'y' | 'm' | 'd', number | undefined> = { y: undefined, m: undefined, d: undefined };
    if (this.ystridx >= 0) strids.y = this.ystridx;
    if (this.mstridx >= 0) strids.m = this.mstridx;
    const known = (strids.y === undefined ? 0 : 1) + (strids.m === undefined ? 0 : 1);
    if ((n === known && n > 0) || (n === 3 && known === 2)) {
      if (n === 3) {
        const missing = [0, 1, 2].find((x) => x !== strids.y && x !== strids.m)!;
        if (strids.y === undefined) strids.y = missing;
        else if (strids.m === undefined) strids.m = missing;
        else strids.d = missing;
      }
      const get = (k: number | undefined): number | null => (k === undefined ? null : v[k]!);
      return [get(strids.y), get(strids.m), get(strids.d)];
    }
    if (n > 3) fail();
    const m = this.mstridx;
    if (n === 1 || (m >= 0 && n === 2)) {
      // Python's self[mstridx - 1] wraps round to the last value.
      const other = m >= 0 ? v.at(m - 1)! : v[0]!;
      const month = m >= 0 ? v[m]! : null;
      if (n > 1 || m < 0) return other > 31 ? [other, month, null] : [null, month, other];
      return [null, month, null];
    }
    const [a, b, c] = v as [number, number, number];
    if (n === 2) return a > 31 ? [a, b, null] : b > 31 ? [b, a, null] : [null, a, b];
    if (n === 3) {
      if (m === 0) return b > 31 ? [b, a, c] : [c, a, b];
      if (m === 1) return a > 31 ? [a, b, c] : [c, b, a];
      if (m === 2) return b > 31 ? [b, c, a] : [a, c, b];
      if (a > 31 || this.ystridx === 0) return [a, b, c];
      return a > 12 ? [c, b, a] : [c, a, b];
    }
    return [null, null, null];
  }
}

const isLeap = (y: number): boolean => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
// calendar.monthrange(year, month)[1]; an impossible month is a ValueError there too.
function daysInMonth(year: number, month: number): number {
  if (!(month >= 1 && month <= 12)) fail();
  return month === 2 ? (isLeap(year) ? 29 : 28) : [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
}

// parserinfo.convertyear: a two-digit year is taken within 50 years of this one.
function convertYear(year: number, centurySpecified: boolean, thisYear: number): number {
  if (year < 100 && !centurySpecified) {
    year += Math.floor(thisYear / 100) * 100;
    if (year >= thisYear + 50) year -= 100;
    else if (year < thisYear - 50) year += 100;
  }
  return year;
}

const adjustAmpm = (hour: number, ampm: number): number => (hour < 12 && ampm === 1 ? hour + 12 : hour === 12 && ampm === 0 ? 0 : hour);

const couldBeTzname = (res: DuResult, token: string): boolean =>
  res.hour !== null && res.tzname === null && res.tzoffset === null && token.length <= 5 && (/^[A-Z]+$/.test(token) || DU_UTCZONE.includes(token));

// _parsems: "S[.ffffff]" → [seconds, microseconds].
function parseMs(value: string | undefined): [number, number] {
  if (value === undefined || !value.includes('.')) return [pyInt(value), 0];
  const parts = value.split('.');
  if (parts.length !== 2) fail();
  return [pyInt(parts[0]), pyInt(parts[1]!.padEnd(6, '0').slice(0, 6))];
}

function parseMinSec(value: DuDecimal): [number, number | null] {
  return [value.int, hasFraction(value) ? sixtieths(value) : null];
}

// _find_hms_idx with allow_jump: a unit word ("h", "minutes") next to the number.
function findHmsIdx(idx: number, tokens: string[]): number | null {
  const n = tokens.length;
  if (idx + 1 < n && duHms(tokens[idx + 1]) !== undefined) return idx + 1;
  if (idx + 2 < n && tokens[idx + 1] === ' ' && duHms(tokens[idx + 2]) !== undefined) return idx + 2;
  if (idx > 0 && duHms(tokens[idx - 1]) !== undefined) return idx - 1;
  if (1 < idx && idx === n - 1 && tokens[idx - 1] === ' ' && duHms(tokens[idx - 2]) !== undefined) return idx - 2;
  return null;
}

// _parse_numeric_token: returns the index of the last token used.
function parseNumericToken(tokens: string[], idx: number, ymd: DuYmd, res: DuResult): number {
  const valueRepr = tokens[idx]!;
  const value = duDecimal(valueRepr);
  const lenLi = valueRepr.length;
  const n = tokens.length;
  const next = tokens[idx + 1];
  if (ymd.values.length === 3 && (lenLi === 2 || lenLi === 4) && res.hour === null && (idx + 1 >= n || (next !== ':' && duHms(next) === undefined))) {
    // 19990101T23[59]
    res.hour = pyInt(valueRepr.slice(0, 2));
    if (lenLi === 4) res.minute = pyInt(valueRepr.slice(2));
  } else if (lenLi === 6 || (lenLi > 6 && valueRepr.indexOf('.') === 6)) {
    // YYMMDD or HHMMSS[.ss]
    if (ymd.values.length === 0 && !valueRepr.includes('.')) {
      ymd.append(valueRepr.slice(0, 2));
      ymd.append(valueRepr.slice(2, 4));
      ymd.append(valueRepr.slice(4));
    } else {
      res.hour = pyInt(valueRepr.slice(0, 2));
      res.minute = pyInt(valueRepr.slice(2, 4));
      [res.second, res.microsecond] = parseMs(valueRepr.slice(4));
    }
  } else if (lenLi === 8 || lenLi === 12 || lenLi === 14) {
    // YYYYMMDD[HHMM[SS]]
    ymd.append(valueRepr.slice(0, 4), 'Y');
    ymd.append(valueRepr.slice(4, 6));
    ymd.append(valueRepr.slice(6, 8));
    if (lenLi > 8) {
      res.hour = pyInt(valueRepr.slice(8, 10));
      res.minute = pyInt(valueRepr.slice(10, 12));
      if (lenLi > 12) res.second = pyInt(valueRepr.slice(12));
    }
  } else if (findHmsIdx(idx, tokens) !== null) {
    // HH[ ]h or MM[ ]m or SS[.ss][ ]s
    const hmsIdx = findHmsIdx(idx, tokens)!;
    let hms: number;
    if (hmsIdx > idx) {
      hms = duHms(tokens[hmsIdx])!;
      idx = hmsIdx;
    } else {
      hms = duHms(tokens[hmsIdx])! + 1;
    }
    if (hms === 0) {
      res.hour = value.int;
      if (hasFraction(value)) res.minute = sixtieths(value);
    } else if (hms === 1) {
      [res.minute, res.second] = parseMinSec(value);
    } else if (hms === 2) {
      [res.second, res.microsecond] = parseMs(valueRepr);
    }
  } else if (idx + 2 < n && next === ':') {
    // HH:MM[:SS[.ss]]
    res.hour = value.int;
    [res.minute, res.second] = parseMinSec(duDecimal(tokens[idx + 2]));
    if (idx + 4 < n && tokens[idx + 3] === ':') {
      [res.second, res.microsecond] = parseMs(tokens[idx + 4]);
      idx += 2;
    }
    idx += 2;
  } else if (idx + 1 < n && (next === '-' || next === '/' || next === '.')) {
    // 01-01[-01], 01-Jan[-01]
    const sep = next;
    ymd.append(valueRepr);
    if (idx + 2 < n && !duJump(tokens[idx + 2]!)) {
      const second = tokens[idx + 2]!;
      if (DU_DIGITS_RE.test(second)) ymd.append(second);
      else {
        const month = duMonth(second);
        if (month === undefined) fail();
        ymd.append({ int: month, frac: '' }, 'M');
      }
      if (idx + 3 < n && tokens[idx + 3] === sep) {
        const third = tokens[idx + 4];
        if (third === undefined) fail();
        const month = duMonth(third);
        if (month !== undefined) ymd.append({ int: month, frac: '' }, 'M');
        else ymd.append(third);
        idx += 2;
      }
      idx += 1;
    }
    idx += 1;
  } else if (idx + 1 >= n || duJump(next!)) {
    const ampm = duAmpm(tokens[idx + 2]);
    if (idx + 2 < n && ampm !== undefined) {
      // 12 am
      res.hour = adjustAmpm(value.int, ampm);
      idx += 1;
    } else {
      // year, month or day
      ymd.append(value);
    }
    idx += 1;
  } else if (duAmpm(next) !== undefined && value.int < 24) {
    // 12am
    res.hour = adjustAmpm(value.int, duAmpm(next)!);
    idx += 1;
  } else if (ymd.couldBeDay(value)) {
    ymd.append(value);
  } else {
    fail();
  }
  return idx;
}

// parser._parse (not fuzzy) followed by parserinfo.validate.
function duParse(text: string, thisYear: number): DuResult {
  const res: DuResult = { year: null, month: null, day: null, weekday: null, hour: null, minute: null, second: null, microsecond: null, tzname: null, tzoffset: null, ampm: null };
  const l = duLex(text);
  const n = l.length;
  const ymd = new DuYmd();
  for (let i = 0; i < n; i++) {
    const t = l[i]!;
    let word: number | undefined;
    if (DU_DECIMAL_RE.test(t) || DU_NONFINITE_RE.test(t)) {
      // float() accepts "nan" and "inf", which Decimal then refuses.
      i = parseNumericToken(l, i, ymd, res);
    } else if ((word = duWeekday(t)) !== undefined) {
      res.weekday = word;
    } else if ((word = duMonth(t)) !== undefined) {
      ymd.append({ int: word, frac: '' }, 'M');
      if (i + 1 < n) {
        if (l[i + 1] === '-' || l[i + 1] === '/') {
          // Jan-01[-99]
          const sep = l[i + 1];
          const day = l[i + 2];
          if (day === undefined) fail();
          ymd.append(day);
          if (i + 3 < n && l[i + 3] === sep) {
            const year = l[i + 4];
            if (year === undefined) fail();
            ymd.append(year);
            i += 2;
          }
          i += 2;
        } else if (i + 4 < n && l[i + 1] === ' ' && l[i + 3] === ' ' && l[i + 2]!.toLowerCase() === 'of') {
          // Jan of 01
          if (DU_DIGITS_RE.test(l[i + 4]!)) ymd.append(String(convertYear(Number(l[i + 4]), false, thisYear)), 'Y');
          i += 4;
        }
      }
    } else if ((word = duAmpm(t)) !== undefined) {
      if (res.hour === null || res.hour < 0 || res.hour > 12) fail();
      res.hour = adjustAmpm(res.hour, word);
      res.ampm = word;
    } else if (couldBeTzname(res, t)) {
      res.tzname = t;
      res.tzoffset = t === 'z' ? 0 : null;
      if (i + 1 < n && (l[i + 1] === '+' || l[i + 1] === '-')) {
        // zulip-compat (dateutil): "GMT+3" is read the POSIX way, as three hours behind.
        l[i + 1] = l[i + 1] === '+' ? '-' : '+';
        res.tzoffset = null;
        if (duUtcZone(t)) res.tzname = null;
      }
    } else if (res.hour !== null && (t === '+' || t === '-')) {
      const signal = t === '+' ? 1 : -1;
      const offset = l[i + 1];
      if (offset === undefined) fail();
      let hours: number;
      let minutes: number;
      if (offset.length === 4) {
        hours = pyInt(offset.slice(0, 2));
        minutes = pyInt(offset.slice(2));
      } else if (i + 2 < n && l[i + 2] === ':') {
        hours = pyInt(offset);
        minutes = pyInt(l[i + 3]);
        i += 2;
      } else if (offset.length <= 2) {
        hours = pyInt(offset.slice(0, 2));
        minutes = 0;
      } else {
        fail();
      }
      res.tzoffset = signal * (hours * 3600 + minutes * 60);
      // "-0300 (BRST)"
      const name = l[i + 4];
      if (i + 5 < n && duJump(l[i + 2]!) && l[i + 3] === '(' && l[i + 5] === ')' && name!.length >= 3 && couldBeTzname({ ...res, tzoffset: null }, name!)) {
        res.tzname = name!;
        i += 4;
      }
      i += 1;
    } else if (!duJump(t)) {
      fail();
    }
  }
  const [year, month, day] = ymd.resolve();
  res.year = year === null ? null : convertYear(year, ymd.centurySpecified, thisYear);
  res.month = month;
  res.day = day;
  if ((res.tzoffset === 0 && !res.tzname) || res.tzname === 'Z' || res.tzname === 'z') {
    res.tzname = 'UTC';
    res.tzoffset = 0;
  } else if (res.tzoffset !== 0 && res.tzname && duUtcZone(res.tzname)) {
    res.tzoffset = 0;
  }
  return res;
}

// Days since 1970-01-01 of a proleptic Gregorian date (valid for years 1–9999 and beyond).
function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  return era * 146097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719468;
}
function civilFromDays(days: number): [number, number, number] {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, doy - Math.floor((153 * mp + 2) / 5) + 1];
}

const MIN_EPOCH_SECONDS = daysFromCivil(1, 1, 1) * 86400;
const MAX_EPOCH_SECONDS = daysFromCivil(10000, 1, 1) * 86400 - 1;
const pad = (n: number, width: number): string => String(n).padStart(width, '0');

// datetime.isoformat() of a UTC time with "+00:00" written "Z", or null outside years 1–9999
// (where Python's datetime overflows).
function isoFromEpoch(seconds: number, microsecond: number): string | null {
  if (!(seconds >= MIN_EPOCH_SECONDS && seconds <= MAX_EPOCH_SECONDS)) return null;
  const days = Math.floor(seconds / 86400);
  const rest = seconds - days * 86400;
  const [y, m, d] = civilFromDays(days);
  const time = `${pad(Math.floor(rest / 3600), 2)}:${pad(Math.floor(rest / 60) % 60, 2)}:${pad(rest % 60, 2)}`;
  return `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}T${time}${microsecond ? '.' + pad(microsecond, 6) : ''}Z`;
}

// dateutil.parser.parse(text, tzinfos=common_timezones) made UTC as Zulip does: null when dateutil
// raises (Zulip then tries Unix seconds), false when the time parses but cannot be made UTC.
function dateutilTimestamp(text: string, nowMs: number): string | null | false {
  const [thisYear, thisMonth, today] = civilFromDays(Math.floor(nowMs / 86_400_000));
  let res: DuResult;
  try {
    res = duParse(text, thisYear);
  } catch (err) {
    if (err === NO_PARSE) return null;
    throw err;
  }
  const fields = [res.year, res.month, res.day, res.weekday, res.hour, res.minute, res.second, res.microsecond, res.tzname, res.tzoffset, res.ampm];
  if (fields.every((f) => f === null)) return null;
  // _build_naive: missing fields from today at midnight; a day past the month's end is clamped.
  const year = res.year ?? thisYear;
  const month = res.month ?? thisMonth;
  let day = res.day;
  try {
    if (day === null) day = Math.min(today, daysInMonth(year, month));
  } catch {
    return null;
  }
  const hour = res.hour ?? 0;
  const minute = res.minute ?? 0;
  const second = res.second ?? 0;
  const microsecond = res.microsecond ?? 0;
  const valid =
    year >= 1 && year <= 9999 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month) &&
    hour <= 23 && minute <= 59 && second <= 59 && microsecond <= 999999;
  if (!valid) return null;
  let days = daysFromCivil(year, month, day);
  // A weekday without a day: the first such day from the date (relativedelta(weekday=...)).
  if (res.weekday !== null && res.day === null) days += (7 - ((days % 7) + 10) % 7 + res.weekday) % 7;
  let seconds = days * 86400 + hour * 3600 + minute * 60 + second;
  if (seconds > MAX_EPOCH_SECONDS) return null;
  // _build_tzaware: Zulip's abbreviations first; an unknown name is ignored (the time is UTC).
  const offset = res.tzname !== null && Object.hasOwn(ZULIP_TIMEZONES, res.tzname) ? ZULIP_TIMEZONES[res.tzname]! : (res.tzoffset ?? 0);
  if (Math.abs(offset) >= 86400) return false;
  seconds -= offset;
  return isoFromEpoch(seconds, microsecond) ?? false;
}

// Python's float() syntax (underscores between digits allowed) after str.strip().
const PY_FLOAT_RE = /^[+-]?(?:[0-9](?:_?[0-9])*(?:\.(?:[0-9](?:_?[0-9])*)?)?|\.[0-9](?:_?[0-9])*)(?:[eE][+-]?[0-9](?:_?[0-9])*)?$/;
const PY_WHITESPACE_RE = /[\t-\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;

/**
 * Python's str.strip(), in linear time: /^[ws]+|[ws]+$/g retried its second [ws]+ from every
 * whitespace character of a run that does not end the text (9000 spaces in a <time:…> took ~90 ms).
 */
function pyStrip(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && PY_WHITESPACE_RE.test(text[start]!)) start++;
  while (end > start && PY_WHITESPACE_RE.test(text[end - 1]!)) end--;
  return text.slice(start, end);
}

// Python's round() of a float: halves go to the even neighbour.
const roundHalfEven = (x: number): number => (Math.abs(x % 1) === 0.5 ? 2 * Math.round(x / 2) : Math.round(x));

// Python's isdigit, int(), Decimal() and float() read every Unicode decimal digit ("٣", "３") as
// its value; the digits of a script are ten consecutive code points from zero.
const NON_ASCII_RE = /[^\x00-\x7f]/;
const DECIMAL_DIGIT_RE = /\p{Nd}/gu;
const ONE_DECIMAL_DIGIT_RE = /^\p{Nd}$/u;
function asciiDigits(text: string): string {
  if (!NON_ASCII_RE.test(text)) return text;
  return text.replace(DECIMAL_DIGIT_RE, (d) => {
    const cp = d.codePointAt(0)!;
    let zero = cp;
    while (ONE_DECIMAL_DIGIT_RE.test(String.fromCodePoint(zero - 1))) zero--;
    return String((cp - zero) % 10);
  });
}

/** What <time:text> means as Zulip reads it: the UTC ISO time for datetime="", or null if invalid. */
export function parseTimestamp(input: string, nowMs: number): string | null {
  const text = asciiDigits(input);
  const parsed = dateutilTimestamp(text, nowMs);
  if (parsed !== null) return parsed === false ? null : parsed;
  // datetime.fromtimestamp(float(text), tz=timezone.utc). Out of range (years 1–9999) it is
  // invalid; Zulip's OverflowError there (e.g. "1e20") is a server error, not a rendering.
  const s = pyStrip(text);
  if (!PY_FLOAT_RE.test(s)) return null;
  const t = Number(s.replace(/_/g, ''));
  if (!Number.isFinite(t)) return null;
  let seconds = Math.trunc(t);
  let microsecond = roundHalfEven((t - seconds) * 1e6);
  if (microsecond >= 1e6) (seconds += 1), (microsecond -= 1e6);
  else if (microsecond < 0) (seconds -= 1), (microsecond += 1e6);
  return isoFromEpoch(seconds, microsecond);
}
