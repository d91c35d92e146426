// The no-markup floor of a send (bench/messages.ts send --floor): a copy of the bundle
// (dist/parley.cjs) whose renderMessage only HTML-escapes the content into one <p>, the cheapest
// rendering that is still correct HTML. No mention, link or emoji is found, so a send on it does only
// what every send does, for the content's length: whatever renderer Parley had, a send of the same
// content could not cost less. Made by the benchmark (as bench/foundation.ts part d makes its log
// floor), so production code has no switch for it. Written next to the bundle, so that its lazy
// chunks (dist/lazy/) load as the bundle's do.
import fs from 'node:fs';
import path from 'node:path';

// Appended to the copy: a function declaration, so it is defined before the bundle's code runs.
const FLOOR_RENDER = `
function __benchFloorRender(content) {
  const html = /[&<>"]/.test(content) ? content.replace(/[&<>"]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&quot;')) : content;
  return { html: '<p>' + html + '</p>', mentionedUserIds: new Set(), mentionedGroupIds: new Set(), wildcardChannel: false, wildcardTopic: false, hasLink: false, hasImage: false, hasAttachment: false, linkedUploadPaths: [] };
}
`;

/** Writes the floor copy of `bundle` and returns its path; throws when the bundle no longer has the renderMessage it patches. */
export function renderFloorBundle(bundle: string): string {
  const text = fs.readFileSync(bundle, 'utf8');
  const head = /\nfunction renderMessage\((\w+), (\w+), (\w+), (\w+)\) \{\n/;
  const m = head.exec(text);
  if (!m || text.indexOf('\nfunction renderMessage(', (m.index ?? 0) + 1) !== -1) {
    throw new Error(`${bundle} has no single function renderMessage(app, realmId, content, sender): the floor's patch needs updating`);
  }
  const patched = text.replace(head, `${m[0]}  return __benchFloorRender(${m[3]});\n`);
  const file = path.join(path.dirname(bundle), '.bench-render-floor.cjs');
  fs.writeFileSync(file, `${patched}\n${FLOOR_RENDER}`);
  return file;
}
