// Slack's message text ("mrkdwn") to Zulip Markdown, following Zulip's slack_message_conversion.py:
// *bold* → **bold**, _italic_ → *italic*, ~strike~ → ~~strike~~ (with Zulip's rules for where a
// marker may stand), <@U123> → @**Full Name**, <#C123|name> → #**name**, <!channel> <!here>
// <!everyone> → @**all**, <http://a|text> → [text](http://a), <mailto:a@b|a@b> → mailto:a@b.
// Beyond Zulip's converter: code spans and blocks are left alone (Slack formats nothing inside them),
// ``` blocks get fences on lines of their own, Slack's &lt; &gt; &amp; escapes are undone (so "&gt; "
// quotes become Markdown quotes), and :emoji: names become Zulip's names for the same emoji.
import { zulipEmoji } from './emoji';

export interface TextContext {
  /** The Markdown mention of a Slack user and their Parley id, or null for an unknown id. */
  mention(slackId: string): { markdown: string; userId: number } | null;
  /** The imported channel's name for a Slack channel id, or null. */
  channelName(slackId: string): string | null;
}

export interface ConvertedText {
  content: string;
  mentionedUserIds: number[];
  hasLink: boolean;
}

// Zulip's SLACK_BOLD_REGEX, SLACK_STRIKETHROUGH_REGEX and SLACK_ITALIC_REGEX: the marker follows
// punctuation, a space, a symbol or the line start (not the same marker, `, @, \ or a closing
// bracket/quote) and precedes the same kinds (not an opening bracket/quote).
const formatting = (marker: string) => {
  const m = marker === '*' ? '\\*' : marker;
  return new RegExp(
    `((?![${m}\`@\\\\\\p{Pf}\\p{Pe}])[\\p{P}\\p{Zs}\\p{S}]|^)${m}([^${m}]+)${m}(?![${m}\`@\\\\\\p{Pi}\\p{Ps}])(?=[\\p{P}\\p{Zs}\\p{S}]|$)`,
    'gmu',
  );
};
const BOLD = formatting('*');
const STRIKE = formatting('~');
const ITALIC = formatting('_');

/** Slack escapes exactly these three in message text. */
const unescape = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

const CODE = /```([\s\S]*?)```|`([^`\n]+)`/g;
const ANGLE = /<([^<>\n]*)>/g;
const EMOJI = /:([a-z0-9_+'-]+):(?::skin-tone-[2-6]:)?/g;
const URL_SCHEME = /^(https?|ftp):\/\/\S+$/i;
const PLACEHOLDER = /\uE000(\d+)\uE001/g;

/** Converts one Slack text to Zulip Markdown. */
export function convertText(text: string, ctx: TextContext): ConvertedText {
  const mentioned: number[] = [];
  let hasLink = false;
  const out: string[] = [];
  let last = 0;
  for (const m of text.matchAll(CODE)) {
    out.push(convertPlain(text.slice(last, m.index)));
    if (m[1] !== undefined) {
      // Zulip's fences must stand on lines of their own; Slack writes ```code``` anywhere.
      const before = m.index === 0 || text[m.index - 1] === '\n' ? '' : '\n';
      const end = m.index + m[0].length;
      const after = end === text.length || text[end] === '\n' ? '' : '\n';
      const body = unescape(m[1]).replace(/^\n/, '').replace(/\n$/, '');
      out.push(`${before}\`\`\`\n${body}\n\`\`\`${after}`);
    } else {
      out.push('`' + unescape(m[2]) + '`');
    }
    last = m.index + m[0].length;
  }
  out.push(convertPlain(text.slice(last)));
  return { content: out.join(''), mentionedUserIds: [...new Set(mentioned)], hasLink };

  function convertPlain(s: string): string {
    // Slack's <...> sequences become placeholders first, so formatting never reaches into them.
    const held: string[] = [];
    let t = s.replace(ANGLE, (whole, inner: string) => {
      held.push(angle(whole, inner));
      return `\uE000${held.length - 1}\uE001`;
    });
    t = unescape(t);
    t = t.replace(BOLD, (_m, pre: string, body: string) => `${pre}**${body}**`);
    t = t.replace(STRIKE, (_m, pre: string, body: string) => `${pre}~~${body}~~`);
    t = t.replace(ITALIC, (_m, pre: string, body: string) => `${pre}*${body}*`);
    t = t.replace(EMOJI, (whole, name: string) => {
      const e = zulipEmoji(name);
      return e ? `:${e.name}:` : whole;
    });
    return t.replace(PLACEHOLDER, (_m, i: string) => held[Number(i)]);
  }

  function angle(whole: string, inner: string): string {
    const bar = inner.indexOf('|');
    const target = bar < 0 ? inner : inner.slice(0, bar);
    const label = bar < 0 ? null : inner.slice(bar + 1);
    if (target.startsWith('@')) {
      const who = ctx.mention(target.slice(1));
      if (!who) return unescape(whole);
      mentioned.push(who.userId);
      return who.markdown;
    }
    if (target.startsWith('#')) {
      const name = ctx.channelName(target.slice(1));
      if (name !== null) return `#**${name}**`;
      return label !== null ? `#${unescape(label)}` : unescape(whole);
    }
    if (target.startsWith('!')) {
      const command = target.slice(1);
      if (command === 'channel' || command === 'here' || command === 'everyone') return '@**all**';
      // <!subteam^ID|@handle>, <!date^...|fallback>: Slack's own fallback text.
      return label !== null ? unescape(label) : unescape(whole);
    }
    if (/^mailto:/i.test(target)) {
      hasLink = true;
      return unescape(target);
    }
    if (URL_SCHEME.test(target)) {
      hasLink = true;
      return label !== null ? `[${unescape(label)}](${unescape(target)})` : unescape(target);
    }
    return unescape(whole);
  }
}
