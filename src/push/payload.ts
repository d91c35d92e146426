// Notification payloads, in the shape Zulip's E2EE notifications use (zerver/lib/push_notifications.py,
// /api/mobile-notifications), plus the legacy `event` key the older clients switch on. The whole
// object is encrypted per device; only push_key_id and the ciphertext leave the server.
import type { App } from '../app';
import type { MessageRow } from '../lib/messages';
import { findRealm } from '../lib/realm';
import type { StreamRow } from '../lib/streams';
import { absoluteUrl } from '../lib/avatars';
import { avatarUrl, type UserRow } from '../lib/users';

/** Longest content snippet, in code points (Zulip truncates at 200 and adds an ellipsis). */
const SNIPPET = 200;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#x27': "'", nbsp: ' ' };

/** Plain text of rendered message HTML, truncated for a notification. */
export function contentSnippet(html: string): string {
  const text = html
    .replace(/<(br|\/p|\/li|\/blockquote|\/h[1-6])\b[^>]*>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x?[0-9a-fA-F]+|\w+);/g, (m, e: string) => {
      if (Object.hasOwn(ENTITIES, e)) return ENTITIES[e];
      if (e.startsWith('#x') || e.startsWith('#X')) return String.fromCodePoint(parseInt(e.slice(2), 16));
      if (e.startsWith('#')) return String.fromCodePoint(Number(e.slice(1)));
      return m;
    })
    .replace(/[ \t]+/g, ' ')
    .replace(/\s*\n\s*/g, '\n')
    .trim();
  const chars = [...text];
  return chars.length > SNIPPET ? chars.slice(0, SNIPPET).join('') + '…' : text;
}

/** Fields every notification carries. */
export function basePayload(app: App, user: UserRow): Record<string, unknown> {
  return {
    realm_name: findRealm(app.db)?.name ?? '',
    realm_url: app.publicUrl,
    realm_uri: app.publicUrl,
    server: app.publicUrl,
    realm_id: user.realm_id,
    user_id: user.id,
  };
}

export type PushTrigger = 'direct_message' | 'mention' | 'stream_wildcard_mention' | 'topic_wildcard_mention' | 'stream' | 'followed_topic';

/** The payload telling `user` about message `m`. */
export function messagePayload(
  app: App,
  user: UserRow,
  m: MessageRow,
  sender: UserRow,
  stream: StreamRow | null,
  directUserIds: number[] | null,
  trigger: PushTrigger,
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    ...basePayload(app, user),
    event: 'message',
    type: 'message',
    trigger,
    message_id: m.id,
    sender_id: sender.id,
    sender_email: sender.email,
    sender_full_name: sender.full_name,
    // zulip-compat: absolute (absolute_avatar_url): the phone has no base URL for a notification.
    sender_avatar_url: absoluteUrl(app.publicUrl, avatarUrl(sender)),
    time: m.date_sent,
    content: contentSnippet(m.rendered_content),
  };
  if (stream) {
    out.recipient_type = 'channel';
    out.channel_id = stream.id;
    out.channel_name = stream.name;
    out.topic = m.topic;
  } else {
    out.recipient_type = 'direct';
    // Group conversations name everyone, so the app can thread them (Zulip: recipient_user_ids, FL 429).
    if (directUserIds && directUserIds.length > 2) out.recipient_user_ids = [...directUserIds].sort((a, b) => a - b);
  }
  return out;
}

/** The payload of POST /mobile_push/test_notification. */
export function testPayload(app: App, user: UserRow, nowSeconds: number): Record<string, unknown> {
  return { ...basePayload(app, user), event: 'test', type: 'test', time: nowSeconds };
}
