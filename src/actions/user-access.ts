// Who hears what about a user: the realm_user events that follow from user access
// (can_access_all_users_group, lib/access.ts). Each is written the way Zulip's do_send_messages
// announces them, and runs inside the caller's write (events go out after the commit).
import type { App } from '../app';
import { accessibleUsers } from '../lib/access';
import { formatUser, isBot, profileData, type UserRow } from '../lib/users';

/**
 * The users each participant of a direct-message conversation would newly gain access to by it
 * (Zulip's get_recipients_for_user_creation_events): participant id → the others it cannot access
 * yet. Computed before the conversation exists; empty unless the organization limits access.
 */
export function accessGainedByConversation(app: App, sender: UserRow, participants: readonly UserRow[]): Map<number, UserRow[]> {
  const gained = new Map<number, UserRow[]>();
  const everyone = participants.some((u) => u.id === sender.id) ? participants : [...participants, sender];
  for (const viewer of everyone) {
    // The sender could access every recipient (checkSenderCanAccessRecipients), and bots see everyone.
    if (viewer.id === sender.id || isBot(viewer)) continue;
    const access = accessibleUsers(app.db, viewer);
    if (access === null) continue;
    const fresh = everyone.filter((u) => u.id !== viewer.id && !isBot(u) && !access.has(u.id));
    if (fresh.length > 0) gained.set(viewer.id, fresh);
  }
  return gained;
}

/** Announces each newly accessible user to whoever gained them, as a realm_user add of the full record. */
export function announceAccessGained(app: App, gained: ReadonlyMap<number, readonly UserRow[]>): void {
  for (const [viewerId, users] of gained) {
    for (const u of users) {
      const person = formatUser(u, { profileData: profileData(app.db, u.id) });
      app.events.send({ type: 'realm_user', op: 'add', person }, [viewerId]);
    }
  }
}
