// Times and dates as people read them: "14:05" or "2:05 PM" by the user's twenty_four_hour_time
// setting, and "Today", "Yesterday", "Mar 3" or "Mar 3, 2025" for day dividers.

const timeFormats = new Map<boolean, Intl.DateTimeFormat>();

export function formatTime(timestamp: number, twentyFour: boolean): string {
  let f = timeFormats.get(twentyFour);
  if (!f) timeFormats.set(twentyFour, (f = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit', hour12: !twentyFour })));
  return f.format(new Date(timestamp * 1000));
}

const dayKey = (d: Date) => `${d.getFullYear()}-${d.getMonth()}-${d.getDate()}`;

export function sameDay(a: number, b: number): boolean {
  return dayKey(new Date(a * 1000)) === dayKey(new Date(b * 1000));
}

// Made on first use: Chromium's first Intl.DateTimeFormat costs ~15 ms, which at load would delay the
// registration request (bench/web.ts).
const formats = new Map<string, Intl.DateTimeFormat>();
function format(key: 'thisYear' | 'otherYear' | 'full'): Intl.DateTimeFormat {
  let f = formats.get(key);
  if (!f) {
    const options: Intl.DateTimeFormatOptions =
      key === 'full' ? { dateStyle: 'full', timeStyle: 'short' } : { month: 'short', day: 'numeric', ...(key === 'otherYear' ? { year: 'numeric' } : {}) };
    formats.set(key, (f = new Intl.DateTimeFormat(undefined, options)));
  }
  return f;
}

export function formatDay(timestamp: number, now = Date.now()): string {
  const d = new Date(timestamp * 1000);
  const today = new Date(now);
  if (dayKey(d) === dayKey(today)) return 'Today';
  const yesterday = new Date(now);
  yesterday.setDate(yesterday.getDate() - 1);
  if (dayKey(d) === dayKey(yesterday)) return 'Yesterday';
  return format(d.getFullYear() === today.getFullYear() ? 'thisYear' : 'otherYear').format(d);
}

/** The full date and time, for a tooltip. */
export const formatFull = (timestamp: number) => format('full').format(new Date(timestamp * 1000));
