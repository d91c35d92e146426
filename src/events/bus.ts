// Event delivery seam. Actions call send() from tx.onCommit, so only committed changes are announced.
// Listeners (the event queues of src/events/registry.ts, tests) receive each event with its recipients.
//
// An event is sent once, in Zulip's wire shape (without `id`), to the ids of the users allowed to see
// it. The registry adapts it per queue (event_types, narrow, client_capabilities), so actions send the
// modern form only:
// - `user_settings` op update: send only this; clients without `user_settings_object` also get the
//   legacy `update_display_settings` / `update_global_notifications` event, built by the registry.
// - `delete_message`: send the bulk form (`message_ids`); clients without `bulk_message_deletion`
//   get one event per id (`message_id`).
// - `presence`: send the legacy fields (`user_id`, `email`, `server_timestamp`, `presence`) AND the
//   modern `presences` map ({[user_id]: {active_timestamp, idle_timestamp}}); each queue gets
//   modern (simplified_presence_events), slim (no email) or legacy.
// - Topics: send "" for the empty topic; clients without `empty_topic_name` see the realm's
//   empty_topic_display_name (message `subject`, `topic`, `orig_subject`, `topic_name`, and the
//   `message_details` of update_message_flags/remove/read).
// - `realm_emoji`: send the per-emoji form (`add` with `emoji`, `update_one` with `emoji_id` and
//   `data`) with the delivery key `legacy_realm_emoji` (every emoji, keyed by id): clients without
//   `individual_emoji_changes` get `{op: 'update', realm_emoji: legacy_realm_emoji}` instead.
// - Archiving a channel: send the `stream` update of `is_archived` (true) AND the `stream` delete with
//   the delivery key `for_archiving: true`; unarchiving: the update (false) AND the `stream` create
//   with `for_unarchiving: true`. Clients with `archived_channels` get the update only, the others
//   the delete / create only.
// - `realm_user` add may carry `inaccessible_user: true` (dropped for user_list_incomplete clients);
//   a `user_group` update renaming a deactivated group carries top-level `deactivated: true`.
//
// Delivery keys: top-level keys that steer delivery and are stripped before any client sees them.
// - `flags_by_user: Record<userId, string[]>` (message, update_message, ...): each recipient's queues
//   get `flags: flags_by_user[their id] ?? []` (message flags as Zulip names them: read, starred,
//   mentioned, ...). Message events always carry `flags`.
// - `raw_content: string` (message): the Markdown source. `message.content` is the rendered HTML
//   (content_type text/html); queues registered with apply_markdown=false get raw_content instead
//   (content_type text/x-markdown). `message.avatar_url` is the full URL; client_gravatar queues get
//   null for Gravatar URLs, unless `sender_email_hidden: true` (message) says the client cannot
//   compute it (the sender hides their address: lib/user-emails.ts).
// - `public_stream_realm_id: number` (message): set when the message is in a public channel; queues
//   of that realm registered with all_public_streams or a narrow get it too (flags []), filtered by
//   their narrow, as in Zulip.
// - `sender_queue_id: string` + `local_message_id: string` (message): the sender's queue (and only it)
//   gets `local_message_id`, so the client can match its local echo.

export type ParleyEvent = { type: string; [key: string]: unknown };
export type EventListener = (event: ParleyEvent, userIds: readonly number[]) => void;

export class EventBus {
  private listeners = new Set<EventListener>();

  /** Subscribes to every sent event; returns the unsubscribe function. */
  listen(fn: EventListener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Delivers `event` to the queues of `userIds`. */
  send(event: ParleyEvent, userIds: readonly number[]): void {
    for (const fn of this.listeners) fn(event, userIds);
  }
}
