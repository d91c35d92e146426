// Who hears what about a user: the realm_user events that follow from user access
// (can_access_all_users_group, lib/access.ts) and from address visibility (email_address_visibility,
// lib/user-emails.ts). Each is written the way Zulip's do_create_user / do_change_user_setting /
// do_change_user_delivery_email / do_send_messages announce them, and runs inside the caller's write
// (events go out after the commit).
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { accessibleUsers, canAccessUser, inaccessibleUser, userIdsWhoCanAccess } from '../lib/access';
import { nowSeconds } from '../lib/clock';
import { API_EMAIL_SQL, apiEmailOf, canAccessDeliveryEmail, EMAIL_ADDRESS_VISIBILITY, fakeEmailDomain } from '../lib/user-emails';
import { avatarUrl, findUserById, formatUser, isBot, isoTime, profileData, type UserRow } from '../lib/users';

type Person = Record<string, unknown>;

function activeUsers(app: App, realmId: number): UserRow[] {
  return stmt(app.db, 'SELECT * FROM user WHERE realm_id = ? AND is_active = 1 ORDER BY id').all(realmId) as UserRow[];
}

/** Sends `person` (an update) to `userIds` after the commit. */
function sendUpdate(app: App, person: Person, userIds: () => readonly number[]): void {
  app.batch.onCommit(() => app.events.send({ type: 'realm_user', op: 'update', person }, userIds()));
}

/**
 * Zulip's notify_created_user: the new user's record to every active user as they may see it (with
 * delivery_email only for those allowed to read it), and an "Unknown user" placeholder, marked
 * inaccessible_user, to those who cannot access them (a new user shares nothing with a guest yet).
 */
export function announceUserCreated(app: App, row: UserRow): void {
  const viewers = activeUsers(app, row.realm_id);
  // Who may access the new user is decided now, inside the write; the events follow the commit.
  const hiddenFrom = new Set(viewers.filter((v) => !canAccessUser(app.db, v, row)).map((v) => v.id));
  const hidden = [...hiddenFrom];
  const shown = viewers.filter((v) => !hiddenFrom.has(v.id));
  const withAddress = shown.filter((v) => canAccessDeliveryEmail(v, row));
  const withoutAddress = shown.filter((v) => !canAccessDeliveryEmail(v, row));
  app.batch.onCommit(() => {
    for (const group of [withAddress, withoutAddress]) {
      if (group.length > 0) app.events.send({ type: 'realm_user', op: 'add', person: formatUser(row, group[0]) }, group.map((v) => v.id));
    }
    if (hidden.length > 0) {
      const person = inaccessibleUser(row.id, fakeEmailDomain(app), isoTime(nowSeconds(app.clock)));
      app.events.send({ type: 'realm_user', op: 'add', person, inaccessible_user: true }, hidden);
    }
  });
}

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
    const viewer = findUserById(app.db, users[0].realm_id, viewerId) as UserRow;
    for (const u of users) {
      const person = formatUser(u, viewer, { profileData: profileData(app.db, u.id) });
      app.events.send({ type: 'realm_user', op: 'add', person }, [viewerId]);
    }
  }
}

/** The avatar of `u` changed as clients see it (Zulip's notify_avatar_url_change). */
export function announceAvatar(app: App, u: UserRow): void {
  const person = { user_id: u.id, avatar_source: u.avatar_source, avatar_url: avatarUrl(u), avatar_url_medium: avatarUrl(u, true), avatar_version: u.avatar_version };
  sendUpdate(app, person, () => userIdsWhoCanAccess(app.db, u));
}

/**
 * After `user`'s email_address_visibility changed from `oldValue` (the column already holds the new
 * one): Zulip's send_delivery_email_update_events (delivery_email to each user who gains or loses the
 * address), and, when the change crosses "everyone", the new API email and the avatar (which a
 * client_gravatar client may no longer, or may now, compute itself).
 */
export function emailVisibilityChanged(app: App, user: UserRow, oldValue: number): void {
  const fresh = findUserById(app.db, user.realm_id, user.id) as UserRow;
  const newValue = fresh.email_address_visibility;
  const audience = new Set(userIdsWhoCanAccess(app.db, fresh));
  const viewers = activeUsers(app, fresh.realm_id).filter((v) => audience.has(v.id));
  const gained: number[] = [];
  const lost: number[] = [];
  for (const v of viewers) {
    const before = canAccessDeliveryEmail(v, fresh, oldValue);
    const after = canAccessDeliveryEmail(v, fresh, newValue);
    if (before !== after) (after ? gained : lost).push(v.id);
  }
  if (gained.length > 0) sendUpdate(app, { user_id: fresh.id, delivery_email: fresh.delivery_email }, () => gained);
  if (lost.length > 0) sendUpdate(app, { user_id: fresh.id, delivery_email: null }, () => lost);
  const everyone = EMAIL_ADDRESS_VISIBILITY.EVERYONE;
  if (oldValue !== everyone && newValue !== everyone) return;
  const email = apiEmailOf(app, fresh);
  stmt(app.db, 'UPDATE user SET email = ? WHERE id = ?').run(email, fresh.id);
  sendUpdate(app, { user_id: fresh.id, new_email: email }, () => userIdsWhoCanAccess(app.db, fresh));
  announceAvatar(app, fresh);
}

/**
 * After `user`'s role changed from `oldRole`: the addresses they may now read, or no longer read, of
 * the users they can access. Not in Zulip (its clients keep what they had until they reload); sent so
 * a client's state matches a fresh /register, which is what the web client's verify tests compare.
 */
export function roleChanged(app: App, user: UserRow, oldRole: number): void {
  const fresh = findUserById(app.db, user.realm_id, user.id) as UserRow;
  if (fresh.role === oldRole) return;
  const before = { id: fresh.id, role: oldRole };
  const access = accessibleUsers(app.db, fresh);
  for (const other of activeUsers(app, fresh.realm_id)) {
    if (other.id === fresh.id || (access !== null && !access.has(other.id))) continue;
    const now = canAccessDeliveryEmail(fresh, other);
    if (now === canAccessDeliveryEmail(before, other)) continue;
    sendUpdate(app, { user_id: other.id, delivery_email: now ? other.delivery_email : null }, () => [fresh.id]);
  }
}

/**
 * Zulip's do_change_user_delivery_email: the real address changes; the API email follows it only while
 * the address is public. The new address goes to those who may read it; a Gravatar avatar changes
 * with it; the new API email, when it changed, to everyone who can access the user.
 */
export function changeDeliveryEmail(app: App, user: UserRow, newEmail: string): void {
  const current = findUserById(app.db, user.realm_id, user.id) as UserRow;
  const updated = { ...current, delivery_email: newEmail } as UserRow;
  const email = apiEmailOf(app, updated);
  stmt(app.db, 'UPDATE user SET email = ?, delivery_email = ? WHERE id = ?').run(email, newEmail, user.id);
  updated.email = email;
  const readers = () => {
    const audience = new Set(userIdsWhoCanAccess(app.db, updated));
    return activeUsers(app, updated.realm_id)
      .filter((v) => audience.has(v.id) && canAccessDeliveryEmail(v, updated))
      .map((v) => v.id);
  };
  sendUpdate(app, { user_id: updated.id, delivery_email: newEmail }, readers);
  if (updated.avatar_source === 'G') announceAvatar(app, updated);
  if (email !== current.email) sendUpdate(app, { user_id: updated.id, new_email: email }, () => userIdsWhoCanAccess(app.db, updated));
}

/**
 * Brings every stored API email in line with its user's setting and the current placeholder domain
 * (on start: a database from before visibility was applied, or a public URL whose host changed).
 * Returns how many users changed. No events: nobody is connected yet.
 */
export function syncApiEmails(app: App): number {
  const domain = fakeEmailDomain(app);
  return app.batch.write(
    () => stmt(app.db, `UPDATE user SET email = ${API_EMAIL_SQL} WHERE email IS NOT ${API_EMAIL_SQL}`).run(domain, domain).changes,
  );
}
