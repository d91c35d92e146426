// Rendering messages and descriptions for an organization: builds the markdown renderer's lookup
// context from the database (users, groups, channels, linkifiers) and calls it.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { renderMarkdown, type RenderContext, type RenderResult } from './markdown';

/** The renderer's view of the organization: lazy lookups through prepared statements. */
export function renderContext(app: App, realmId: number): RenderContext {
  const db = app.db;
  return {
    userByName: (name) =>
      (stmt(db, 'SELECT id, full_name FROM user WHERE realm_id = ? AND full_name = ? COLLATE NOCASE AND is_active = 1 ORDER BY id LIMIT 1').get(
        realmId,
        name,
      ) as { id: number; full_name: string } | undefined) ?? null,
    userById: (id) =>
      (stmt(db, 'SELECT id, full_name FROM user WHERE realm_id = ? AND id = ?').get(realmId, id) as { id: number; full_name: string } | undefined) ??
      null,
    groupByName: (name) =>
      (stmt(db, 'SELECT id, name FROM user_group WHERE realm_id = ? AND name = ? AND named = 1 AND deactivated = 0').get(realmId, name) as
        | { id: number; name: string }
        | undefined) ?? null,
    streamByName: (name) =>
      (stmt(db, 'SELECT id, name FROM stream WHERE realm_id = ? AND name = ? COLLATE NOCASE').get(realmId, name) as
        | { id: number; name: string }
        | undefined) ?? null,
    linkifiers: stmt(db, 'SELECT pattern, url_template FROM linkifier WHERE realm_id = ? ORDER BY "order", id').all(realmId) as {
      pattern: string;
      url_template: string;
    }[],
    realmUrl: app.publicUrl,
  };
}

// Precomputed HTML for known plain contents, per App (the demo seed uses it so that start-up does no
// Markdown work: loading and warming the renderer costs tens of ms). Only for contents without
// mentions, links or images; test/clients/demo-render.test.ts checks it against the renderer.
const prerendered = new WeakMap<App, ReadonlyMap<string, string>>();

/** Sets (or with null clears) the precomputed HTML renderMessage uses for `app`. */
export function setPrerendered(app: App, html: ReadonlyMap<string, string> | null): void {
  if (html) prerendered.set(app, html);
  else prerendered.delete(app);
}

/** Renders message content in the organization's context. */
export function renderMessage(app: App, realmId: number, content: string): RenderResult {
  const html = prerendered.get(app)?.get(content);
  if (html !== undefined) {
    return { html, mentionedUserIds: new Set(), mentionedGroupIds: new Set(), wildcardChannel: false, wildcardTopic: false, hasLink: false, hasImage: false, hasAttachment: false, linkedUploadPaths: [] };
  }
  return renderMarkdown(content, renderContext(app, realmId));
}

/** Renders a description (channel, profile field) to HTML. */
export function renderPlain(app: App, realmId: number, text: string): string {
  if (text === '') return '';
  return renderMessage(app, realmId, text).html;
}
