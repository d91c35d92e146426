// Slack threads become topics, named as Zulip's get_zulip_thread_topic_name does: the thread's date and
// the start of its first message, cut to 60 characters with "…", and " (2)", " (3)"... when that name
// was already given to another thread (the count is counted across the whole import, and the name
// is cut shorter to make room for it). A thread is known by its thread_ts (to the second) and the
// user who started it. Unthreaded channel messages go to Zulip's topic "imported from Slack".
// Parley's one difference: whitespace runs (newlines) become one space, as a topic cannot hold them.
import { MAX_TOPIC_LENGTH } from '../../lib/messages';

export const UNTHREADED_TOPIC = 'imported from Slack';

/** Zulip's truncate_content: at most `max` characters (code points), the last of them `marker`. */
export function truncateContent(text: string, max: number, marker = '…'): string {
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  return chars.slice(0, max - Array.from(marker).length).join('') + marker;
}

const pad = (n: number) => String(n).padStart(2, '0');
const utcDate = (d: Date) => `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
const utcSecond = (d: Date) => `${utcDate(d)} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;

export interface ThreadInfo {
  threadTs: string;
  ts: string;
  subtype: string | null;
  /** The message's user (or bot id): a thread's parent names its starter this way. */
  sender: string | null;
  /** parent_user_id of a reply; root.user (or root.bot_id) of a thread_broadcast. */
  parentUser: string | null;
}

export class ThreadTopics {
  private readonly byThread = new Map<string, string>();
  private readonly used = new Map<string, number>();
  /** The starter of each thread seen so far, for replies that do not name it. */
  private readonly starters = new Map<string, string>();

  /** The topic of a threaded channel message; `content` is its converted Markdown. */
  topicFor(t: ThreadInfo, content: string): string {
    const when = new Date(Number(t.threadTs) * 1000);
    let starter: string | null;
    if (t.subtype === 'thread_broadcast') starter = t.parentUser;
    else if (t.threadTs === t.ts) {
      starter = t.sender;
      if (starter !== null) this.starters.set(t.threadTs, starter);
    } else starter = t.parentUser;
    starter ??= this.starters.get(t.threadTs) ?? '';
    const key = `${utcSecond(when)}-${starter}`;
    const known = this.byThread.get(key);
    if (known !== undefined) return known;
    const full = `${utcDate(when)} ${content.replace(/\s+/g, ' ')}`.trim();
    const truncated = truncateContent(full, MAX_TOPIC_LENGTH);
    const collisions = this.used.get(truncated) ?? 0;
    this.used.set(truncated, collisions + 1);
    const suffix = collisions > 0 ? ` (${collisions + 1})` : '';
    const topic = truncateContent(full, MAX_TOPIC_LENGTH - suffix.length) + suffix;
    this.byThread.set(key, topic);
    return topic;
  }
}
