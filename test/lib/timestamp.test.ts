// <time:...> parsing (src/lib/timestamp.ts). Expected values are what Zulip's Timestamp pattern gives
// (python-dateutil 2.9.0.post0's parser.parse with Zulip's common_timezones, then float() Unix
// seconds), computed with the default date 2024-02-29: fields the text leaves out come from that day.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseTimestamp } from '../../src/lib/timestamp';

const LEAP_DAY = Date.UTC(2024, 1, 29, 15, 4, 5);

const TIMESTAMP_CASES: [string, string | null][] = [
  ['2017-06-05T22:30:00+05:30', '2017-06-05T17:00:00Z'],
  ['2017-06-05 22:30', '2017-06-05T22:30:00Z'],
  ['2017-06-05', '2017-06-05T00:00:00Z'],
  ['2017-06-05T22:30:00.123Z', '2017-06-05T22:30:00.123000Z'],
  ['20170605T2230', '2017-06-05T22:30:00Z'],
  ['Jun 5 2017 10:30 pm', '2017-06-05T22:30:00Z'],
  ['June 5th, 2017 at 10:30PM', '2017-06-05T22:30:00Z'],
  ['5 June 2017 22:30 EST', '2017-06-06T03:30:00Z'],
  ['05/06/2017', '2017-05-06T00:00:00Z'],
  ['31/12/2017', '2017-12-31T00:00:00Z'],
  ['Sep.20.2009', '2009-09-20T00:00:00Z'],
  ['Sept 5 of 17', '2017-09-05T00:00:00Z'],
  ['Dec 31', '2024-12-31T00:00:00Z'],
  ['Monday 9:00', '2024-03-04T09:00:00Z'],
  ['10:30', '2024-02-29T10:30:00Z'],
  ['10h30m', '2024-02-29T10:30:00Z'],
  ['10:30 am PDT', '2024-02-29T17:30:00Z'],
  ['12 am', '2024-02-29T00:00:00Z'],
  ['10:00 +0530', '2024-02-29T04:30:00Z'],
  ['10:00 -05', '2024-02-29T15:00:00Z'],
  // dateutil reads "GMT+3" the POSIX way.
  ['10:00 GMT+3', '2024-02-29T13:00:00Z'],
  ['10:00 NZDT', '2024-02-28T21:00:00Z'],
  // An abbreviation Zulip does not know is ignored.
  ['10:00 ABC', '2024-02-29T10:00:00Z'],
  ['1496701800.5', '2017-06-05T22:30:00.500000Z'],
  [' 1_000 ', '1970-01-01T00:16:40Z'],
  ['1e9', '2001-09-09T01:46:40Z'],
  // A short number is a day or a year before it is Unix seconds.
  ['12', '2024-02-12T00:00:00Z'],
  ['2017', '2017-02-28T00:00:00Z'],
  ['99', '1999-02-28T00:00:00Z'],
  ['31', '1970-01-01T00:00:31Z'],
  ['2017-06-05 ２２:30', '2017-06-05T22:30:00Z'],
  ['Feb 30 2017', null],
  ['25:00', null],
  ['tomorrow', null],
  ['nan', null],
  ['10:00 +9999', null],
  ['0001-01-01 04:00 IST', null],
  // Zulip fails with an OverflowError here; an error span is kinder.
  ['1e20', null],
];

describe('parseTimestamp (as Zulip reads <time:...>)', () => {
  for (const [text, expected] of TIMESTAMP_CASES) {
    it(JSON.stringify(text), () => assert.equal(parseTimestamp(text, LEAP_DAY), expected));
  }
});
