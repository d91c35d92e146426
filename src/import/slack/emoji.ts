// Slack's emoji names to Zulip's. Slack names emoji as iamcal's emoji-data does; Zulip's Slack importer
// goes name → code point → Zulip's name for it, and so does this: emoji-names.json (made by
// scripts/gen-slack-emoji.mjs) holds the Slack names that are not Zulip's name for the same emoji;
// any other name is looked up in Zulip's own table and given its canonical name.
import slackNames from './emoji-names.json';
import { emojiNameForCode, unicodeEmojiCode } from '../../lib/emoji';

const TABLE: Readonly<Record<string, string>> = slackNames;

/** Zulip's name and code for Slack's emoji `name` (skin tones dropped, as Zulip does), or null if Zulip has no such emoji. */
export function zulipEmoji(slackName: string): { name: string; code: string } | null {
  const base = slackName.split('::')[0];
  const name = Object.hasOwn(TABLE, base) ? TABLE[base] : base;
  const code = unicodeEmojiCode(name);
  if (code === null) return null;
  return { name: emojiNameForCode(code) ?? name, code };
}
