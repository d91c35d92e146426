// Integration messages: Slack's Block Kit blocks and legacy attachments as Markdown, as Zulip's
// render_block / render_attachment write them. The result replaces the message's text when it is not
// empty (most people's messages carry only a rich_text block, which repeats the text: skipped).
import type { At } from '../shape';

// Blocks Zulip leaves out: interactive ones, and rich_text (the text field already holds it).
const UNHANDLED = new Set(['call', 'contact_card', 'file', 'table', 'actions', 'rich_text', 'input']);
const KNOWN = new Set([...UNHANDLED, 'context', 'divider', 'header', 'image', 'section', 'condition']);

const text = (t: At): string => {
  const type = t.get('type').string();
  if (type !== 'plain_text' && type !== 'mrkdwn') t.get('type').fail('must be "plain_text" or "mrkdwn"');
  return t.get('text').string();
};

const joinPieces = (pieces: string[], sep: string) =>
  pieces
    .map((p) => p.trim())
    .filter((p) => p !== '')
    .join(sep);

function element(e: At): string {
  if (e.get('type').string() !== 'image') return '';
  return `[${e.get('alt_text').string()}](${e.get('image_url').string()})`;
}

function block(b: At): string {
  const type = b.get('type').string();
  if (!KNOWN.has(type)) b.get('type').fail(`is not a Slack block type (${JSON.stringify(type)})`);
  if (UNHANDLED.has(type)) return '';
  switch (type) {
    case 'context':
      return b.get('elements').present ? joinPieces(b.get('elements').list().map((e) => (e.get('type').string() === 'image' ? element(e) : text(e))), '\n\n') : '';
    case 'divider':
      return '----';
    case 'header':
      return '## ' + text(b.get('text'));
    case 'image': {
      const alt = b.get('title').present ? text(b.get('title')) : b.get('alt_text').string();
      return `[${alt}](${b.get('image_url').string()})`;
    }
    case 'section': {
      const pieces: string[] = [];
      if (b.get('text').present) pieces.push(text(b.get('text')));
      if (b.get('accessory').present) pieces.push(element(b.get('accessory')));
      if (b.get('fields').present) {
        const fields = b.get('fields').list().map(text);
        if (fields.length === 1) pieces.push(fields[0]);
        else {
          // Two columns, as Slack shows them; a table cell can hold neither newlines nor pipes.
          const cells = fields.map((f) => f.replace(/\n/g, ' ').replace(/\|/g, ' '));
          let table = '| | |\n|-|-|\n';
          for (let i = 0; i < cells.length; i += 2) table += `| ${cells[i]} | ${cells[i + 1] ?? ''} |\n`;
          pieces.push(table);
        }
      }
      return joinPieces(pieces, '\n\n');
    }
    default:
      return '';
  }
}

function attachment(a: At): string {
  const pieces: string[] = [];
  const opt = (key: string) => (a.get(key).present ? a.get(key).string() : '');
  const title = opt('title');
  if (title) pieces.push(opt('title_link') ? `## [${title}](${opt('title_link')})` : `## ${title}`);
  if (opt('pretext')) pieces.push(opt('pretext'));
  if (opt('text')) pieces.push(opt('text'));
  if (a.get('fields').present) {
    const fields: string[] = [];
    for (const f of a.get('fields').list()) {
      const t = f.get('title').present ? f.get('title').string() : '';
      const v = f.get('value').present ? f.get('value').string() : '';
      if (t && v) fields.push(`*${t}*: ${v}`);
      else if (t) fields.push(`*${t}*`);
      else if (v) fields.push(v);
    }
    pieces.push(fields.join('\n'));
  }
  if (a.get('blocks').present) pieces.push(...a.get('blocks').list().map(block));
  if (opt('image_url')) pieces.push(`[](${opt('image_url')})`);
  if (opt('footer')) pieces.push(opt('footer'));
  if (a.get('ts').present) {
    // Zulip's datetime_to_global_time: a <time:...> the renderer shows in each reader's time zone.
    const seconds = Math.trunc(a.get('ts').number());
    pieces.push(`<time:${new Date(seconds * 1000).toISOString().replace(/\.000Z$/, '+00:00')}>`);
  }
  return joinPieces(pieces, '\n\n');
}

/** The message's blocks and attachments as Markdown (Zulip's process_slack_block_and_attachment); '' if none. */
export function blocksAndAttachments(message: At): string {
  const pieces: string[] = [];
  if (message.get('blocks').present) pieces.push(...message.get('blocks').list().map(block));
  if (message.get('attachments').present) pieces.push(...message.get('attachments').list().map(attachment));
  return joinPieces(pieces, '\n');
}
