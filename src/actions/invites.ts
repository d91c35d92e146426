// Invitations: sending email invitations and creating reusable links (with Zulip's role ceiling,
// channel and group permission rules and limits), revoking and resending them, and accepting one
// through the sign-up page (account, channels, groups, welcome message, referrer notice). A reusable
// link does not prove an address: signing up through one emails a link to finish (a registration,
// an invitation to that address with the link's terms), as Zulip confirms the address first.
// check* validates inside the write; do* writes and queues events and emails with onCommit.
import type { App } from '../app';
import { stmt } from '../db/stmt';
import { errors, JsonableError } from '../http/errors';
import { rateLimitHeaders } from '../http/ratelimit';
import { nowSeconds } from '../lib/clock';
import { sendEmail } from '../lib/email';
import { isUserInGroup } from '../lib/groups';
import {
  countRecentInvitations,
  findInvitation,
  findInvitationByKey,
  INVITE_STATUS,
  invitationGroupIds,
  invitationLink,
  invitationState,
  invitationStreamIds,
  newInvitationKey,
  type InvitationRow,
  type InvitationState,
} from '../lib/invites';
import { getRealmById, type RealmRow } from '../lib/realm';
import { ROLE } from '../lib/roles';
import { findStreamById, findSubscription, formatSubscription, isPublic, subscriberIds, accessStreamById, canAccessStreamMetadata, type StreamRow } from '../lib/streams';
import { notificationBot, welcomeBot } from './system-bots';
import { findNamedGroup } from '../lib/user-groups';
import { findUserByDeliveryEmail, findUserById, isAdmin, isOwner, type UserRow } from '../lib/users';
import { isDeliverableEmail, realmEmailProblem } from '../lib/validate';
import { doSendMessage } from './messages';
import { accessGroupForUpdate, requireMemberOrAdmin } from './user-groups';
import { activeUserIds, doCreateUser } from './users';

export const MAX_WELCOME_MESSAGE_LENGTH = 8000;
/** Zulip's INVITES_MIN_USER_AGE_DAYS: in an organization anyone may join, new accounts wait this long. */
const MIN_INVITER_AGE_SECONDS = 3 * 86400;

export interface InviteSpec {
  inviteeEmails: string;
  /** null: never expires; undefined: the server setting. */
  expiresInMinutes: number | null | undefined;
  inviteAs: number;
  streamIds: number[];
  groupIds: number[] | undefined;
  includeRealmDefaultSubscriptions: boolean;
  notifyReferrerOnJoin: boolean;
  welcomeMessageCustomText: string | null;
}

type SkipReason = [string, string, boolean];

function realmOf(app: App, user: UserRow): RealmRow {
  return getRealmById(app.db, user.realm_id) as RealmRow;
}

/**
 * The role ceiling: owners are invited by owners only (UNAUTHORIZED_PRINCIPAL); otherwise nobody
 * invites a role more privileged than their own (the spec: a moderator may invite moderators).
 */
function checkInviteAs(user: UserRow, inviteAs: number): void {
  if (inviteAs === ROLE.OWNER && !isOwner(user)) throw errors.ownerRequired();
  // zulip-compat: Zulip raises this one as a plain JsonableError (BAD_REQUEST), not
  // OrganizationAdministratorRequired; its text is the same for every role above the caller's.
  if (inviteAs < user.role) throw errors.badRequest('Must be an organization administrator');
}

/** Requested default channels, and channels the caller may add subscribers to (Zulip FL 342). */
function checkStreamsForInvite(app: App, user: UserRow, realm: RealmRow, streamIds: number[]): number[] {
  const streams: StreamRow[] = [];
  for (const id of streamIds) {
    try {
      streams.push(accessStreamById(app.db, user, id));
    } catch (err) {
      if (!(err instanceof JsonableError)) throw err;
      throw errors.badRequest('Invalid channel ID {channel_id}. No invites were sent.', { channel_id: id });
    }
  }
  const defaults = new Set(
    (stmt(app.db, 'SELECT stream_id FROM default_stream WHERE realm_id = ?').all(user.realm_id) as { stream_id: number }[]).map((r) => r.stream_id),
  );
  for (const s of streams) {
    if (defaults.has(s.id) || canAddSubscribers(app, user, realm, s)) continue;
    throw errors.badRequest('You do not have permission to subscribe other users to channels.');
  }
  return [...new Set(streams.map((s) => s.id))];
}

/** Zulip's can-add-subscribers rule for one channel. */
function canAddSubscribers(app: App, user: UserRow, realm: RealmRow, s: StreamRow): boolean {
  if (isAdmin(user)) return true;
  if (isUserInGroup(app.db, user.id, s.can_administer_channel_group)) return true;
  if (isUserInGroup(app.db, user.id, s.can_add_subscribers_group)) return true;
  const subscribed = findSubscription(app.db, user.id, s.id)?.active === 1;
  return (isPublic(s) || subscribed) && isUserInGroup(app.db, user.id, realm.can_add_subscribers_group as number);
}

/** Groups the new user will join: each must allow the caller to add members. */
function checkGroupsForInvite(app: App, user: UserRow, groupIds: number[] | undefined): number[] {
  return [...new Set((groupIds ?? []).map((id) => accessGroupForUpdate(app, user, id, 'can_add_members_group').id))];
}

/** Checks shared by email invitations and links, in Zulip's order. */
function checkInviteCommon(app: App, user: UserRow, realm: RealmRow, spec: Omit<InviteSpec, 'inviteeEmails'>) {
  checkInviteAs(user, spec.inviteAs);
  return {
    streamIds: checkStreamsForInvite(app, user, realm, spec.streamIds),
    groupIds: checkGroupsForInvite(app, user, spec.groupIds),
  };
}

function checkWelcomeText(user: UserRow, text: string | null): void {
  // Non-administrators' invitations always use the organization's default text.
  if (text !== null && !isAdmin(user)) throw errors.badRequest('Must be an organization administrator');
}

/** Splits the invitee field on commas and newlines; "Name <email>" gives email. Order kept, duplicates dropped. */
export function parseInviteeEmails(raw: string): string[] {
  const out: string[] = [];
  for (const part of raw.split(/[,\n]/)) {
    const named = /<(.*)>/.exec(part);
    const email = (named ? named[1] : part).trim();
    if (!out.includes(email)) out.push(email);
  }
  return out;
}

/** Zulip's validate_email_is_valid for the realm: syntax, then the allowed domains. */
function emailProblem(app: App, realm: RealmRow, email: string): string | null {
  return realmEmailProblem(app.db, realm, email);
}

/** The organization's daily cap on invitation emails (Zulip's realm.max_invites); null: none. */
function maxInvites(realm: RealmRow): number | null {
  try {
    const extra = JSON.parse(String(realm.extra_settings ?? '{}')) as { max_invites?: unknown };
    return typeof extra.max_invites === 'number' ? extra.max_invites : null;
  } catch {
    return null;
  }
}

function checkInviteLimit(app: App, realm: RealmRow, count: number): void {
  const max = maxInvites(realm);
  if (max === null) return;
  const now = nowSeconds(app.clock);
  if (countRecentInvitations(app.db, realm.id, now - 86400) + count > max) {
    throw errors.invitationFailed(
      'To protect users, Zulip limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.',
      { sentInvitations: false, dailyLimitReached: true },
    );
  }
}

/** Who hears invites_changed: administrators and the invitation's creator. */
function notifyInvitesChanged(app: App, realmId: number, referrerId: number): void {
  app.batch.onCommit(() => {
    const ids = (
      stmt(app.db, 'SELECT id FROM user WHERE realm_id = ? AND is_active = 1 AND bot_type IS NULL AND (role <= 200 OR id = ?)').all(
        realmId,
        referrerId,
      ) as { id: number }[]
    ).map((r) => r.id);
    app.events.send({ type: 'invites_changed' }, ids);
  });
}

function expiresAt(app: App, now: number, minutes: number | null | undefined): number | null {
  const m = minutes === undefined ? app.config.invitationValidityMinutes : minutes;
  return m === null ? null : now + m * 60;
}

function insertInvitation(
  app: App,
  user: UserRow,
  fields: { email: string | null; multiuse: boolean; expires: number | null; now: number; streamIds: number[]; groupIds: number[] },
  spec: Omit<InviteSpec, 'inviteeEmails' | 'streamIds' | 'groupIds'>,
): InvitationRow {
  const key = newInvitationKey();
  const id = Number(
    stmt(
      app.db,
      `INSERT INTO invitation (realm_id, email, referrer_id, invited_as, confirmation_key, created, expires, status, multiuse,
         include_realm_default_subscriptions, notify_referrer_on_join, welcome_message_custom_text, stream_ids, group_ids)
       VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?)`,
    ).run(
      user.realm_id,
      fields.email,
      user.id,
      spec.inviteAs,
      key,
      fields.now,
      fields.expires,
      fields.multiuse ? 1 : 0,
      spec.includeRealmDefaultSubscriptions ? 1 : 0,
      spec.notifyReferrerOnJoin ? 1 : 0,
      spec.welcomeMessageCustomText,
      JSON.stringify(fields.streamIds),
      JSON.stringify(fields.groupIds),
    ).lastInsertRowid,
  );
  return findInvitation(app.db, user.realm_id, id, fields.multiuse) as InvitationRow;
}

function formatExpiry(expires: number | null): string {
  if (expires === null) return 'This link does not expire.';
  return `This link expires on ${new Date(expires * 1000).toUTCString()}.`;
}

/** Queues the invitation email (sent after commit). */
function queueInvitationEmail(app: App, realm: RealmRow, referrer: UserRow, row: InvitationRow): void {
  const link = invitationLink(app, row.confirmation_key);
  const text =
    `Hi there,\n\n${referrer.full_name} (${referrer.delivery_email}) wants you to join them on Parley, ` +
    `in the organization "${realm.name}".\n\nTo get started, visit the link below:\n\n    ${link}\n\n` +
    `${formatExpiry(row.expires)}\n\nIf you were not expecting this invitation, you can ignore this email.\n`;
  const email = row.email as string;
  app.batch.onCommit(() => {
    sendEmail(app, { to: email, subject: `${referrer.full_name} invited you to join ${realm.name}`, text });
  });
}

/**
 * POST /invites. Invalid addresses stop everything; addresses that already have accounts are skipped
 * and reported with INVITATION_FAILED (sent_invitations true) after the others were invited.
 */
export function doInviteUsers(app: App, user: UserRow, spec: InviteSpec): void {
  requireMemberOrAdmin(user);
  const skipped = app.batch.write(() => {
    const realm = realmOf(app, user);
    if (!isUserInGroup(app.db, user.id, realm.can_invite_users_group as number)) throw errors.insufficientPermission();
    checkInviteAs(user, spec.inviteAs);
    if (spec.inviteeEmails === '') throw errors.badRequest('You must specify at least one email address.');
    const emails = parseInviteeEmails(spec.inviteeEmails);
    const { streamIds, groupIds } = checkInviteCommon(app, user, realm, spec);
    checkWelcomeText(user, spec.welcomeMessageCustomText);

    // do_invite_users
    checkInviteLimit(app, realm, emails.length);
    const now = nowSeconds(app.clock);
    if (!realm.invite_required && user.date_joined > now - MIN_INVITER_AGE_SECONDS && !isAdmin(user)) {
      throw errors.invitationFailed(
        'Your account is too new to send invites for this organization. Ask an organization admin, or a more experienced user.',
        { sentInvitations: false },
      );
    }
    const invalid: SkipReason[] = [];
    const skip: SkipReason[] = [];
    const good: string[] = [];
    for (const email of emails) {
      const problem = emailProblem(app, realm, email);
      if (problem) {
        invalid.push([email, problem, false]);
        continue;
      }
      const existing = findUserByDeliveryEmail(app.db, realm.id, email);
      if (existing?.is_active) skip.push([email, 'Already has an account.', false]);
      else if (existing) skip.push([email, 'Account has been deactivated.', true]);
      else good.push(email);
    }
    if (invalid.length) {
      throw errors.invitationFailed("Some emails did not validate, so we didn't send any invitations.", {
        errors: [...invalid, ...skip],
        sentInvitations: false,
      });
    }
    if (skip.length && skip.length === emails.length) {
      throw errors.invitationFailed("We weren't able to invite anyone.", { errors: skip, sentInvitations: false });
    }
    const expires = expiresAt(app, now, spec.expiresInMinutes);
    for (const email of good) {
      const row = insertInvitation(app, user, { email, multiuse: false, expires, now, streamIds, groupIds }, spec);
      queueInvitationEmail(app, realm, user, row);
    }
    notifyInvitesChanged(app, realm.id, user.id);
    return skip;
  });
  if (skipped.length) {
    // Raised after the write: the other invitations stay sent.
    throw errors.invitationFailed(
      "Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!",
      { errors: skipped, sentInvitations: true },
    );
  }
}

/** POST /invites/multiuse → the link. */
export function doCreateMultiuseInvite(app: App, user: UserRow, spec: Omit<InviteSpec, 'inviteeEmails'>): string {
  requireMemberOrAdmin(user);
  return app.batch.write(() => {
    const realm = realmOf(app, user);
    if (!isUserInGroup(app.db, user.id, realm.create_multiuse_invite_group as number)) throw errors.insufficientPermission();
    const { streamIds, groupIds } = checkInviteCommon(app, user, realm, spec);
    checkWelcomeText(user, spec.welcomeMessageCustomText);
    const now = nowSeconds(app.clock);
    const row = insertInvitation(app, user, { email: null, multiuse: true, expires: expiresAt(app, now, spec.expiresInMinutes), now, streamIds, groupIds }, spec);
    notifyInvitesChanged(app, realm.id, user.id);
    return invitationLink(app, row.confirmation_key);
  });
}

/** Zulip's access_invite_by_id / access_multiuse_invite_by_id: the creator, or administrators (owners for owner invitations). */
function accessInvitation(app: App, user: UserRow, id: number, multiuse: boolean): InvitationRow {
  const row = findInvitation(app.db, user.realm_id, id, multiuse);
  // Used email invitations are no longer pending: there is nothing to revoke or resend.
  if (!row || (!multiuse && row.status !== INVITE_STATUS.PENDING)) throw errors.badRequest('No such invitation');
  if (row.referrer_id !== user.id) {
    if (row.invited_as === ROLE.OWNER && !isOwner(user)) throw errors.ownerRequired();
    if (!isAdmin(user)) throw errors.badRequest('Must be an organization administrator');
  }
  return row;
}

/** DELETE /invites/{id} and DELETE /invites/multiuse/{id}. */
export function doRevokeInvite(app: App, user: UserRow, id: number, multiuse: boolean): void {
  requireMemberOrAdmin(user);
  app.batch.write(() => {
    const row = accessInvitation(app, user, id, multiuse);
    if (row.status === INVITE_STATUS.REVOKED) throw errors.badRequest('Invitation has already been revoked');
    stmt(app.db, 'UPDATE invitation SET status = ? WHERE id = ?').run(INVITE_STATUS.REVOKED, row.id);
    notifyInvitesChanged(app, row.realm_id, row.referrer_id);
  });
}

/**
 * Ends every invitation and reusable link `user` made that could still be used (Zulip's
 * revoke_invites_generated_by_user, part of do_deactivate_user), inside the caller's write: a link
 * an administrator made before leaving must not keep making administrators. Sign-ups under way
 * through the links end with them (checkInvitationKey).
 */
export function revokeInvitationsOf(app: App, user: UserRow): void {
  const revoked = stmt(app.db, 'UPDATE invitation SET status = ? WHERE realm_id = ? AND referrer_id = ? AND status = ?').run(
    INVITE_STATUS.REVOKED,
    user.realm_id,
    user.id,
    INVITE_STATUS.PENDING,
  ).changes;
  if (revoked > 0) notifyInvitesChanged(app, user.realm_id, user.id);
}

/** POST /invites/{id}/resend: the same link again (the expiry does not move). */
export function doResendInvite(app: App, user: UserRow, id: number): void {
  requireMemberOrAdmin(user);
  app.batch.write(() => {
    const row = accessInvitation(app, user, id, false);
    const realm = realmOf(app, user);
    checkInviteLimit(app, realm, 1);
    const referrer = findUserById(app.db, row.realm_id, row.referrer_id) as UserRow;
    queueInvitationEmail(app, realm, referrer, row);
  });
}

// --- accepting -------------------------------------------------------------------------------------

/** Why a link cannot be used, for the page to explain. */
export class InvitationUnusable extends Error {
  constructor(readonly state: Exclude<InvitationState, 'valid'> | 'missing' | 'realm_deactivated') {
    super(state);
  }
}

/** The invitation behind a link key if it can still be used; throws InvitationUnusable otherwise. */
export function checkInvitationKey(app: App, key: string): { invitation: InvitationRow; realm: RealmRow; referrer: UserRow | null } {
  const row = findInvitationByKey(app.db, key);
  if (!row || row.realm_id !== app.realmId()) throw new InvitationUnusable('missing');
  const state = invitationState(row, nowSeconds(app.clock));
  if (state !== 'valid') throw new InvitationUnusable(state);
  // A registration ends with the link it came through: revoking the link stops the sign-ups under way.
  if (row.registration_of !== null) {
    const link = stmt(app.db, 'SELECT status FROM invitation WHERE id = ?').get(row.registration_of) as { status: number } | undefined;
    if (!link || link.status === INVITE_STATUS.REVOKED) throw new InvitationUnusable('revoked');
  }
  const realm = getRealmById(app.db, row.realm_id) as RealmRow;
  if (realm.deactivated) throw new InvitationUnusable('realm_deactivated');
  return { invitation: row, realm, referrer: findUserById(app.db, row.realm_id, row.referrer_id) };
}

export interface SignUp {
  fullName: string;
  password: string;
}

/** How long a multi-use link's sign-up may wait for its address to be confirmed (Zulip: a day). */
export const REGISTRATION_SECONDS = 24 * 60 * 60;
/** Sign-up emails one address may be sent in a day through links (against using a link to flood a mailbox). */
const MAX_REGISTRATION_EMAILS_PER_DAY = 5;

/** Why `email` cannot have an account here: an invalid or outside address, or an existing account. */
function checkNewAddress(app: App, realm: RealmRow, email: string): void {
  if (!isDeliverableEmail(email)) throw errors.badRequest('Enter a valid email address.');
  const problem = emailProblem(app, realm, email);
  if (problem) throw errors.badRequest(problem === 'Outside your domain.' ? 'Your email address is not in one of the domains this organization allows.' : problem);
  const existing = findUserByDeliveryEmail(app.db, realm.id, email);
  if (existing) {
    throw errors.badRequest(existing.is_active ? 'An account with this email address already exists. Log in instead.' : 'Account has been deactivated.');
  }
}

/**
 * A multi-use link's sign-up form: the address is checked and sent a link to finish signing up (a
 * registration: a single-use invitation to it with the link's role, channels, groups and welcome
 * text, valid for a day). Nothing is created until that link is followed. Returns the address.
 */
export function doRequestRegistration(app: App, key: string, rawEmail: string, ip: string): string {
  return app.batch.write(() => {
    const { invitation: link, realm } = checkInvitationKey(app, key);
    if (!link.multiuse) throw errors.badRequest('This invitation is for one address only.');
    const email = rawEmail.trim();
    checkNewAddress(app, realm, email);
    // Zulip's sends_email_by_ip: the per-address cap below does not stop one client from mailing
    // many addresses (anyone holding the link, which needs no login, could use the server to mail
    // strangers). Counted only when an email goes out.
    const ipKey = `sends-email:${ip}`;
    const byIp = app.limits.peek(ipKey, app.limits.rules.sendsEmailByIp, app.clock.nowMs());
    if (app.limits.enabled && !byIp.allowed) throw errors.rateLimited(Math.ceil(byIp.retryAfter), rateLimitHeaders(byIp));
    const now = nowSeconds(app.clock);
    const recent = (
      stmt(app.db, 'SELECT count(*) AS n FROM invitation WHERE realm_id = ? AND registration_of IS NOT NULL AND email = ? COLLATE NOCASE AND created > ?').get(
        realm.id,
        email,
        now - 86400,
      ) as { n: number }
    ).n;
    if (recent >= MAX_REGISTRATION_EMAILS_PER_DAY) {
      throw errors.badRequest('Too many sign-up emails were sent to this address today. Use a link already sent, or try again tomorrow.');
    }
    const confirmationKey = newInvitationKey();
    stmt(
      app.db,
      `INSERT INTO invitation (realm_id, email, referrer_id, invited_as, confirmation_key, created, expires, status, multiuse,
         include_realm_default_subscriptions, notify_referrer_on_join, welcome_message_custom_text, stream_ids, group_ids, registration_of)
       SELECT realm_id, ?, referrer_id, invited_as, ?, ?, ?, 0, 0,
         include_realm_default_subscriptions, notify_referrer_on_join, welcome_message_custom_text, stream_ids, group_ids, id
       FROM invitation WHERE id = ?`,
    ).run(email, confirmationKey, now, now + REGISTRATION_SECONDS, link.id);
    const url = invitationLink(app, confirmationKey);
    const text =
      `Hi there,\n\nSomeone (hopefully you) asked to join the organization "${realm.name}" on Parley with this ` +
      `email address.\n\nTo confirm the address and create your account, visit the link below:\n\n    ${url}\n\n` +
      `The link expires in 24 hours. If you did not ask to join, you can ignore this email: no account is made without it.\n`;
    if (app.limits.enabled) app.limits.record(ipKey, app.limits.rules.sendsEmailByIp, app.clock.nowMs());
    app.batch.onCommit(() => {
      sendEmail(app, { to: email, subject: `Confirm your email address to join ${realm.name}`, text });
    });
    return email;
  });
}

/** Subscribes a brand-new user (no permission checks: the invitation carried them) and tells the peers. */
function subscribeNewUser(app: App, user: UserRow, streamIds: number[]): void {
  const colors = ['#76ce90', '#fae589', '#a6c7e5', '#e79ab5', '#bfd56f', '#f4ae55', '#b0a5fd', '#addfe5'];
  const streams: StreamRow[] = [];
  for (const id of streamIds) {
    const s = findStreamById(app.db, user.realm_id, id);
    // Channels archived since the invitation was sent are skipped.
    if (!s || s.deactivated || streams.some((x) => x.id === s.id)) continue;
    stmt(app.db, 'INSERT OR IGNORE INTO subscription (user_id, stream_id, color) VALUES (?, ?, ?)').run(user.id, s.id, colors[streams.length % colors.length]);
    streams.push(s);
  }
  if (!streams.length) return;
  app.batch.onCommit(() => {
    const subs = streams.map((s) =>
      formatSubscription(app.db, s, findSubscription(app.db, user.id, s.id) as NonNullable<ReturnType<typeof findSubscription>>, {
        subscribers: subscriberIds(app.db, s.id),
      }),
    );
    app.events.send({ type: 'subscription', op: 'add', subscriptions: subs }, [user.id]);
    const everyone = activeUserIds(app, user.realm_id).filter((id) => id !== user.id);
    for (const s of streams) {
      const peers = everyone.filter((id) => {
        const u = findUserById(app.db, user.realm_id, id);
        return u !== null && canAccessStreamMetadata(app.db, u, s);
      });
      app.events.send({ type: 'subscription', op: 'peer_add', stream_ids: [s.id], user_ids: [user.id] }, peers);
    }
  });
}

/** Adds a brand-new user to the invitation's groups (deactivated or deleted ones skipped). */
function addNewUserToGroups(app: App, user: UserRow, groupIds: number[]): void {
  const ins = stmt(app.db, 'INSERT OR IGNORE INTO user_group_member (group_id, user_id) VALUES (?, ?)');
  for (const id of groupIds) {
    const g = findNamedGroup(app.db, user.realm_id, id);
    if (!g || g.deactivated || g.is_system_group) continue;
    ins.run(g.id, user.id);
    app.batch.onCommit(() =>
      app.events.send({ type: 'user_group', op: 'add_members', group_id: g.id, user_ids: [user.id] }, activeUserIds(app, user.realm_id)),
    );
  }
}

/** The default channels of the organization. */
function defaultStreamIds(app: App, realmId: number): number[] {
  return (stmt(app.db, 'SELECT stream_id FROM default_stream WHERE realm_id = ? ORDER BY stream_id').all(realmId) as { stream_id: number }[]).map(
    (r) => r.stream_id,
  );
}

/** Welcome Bot's greeting, then the custom text (the invitation's, else the organization's; empty: none). */
function sendWelcomeMessages(app: App, realm: RealmRow, user: UserRow, invitationText: string | null): void {
  const bot = welcomeBot(app, realm.id);
  const to = { kind: 'direct' as const, userIds: [user.id] };
  doSendMessage(app, bot, {
    to,
    content:
      `Hello, and welcome to ${realm.name}! :wave:\n\n` +
      'Conversations here happen in **channels**, each with its own **topics**. ' +
      'Direct messages are for one person or a small group.',
    client: 'Internal',
    readBySender: true,
  });
  const custom = invitationText ?? String(realm.welcome_message_custom_text ?? '');
  if (custom.trim() !== '') doSendMessage(app, bot, { to, content: customWelcomeContent(realm, custom), client: 'Internal' });
}

/** Welcome Bot's message carrying an organization's (or an invitation's) custom welcome text. */
function customWelcomeContent(realm: RealmRow, text: string): string {
  return `A message from the administrators of ${realm.name}:\n\n${text}`;
}

/**
 * POST /realm/test_welcome_bot_custom_message: an administrator sees the custom welcome text as a new
 * user would, in a direct message from Welcome Bot (Zulip's send_test_welcome_bot_custom_message).
 */
export function doSendTestWelcomeMessage(app: App, admin: UserRow, text: string): number {
  if (!isAdmin(admin)) throw errors.adminRequired();
  if (text.length === 0) throw errors.badRequest('Message must not be empty');
  const realm = getRealmById(app.db, admin.realm_id) as RealmRow;
  return doSendMessage(app, welcomeBot(app, realm.id), {
    to: { kind: 'direct', userIds: [admin.id] },
    content: customWelcomeContent(realm, text),
    client: 'Internal',
  }).id;
}

/**
 * Creates the invited account: role, channels (plus the defaults when asked), groups, welcome
 * messages, the referrer's notice; an email invitation becomes used (with any others to the same
 * address revoked), a link stays usable. Returns the new user.
 */
export function doAcceptInvitation(app: App, key: string, signUp: SignUp): UserRow {
  return app.batch.write(() => {
    const { invitation: inv, realm, referrer } = checkInvitationKey(app, key);
    // A reusable link proves no address: it leads to doRequestRegistration, never to an account.
    if (inv.multiuse) throw errors.badRequest('Confirm your email address first.');
    const email = inv.email as string;
    // Someone may have signed up with the address since the invitation was sent.
    checkNewAddress(app, realm, email);
    const created = doCreateUser(app, { realmId: realm.id, email, password: signUp.password, fullName: signUp.fullName, role: inv.invited_as, acting: null });
    const user = findUserById(app.db, realm.id, created.userId) as UserRow;
    const streamIds = invitationStreamIds(inv);
    if (inv.include_realm_default_subscriptions) streamIds.push(...defaultStreamIds(app, realm.id));
    subscribeNewUser(app, user, streamIds);
    addNewUserToGroups(app, user, invitationGroupIds(inv));
    if (!inv.multiuse) {
      stmt(app.db, 'UPDATE invitation SET status = ? WHERE id = ?').run(INVITE_STATUS.USED, inv.id);
      stmt(app.db, 'UPDATE invitation SET status = ? WHERE realm_id = ? AND multiuse = 0 AND status = 0 AND email = ? COLLATE NOCASE').run(
        INVITE_STATUS.REVOKED,
        realm.id,
        email,
      );
      notifyInvitesChanged(app, realm.id, inv.referrer_id);
    }
    sendWelcomeMessages(app, realm, user, inv.welcome_message_custom_text);
    if (inv.notify_referrer_on_join && referrer?.is_active) {
      doSendMessage(app, notificationBot(app, realm.id), {
        to: { kind: 'direct', userIds: [referrer.id] },
        content: `@_**${user.full_name}|${user.id}** accepted your invitation to join ${realm.name}!`,
        client: 'Internal',
      });
    }
    return user;
  });
}
