// Which address of a user a viewer may read: the one home of email_address_visibility (a personal
// setting since Zulip 7.0; Zulip's can_access_delivery_email and get_display_email_address).
//
// A user has two addresses on the wire, as in Zulip:
// - `email`, the API email: the same for every viewer, and the one in everything that names a user
//   by address (user objects, messages' sender_email and display_recipient, presence, typing,
//   reactions' and bots' owners, events). It is the real address while the setting is "everyone" and
//   the placeholder user{id}@{fake domain} otherwise. It is stored in user.email (kept by
//   apiEmailOf whenever the setting or the real address changes), so every reader of that column gets
//   it right without knowing about visibility; lookups by API email (direct-message recipients,
//   narrows, subscription principals) find a hidden user by the placeholder only, as in Zulip.
// - `delivery_email`, the real address (user.delivery_email): shown only to viewers
//   canAccessDeliveryEmail allows, null to the rest. Logging in and Basic credentials use it.
//
// Gravatar URLs are built from the real address (Zulip does the same), so a client cannot build one
// for a hidden user: avatar_url is sent even to client_gravatar clients (mayClientComputeAvatar).
import type { App } from '../app';
import { ROLE } from './roles';
import type { UserRow } from './users';
import { isValidEmail } from './validate';

/** Zulip's EMAIL_ADDRESS_VISIBILITY_* values of the email_address_visibility setting. */
export const EMAIL_ADDRESS_VISIBILITY = { EVERYONE: 1, MEMBERS: 2, ADMINS: 3, NOBODY: 4, MODERATORS: 5 } as const;

type Viewer = Pick<UserRow, 'id' | 'role'>;
type Target = Pick<UserRow, 'id' | 'email_address_visibility' | 'bot_type'>;

const V = EMAIL_ADDRESS_VISIBILITY;
// Zulip's UserProfile.ROLE_TO_ACCESSIBLE_EMAIL_ADDRESS_VISIBILITY_IDS: the settings under which a
// viewer of each role may read another user's real address.
const READABLE_BY_ROLE: Readonly<Record<number, readonly number[]>> = {
  [ROLE.OWNER]: [V.ADMINS, V.MODERATORS, V.MEMBERS, V.EVERYONE],
  [ROLE.ADMINISTRATOR]: [V.ADMINS, V.MODERATORS, V.MEMBERS, V.EVERYONE],
  [ROLE.MODERATOR]: [V.MODERATORS, V.MEMBERS, V.EVERYONE],
  [ROLE.MEMBER]: [V.MEMBERS, V.EVERYONE],
  [ROLE.GUEST]: [V.EVERYONE],
};

/** A user's email_address_visibility; bots always show their address (Zulip gives them "everyone"). */
function visibilityOf(u: Pick<UserRow, 'email_address_visibility' | 'bot_type'>): number {
  return u.bot_type !== null ? V.EVERYONE : Number(u.email_address_visibility ?? V.EVERYONE);
}

/** Whether the user's real address is their API email (email_address_visibility "everyone"). */
export function isEmailPublic(u: Pick<UserRow, 'email_address_visibility' | 'bot_type'>): boolean {
  return visibilityOf(u) === V.EVERYONE;
}

/** Zulip's can_access_delivery_email, for a visibility value (the target's current one unless given). */
export function canAccessDeliveryEmail(viewer: Viewer, target: Target, visibility = visibilityOf(target)): boolean {
  if (viewer.id === target.id) return true;
  return (READABLE_BY_ROLE[viewer.role] ?? []).includes(visibility);
}

/** The delivery_email `viewer` reads for `target`: the real address, or null. */
export function deliveryEmailFor(viewer: Viewer, target: Target & Pick<UserRow, 'delivery_email'>): string | null {
  return canAccessDeliveryEmail(viewer, target) ? target.delivery_email : null;
}

/**
 * The domain of placeholder addresses (Zulip's get_fake_email_domain): the host of the public URL when
 * it can end an address, else localhost.localdomain (an IPv6 literal, a name without a dot).
 */
export function fakeEmailDomain(app: App): string {
  let host = '';
  try {
    host = new URL(app.publicUrl).hostname;
  } catch {
    // keep the fallback
  }
  return host !== '' && isValidEmail(`user@${host}`) ? host : 'localhost.localdomain';
}

/** The placeholder address of user `id` (Zulip's user{id}@{fake domain}). */
export function placeholderEmail(app: App, id: number): string {
  return `user${id}@${fakeEmailDomain(app)}`;
}

/** The API email `u` should have (the value of user.email): the real address when public, else the placeholder. */
export function apiEmailOf(app: App, u: Pick<UserRow, 'id' | 'delivery_email' | 'email_address_visibility' | 'bot_type'>): string {
  return isEmailPublic(u) ? u.delivery_email : placeholderEmail(app, u.id);
}

/**
 * apiEmailOf as an SQL expression over a `user` row, with the placeholder domain as its one parameter
 * (for bulk updates: see syncApiEmails).
 */
export const API_EMAIL_SQL = `CASE WHEN bot_type IS NOT NULL OR email_address_visibility = ${V.EVERYONE} THEN delivery_email ELSE 'user' || id || '@' || ? END`;

/**
 * The user id a placeholder address of this server names (Zulip's get_dummy_email_address_for_display_regex),
 * or null: lookups by address accept it from anyone.
 */
export function placeholderUserId(app: App, email: string): number | null {
  const domain = fakeEmailDomain(app).toLowerCase();
  const m = /^user(\d+)@(.+)$/i.exec(email.trim());
  if (!m || m[2].toLowerCase() !== domain) return null;
  const id = Number(m[1]);
  return Number.isSafeInteger(id) ? id : null;
}

/** Whether a client may build `u`'s Gravatar URL itself (client_gravatar): only from a public address. */
export function mayClientComputeAvatar(u: Pick<UserRow, 'avatar_source' | 'email_address_visibility' | 'bot_type'>): boolean {
  return u.avatar_source === 'G' && isEmailPublic(u);
}
