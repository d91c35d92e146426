// A small export as Zulip's own exporter writes it (zerver/lib/export.py: do_export_realm), not as
// Parley's does: the tarball is the export directory (tar -C parent dirname), datetimes are floats,
// realm.json has import_source "zulip" and tables and fields Parley neither writes nor reads
// (zerver_realmauditlog, zerver_realmuserdefault, uuid, plan_type, ...), the cross-realm bots
// (Notification Bot, Welcome Bot, the email gateway) are listed apart with their recipients, every
// user has a personal recipient and a subscription to it, group DMs are huddles with subscriptions,
// zerver_usermessage.flags_mask is UserMessage's bitfield (has_alert_word 512, historical 1024,
// is_private 2048, active_mobile_push_notification 4096), avatars come in several sizes per user
// (export_avatars_from_local: every <hash>.* file, the system bots' too), custom emoji with their
// .original, the realm icon and logo files under <realm_id>/, and analytics.json beside the rest.
import zlib from 'node:zlib';
import crypto from 'node:crypto';
import tar from 'tar-stream';

export const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
export const ICON = Buffer.concat([PNG, Buffer.from('icon')]);
export const AVATAR = Buffer.concat([PNG, Buffer.from('avatar')]);
export const TOP = 'zulip-export-k3j4h5';
export const REALM_ID = 2;
/** A path id of Zulip's shape Parley serves as it is, and one it cannot (a non-ASCII name). */
export const KEPT_PATH = `${REALM_ID}/4f/AbCdEfGhIjKlMnOpQrStUvWx/notes.txt`;
export const MOVED_PATH = `${REALM_ID}/9a/ZyXwVuTsRqPoNmLkJiHgFeDc/résumé.pdf`;
const AVATAR_HASH = crypto.createHash('sha1').update('hamlet').digest('hex');
/** Zulip names an emoji's file with a salted hash of its id (get_emoji_file_name). */
export const EMOJI_FILE = `${crypto.createHash('sha256').update('emoji 5').digest('hex').slice(0, 40)}.png`;

export const IDS = { iago: 10, hamlet: 11, othello: 12, polonius: 13, webhook: 14, gone: 15, notificationBot: 1, welcomeBot: 2, gateway: 3 } as const;
export const GROUPS = { internet: 20, everyone: 21, members: 22, fullmembers: 23, moderators: 24, administrators: 25, owners: 26, nobody: 27, designers: 28 } as const;
export const STREAMS = { general: 30, secret: 31 } as const;
const T0 = 1_700_000_000.123456;

const personal = (uid: number) => 100 + uid;
const RECIPIENT = { general: 50, secret: 51, huddle: 60 } as const;
const HUDDLE = 70;

const groupSettings = (names: readonly string[], id: number) => Object.fromEntries(names.map((n) => [n, id]));
const REALM_GROUP_SETTINGS = [
  'can_access_all_users_group', 'can_add_custom_emoji_group', 'can_add_subscribers_group', 'can_create_bots_group', 'can_create_groups',
  'can_create_private_channel_group', 'can_create_public_channel_group', 'can_create_web_public_channel_group', 'can_create_write_only_bots_group',
  'can_delete_any_message_group', 'can_delete_own_message_group', 'can_invite_users_group', 'can_manage_all_groups', 'can_manage_billing_group',
  'can_mention_many_users_group', 'can_move_messages_between_channels_group', 'can_move_messages_between_topics_group', 'can_resolve_topics_group',
  'can_set_delete_message_policy_group', 'can_set_topics_policy_group', 'can_summarize_topics_group', 'create_multiuse_invite_group',
  'direct_message_initiator_group', 'direct_message_permission_group',
];
const STREAM_GROUP_SETTINGS = [
  'can_add_subscribers_group', 'can_administer_channel_group', 'can_create_topic_group', 'can_delete_any_message_group', 'can_delete_own_message_group',
  'can_move_messages_out_of_channel_group', 'can_move_messages_within_channel_group', 'can_remove_subscribers_group', 'can_resolve_topics_group',
  'can_send_message_group', 'can_subscribe_group',
];
const GROUP_SETTINGS = ['can_add_members_group', 'can_join_group', 'can_leave_group', 'can_manage_group', 'can_mention_group', 'can_remove_members_group'];

function user(id: number, email: string, fullName: string, role: number, extra: Record<string, unknown> = {}) {
  return {
    id,
    realm: REALM_ID,
    email,
    delivery_email: email,
    full_name: fullName,
    is_active: true,
    is_bot: false,
    bot_type: null,
    bot_owner: null,
    role,
    is_mirror_dummy: false,
    date_joined: T0 - 86400 + id,
    last_login: T0,
    last_reminder: null,
    tos_version: null,
    avatar_source: 'G',
    avatar_version: 1,
    default_sending_stream: null,
    default_events_register_stream: null,
    default_all_public_streams: false,
    last_active_message_id: null,
    groups: [],
    user_permissions: [],
    timezone: 'Europe/Paris',
    twenty_four_hour_time: true,
    // Zulip's, unknown to Parley: left aside by the importer.
    uuid: crypto.randomUUID(),
    is_staff: false,
    onboarding_steps: [],
    long_term_idle: false,
    ...extra,
  };
}

/** The export's files: name (below TOP) → JSON value or bytes. */
export function zulipExport(): Record<string, unknown> {
  const users = [
    user(IDS.iago, 'iago@zulip.example', 'Iago', 100),
    user(IDS.hamlet, 'hamlet@zulip.example', 'King Hamlet', 400, { avatar_source: 'U', avatar_version: 3 }),
    user(IDS.othello, 'othello@zulip.example', 'Othello', 400),
    user(IDS.polonius, 'polonius@zulip.example', 'Polonius', 600),
    user(IDS.webhook, 'webhook-bot@zulip.example', 'Webhook Bot', 400, { is_bot: true, bot_type: 2, bot_owner: IDS.hamlet, timezone: '' }),
    user(IDS.gone, 'gone@zulip.example', 'Gone Person', 400, { is_active: false }),
  ];
  const systemGroup = (id: number, name: string) => ({
    id,
    usergroup_ptr: id,
    realm_for_sharding: REALM_ID,
    name,
    description: `${name} group`,
    is_system_group: true,
    deactivated: false,
    date_created: T0 - 86400,
    creator: null,
    ...groupSettings(GROUP_SETTINGS, GROUPS.nobody),
    can_mention_group: GROUPS.everyone,
  });
  const named = [
    systemGroup(GROUPS.internet, 'role:internet'),
    systemGroup(GROUPS.everyone, 'role:everyone'),
    systemGroup(GROUPS.members, 'role:members'),
    systemGroup(GROUPS.fullmembers, 'role:fullmembers'),
    systemGroup(GROUPS.moderators, 'role:moderators'),
    systemGroup(GROUPS.administrators, 'role:administrators'),
    systemGroup(GROUPS.owners, 'role:owners'),
    systemGroup(GROUPS.nobody, 'role:nobody'),
    {
      ...systemGroup(GROUPS.designers, 'designers'),
      description: 'They draw',
      is_system_group: false,
      creator: IDS.iago,
      can_manage_group: GROUPS.administrators,
    },
  ];
  let n = 0;
  const membership = (group: number, uid: number) => ({ id: ++n, user_group: group, user_profile: uid });
  const stream = (id: number, name: string, extra: Record<string, unknown> = {}) => ({
    id,
    realm: REALM_ID,
    name,
    description: `About ${name}`,
    rendered_description: `<p>About ${name}</p>`,
    date_created: T0 - 80000,
    creator: IDS.iago,
    invite_only: false,
    is_web_public: false,
    history_public_to_subscribers: true,
    message_retention_days: null,
    deactivated: false,
    first_message_id: null,
    is_recently_active: true,
    folder: null,
    recipient: null,
    subscriber_count: 3,
    ...groupSettings(STREAM_GROUP_SETTINGS, GROUPS.nobody),
    can_send_message_group: GROUPS.everyone,
    can_create_topic_group: GROUPS.everyone,
    can_remove_subscribers_group: GROUPS.administrators,
    ...extra,
  });
  let s = 0;
  const sub = (uid: number, recipient: number, extra: Record<string, unknown> = {}) => ({
    id: ++s,
    user_profile: uid,
    recipient,
    active: true,
    is_user_active: true,
    is_muted: false,
    color: '#c2c2c2',
    pin_to_top: false,
    desktop_notifications: null,
    audible_notifications: null,
    push_notifications: null,
    email_notifications: null,
    wildcard_mentions_notify: null,
    ...extra,
  });
  const realm = {
    id: REALM_ID,
    string_id: 'shakespeare',
    name: 'Shakespeare Company',
    description: 'The **Globe**',
    date_created: T0 - 90000.5,
    deactivated: false,
    invite_required: true,
    emails_restricted_to_domains: false,
    disallow_disposable_email_addresses: true,
    waiting_period_threshold: 3,
    default_language: 'en',
    message_retention_days: -1,
    allow_message_editing: true,
    message_edit_history_visibility_policy: 2,
    topics_policy: 2,
    welcome_message_custom_text: '',
    message_content_edit_limit_seconds: 600,
    message_content_delete_limit_seconds: null,
    move_messages_within_stream_limit_seconds: 604800,
    move_messages_between_streams_limit_seconds: 604800,
    enable_spectator_access: false,
    icon_source: 'U',
    icon_version: 4,
    new_stream_announcements_stream: STREAMS.general,
    signup_announcements_stream: null,
    zulip_update_announcements_stream: STREAMS.general,
    moderation_request_channel: null,
    giphy_rating: 3,
    video_chat_provider: 1,
    // Zulip's, unknown to Parley.
    plan_type: 2,
    logo_source: 'U',
    logo_version: 2,
    push_notifications_enabled: true,
    uuid: crypto.randomUUID(),
    ...groupSettings(REALM_GROUP_SETTINGS, GROUPS.members),
    can_access_all_users_group: GROUPS.everyone,
  };
  const realmJson = {
    zerver_realm: [realm],
    zerver_realmauthenticationmethod: [{ id: 1, realm: REALM_ID, name: 'Email' }],
    // Every field of RealmUserDefault is written; Parley keeps those of its defaults.
    zerver_realmuserdefault: [{ id: 1, realm: REALM_ID, enter_sends: true, web_font_size_px: 16, twenty_four_hour_time: false, emojiset: 'google', realm_name_in_email_notifications_policy: 1 }],
    zerver_presencesequence: [{ id: 1, realm: REALM_ID, last_update_id: 7 }],
    zerver_defaultstream: [{ id: 1, realm: REALM_ID, stream: STREAMS.general }],
    zerver_customprofilefield: [
      { id: 3, realm: REALM_ID, name: 'Pronouns', hint: 'How to address you', field_type: 1, field_data: '', order: 1, display_in_profile_summary: true, required: false, editable_by_user: true },
    ],
    zerver_realmemoji: [{ id: 5, realm: REALM_ID, name: 'octopus', author: IDS.iago, file_name: EMOJI_FILE, deactivated: false, is_animated: false }],
    zerver_realmdomain: [{ id: 1, realm: REALM_ID, domain: 'zulip.example', allow_subdomains: false }],
    zerver_realmfilter: [{ id: 4, realm: REALM_ID, pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.example/{id}', order: 0, example_input: null, reverse_template: null, alternative_url_templates: [] }],
    zerver_realmplayground: [],
    zerver_client: [
      { id: 1, name: 'website' },
      { id: 2, name: 'ZulipMobile' },
    ],
    zerver_userprofile: users,
    zerver_userprofile_mirrordummy: [],
    zerver_userprofile_crossrealm: [
      { id: IDS.notificationBot, email: 'notification-bot@zulip.com', recipient_id: 1 },
      { id: IDS.welcomeBot, email: 'welcome-bot@zulip.com', recipient_id: 2 },
      { id: IDS.gateway, email: 'emailgateway@zulip.com', recipient_id: 3 },
    ],
    zerver_usergroup: named.map((g) => ({ id: g.id, realm: REALM_ID })),
    zerver_namedusergroup: named,
    zerver_usergroupmembership: [
      membership(GROUPS.owners, IDS.iago),
      membership(GROUPS.members, IDS.hamlet),
      membership(GROUPS.members, IDS.othello),
      membership(GROUPS.members, IDS.webhook),
      membership(GROUPS.members, IDS.gone),
      membership(GROUPS.everyone, IDS.polonius),
      membership(GROUPS.fullmembers, IDS.hamlet),
      membership(GROUPS.designers, IDS.hamlet),
      membership(GROUPS.designers, IDS.othello),
    ],
    zerver_groupgroupmembership: [
      { id: 1, supergroup: GROUPS.internet, subgroup: GROUPS.everyone },
      { id: 2, supergroup: GROUPS.everyone, subgroup: GROUPS.members },
      { id: 3, supergroup: GROUPS.members, subgroup: GROUPS.fullmembers },
      { id: 4, supergroup: GROUPS.fullmembers, subgroup: GROUPS.moderators },
      { id: 5, supergroup: GROUPS.moderators, subgroup: GROUPS.administrators },
      { id: 6, supergroup: GROUPS.administrators, subgroup: GROUPS.owners },
    ],
    zerver_channelfolder: [],
    zerver_stream: [stream(STREAMS.general, 'general'), stream(STREAMS.secret, 'secret', { invite_only: true, history_public_to_subscribers: false })],
    zerver_huddle: [{ id: HUDDLE, huddle_hash: 'x', group_size: 3 }],
    zerver_recipient: [
      ...users.map((u) => ({ id: personal(u.id), type: 1, type_id: u.id })),
      { id: RECIPIENT.general, type: 2, type_id: STREAMS.general },
      { id: RECIPIENT.secret, type: 2, type_id: STREAMS.secret },
      { id: RECIPIENT.huddle, type: 3, type_id: HUDDLE },
    ],
    zerver_subscription: [
      ...users.map((u) => sub(u.id, personal(u.id))),
      sub(IDS.iago, RECIPIENT.general),
      sub(IDS.hamlet, RECIPIENT.general, { color: '#76ce90', pin_to_top: true }),
      sub(IDS.othello, RECIPIENT.general, { is_muted: true, desktop_notifications: true }),
      sub(IDS.polonius, RECIPIENT.general),
      sub(IDS.iago, RECIPIENT.secret),
      sub(IDS.hamlet, RECIPIENT.secret),
      sub(IDS.gone, RECIPIENT.general, { active: false, is_user_active: false }),
      sub(IDS.iago, RECIPIENT.huddle),
      sub(IDS.hamlet, RECIPIENT.huddle),
      sub(IDS.othello, RECIPIENT.huddle),
    ],
    zerver_alertword: [{ id: 1, user_profile: IDS.polonius, realm: REALM_ID, word: 'dagger' }],
    zerver_usertopic: [{ id: 1, user_profile: IDS.othello, stream: STREAMS.general, recipient: RECIPIENT.general, topic_name: 'Hello', last_updated: T0 + 50.5, visibility_policy: 1 }],
    zerver_muteduser: [],
    zerver_userstatus: [],
    zerver_userpresence: [],
    zerver_useractivity: [],
    zerver_useractivityinterval: [],
    zerver_customprofilefieldvalue: [{ id: 1, user_profile: IDS.hamlet, field: 3, value: 'he/him', rendered_value: null }],
    zerver_scheduledmessage: [],
    zerver_reaction: [
      { id: 900, message: 1000, user_profile: IDS.othello, emoji_name: 'smile', emoji_code: '1f604', reaction_type: 'unicode_emoji' },
      { id: 901, message: 1000, user_profile: IDS.iago, emoji_name: 'octopus', emoji_code: '5', reaction_type: 'realm_emoji' },
    ],
    zerver_service: [],
    zerver_botstoragedata: [],
    zerver_botconfigdata: [],
    // Zulip's, unknown to Parley.
    zerver_realmauditlog: [{ id: 1, realm: REALM_ID, event_type: 101, event_time: T0 }],
    zerver_onboardingusermessage: [],
    zerver_onboardingstep: [],
    import_source: 'zulip',
  };
  const message = (id: number, sender: number, recipient: number, subject: string, content: string, rendered: string | null, extra: Record<string, unknown> = {}) => ({
    id,
    sender,
    recipient,
    realm: REALM_ID,
    subject,
    content,
    rendered_content: rendered,
    rendered_content_version: 1,
    date_sent: T0 + id / 1000,
    last_edit_time: null,
    edit_history: null,
    sending_client: 1,
    has_attachment: false,
    has_image: false,
    has_link: false,
    is_channel_message: recipient === RECIPIENT.general || recipient === RECIPIENT.secret,
    type: 1,
    ...extra,
  });
  const history = JSON.stringify([{ user_id: IDS.hamlet, timestamp: Math.floor(T0 + 30), prev_content: 'Helo', prev_rendered_content: '<p>Helo</p>', prev_rendered_content_version: 1 }]);
  const messages = [
    message(1000, IDS.hamlet, RECIPIENT.general, 'Hello', 'Hello @**Othello**', '<p>Hello <span class="user-mention" data-user-id="12">@Othello</span></p>', {
      last_edit_time: T0 + 30,
      edit_history: history,
    }),
    message(1001, IDS.notificationBot, RECIPIENT.general, 'channel events', '**Iago** created this channel.', '<p><strong>Iago</strong> created this channel.</p>'),
    message(1002, IDS.hamlet, personal(IDS.othello), '', 'a secret between us', '<p>a secret between us</p>', { sending_client: 2 }),
    message(1003, IDS.iago, RECIPIENT.huddle, '', 'three of us', '<p>three of us</p>'),
    // No rendering in the export: Parley renders it.
    message(1004, IDS.othello, RECIPIENT.general, 'Hello', 'some **bold** words', null),
    message(
      1005,
      IDS.hamlet,
      RECIPIENT.general,
      'files',
      `[notes.txt](/user_uploads/${KEPT_PATH}) and [cv](/user_uploads/${MOVED_PATH})`,
      // With an image preview as Zulip 9+ renders it: a thumbnail of the file.
      `<p><a href="/user_uploads/${KEPT_PATH}">notes.txt</a> and <a href="/user_uploads/${MOVED_PATH}">cv</a></p>` +
        `<div class="message_inline_image"><a href="/user_uploads/${MOVED_PATH}" title="cv"><img data-original-dimensions="1x1" src="/user_uploads/thumbnail/${MOVED_PATH}/840x560.webp"></a></div>`,
      { has_attachment: true, has_link: true },
    ),
    message(1006, IDS.iago, RECIPIENT.secret, 'plans', 'only for us', '<p>only for us</p>'),
    message(
      1007,
      IDS.othello,
      RECIPIENT.general,
      'Hello',
      ':octopus:',
      `<p><img alt=":octopus:" class="emoji" src="/user_avatars/${REALM_ID}/emoji/images/${EMOJI_FILE}" title="octopus"></p>`,
    ),
  ];
  let um = 0;
  const row = (uid: number, mid: number, flags: number) => ({ id: ++um, user_profile: uid, message: mid, flags_mask: flags });
  const usermessages = [
    row(IDS.iago, 1000, 0),
    row(IDS.hamlet, 1000, 1),
    row(IDS.othello, 1000, 1 | 2 | 8),
    row(IDS.polonius, 1000, 1 | 512),
    row(IDS.iago, 1001, 1),
    row(IDS.hamlet, 1001, 1),
    row(IDS.hamlet, 1002, 1 | 2048),
    row(IDS.othello, 1002, 2048 | 4096),
    row(IDS.iago, 1003, 1 | 2048),
    row(IDS.hamlet, 1003, 2048),
    row(IDS.othello, 1003, 2048),
    row(IDS.iago, 1004, 1),
    row(IDS.hamlet, 1004, 0),
    row(IDS.othello, 1004, 1),
    row(IDS.hamlet, 1005, 1),
    row(IDS.othello, 1005, 0),
    row(IDS.iago, 1006, 1),
    row(IDS.hamlet, 1006, 1024 | 1),
    row(IDS.othello, 1007, 1),
    row(IDS.hamlet, 1007, 1),
  ];
  const attachment = (id: number, pathId: string, name: string, size: number) => ({
    id,
    realm: REALM_ID,
    owner: IDS.hamlet,
    path_id: pathId,
    file_name: name,
    content_type: null,
    size,
    create_time: T0 + 1,
    is_realm_public: true,
    is_web_public: false,
    messages: [1005],
    scheduled_messages: [],
  });
  const uploadRecord = (pathId: string, size: number) => ({
    realm_id: REALM_ID,
    user_profile_id: IDS.hamlet,
    user_profile_email: 'hamlet@zulip.example',
    s3_path: pathId,
    path: pathId,
    size,
    last_modified: T0,
    content_type: null,
  });
  const avatarRecord = (uid: number, rel: string, size: number) => ({
    realm_id: REALM_ID,
    user_profile_id: uid,
    user_profile_email: 'x@zulip.example',
    avatar_version: 3,
    s3_path: rel,
    path: rel,
    size,
    last_modified: T0,
    content_type: null,
  });
  const emojiRecord = (p: string) => ({ realm_id: REALM_ID, author: IDS.iago, path: p, s3_path: p, file_name: EMOJI_FILE, name: 'octopus', deactivated: false });
  const av = `${REALM_ID}/${AVATAR_HASH}`;
  const botAv = `${REALM_ID}/${crypto.createHash('sha1').update('bot').digest('hex')}`;
  return {
    'realm.json': realmJson,
    'messages-000001.json': { zerver_message: messages.slice(0, 4), zerver_usermessage: usermessages.filter((r) => r.message < 1004) },
    'messages-000002.json': { zerver_message: messages.slice(4), zerver_usermessage: usermessages.filter((r) => r.message >= 1004) },
    'attachment.json': { zerver_attachment: [attachment(40, KEPT_PATH, 'notes.txt', 9), attachment(41, MOVED_PATH, 'résumé.pdf', 6)] },
    [`uploads/${KEPT_PATH}`]: 'the notes',
    [`uploads/${MOVED_PATH}`]: '%PDF-1',
    'uploads/records.json': [uploadRecord(KEPT_PATH, 9), uploadRecord(MOVED_PATH, 6)],
    [`avatars/${av}.original`]: AVATAR,
    [`avatars/${av}.png`]: PNG,
    [`avatars/${av}-medium.png`]: PNG,
    // The system bots' avatars: Zulip's exporter adds them (handle_system_bots).
    [`avatars/${botAv}.png`]: PNG,
    'avatars/records.json': [
      avatarRecord(IDS.hamlet, `${av}.png`, PNG.length),
      avatarRecord(IDS.hamlet, `${av}.original`, AVATAR.length),
      avatarRecord(IDS.hamlet, `${av}-medium.png`, PNG.length),
      avatarRecord(IDS.notificationBot, `${botAv}.png`, PNG.length),
    ],
    [`emoji/${REALM_ID}/emoji/images/${EMOJI_FILE}`]: PNG,
    [`emoji/${REALM_ID}/emoji/images/${EMOJI_FILE}.original`]: PNG,
    'emoji/records.json': [emojiRecord(`${REALM_ID}/emoji/images/${EMOJI_FILE}`), emojiRecord(`${REALM_ID}/emoji/images/${EMOJI_FILE}.original`)],
    [`realm_icons/${REALM_ID}/icon.original`]: ICON,
    [`realm_icons/${REALM_ID}/icon.png`]: PNG,
    [`realm_icons/${REALM_ID}/logo.png`]: PNG,
    'realm_icons/records.json': ['icon.original', 'icon.png', 'logo.png'].map((f) => ({ realm_id: REALM_ID, path: `${REALM_ID}/${f}`, s3_path: `${REALM_ID}/${f}` })),
    'analytics.json': { analytics_realmcount: [], analytics_usercount: [], analytics_streamcount: [], analytics_installationcount: [] },
    'migration_status.json': { zulip_version: '10.2', migrations_by_app: { zerver: ['0001_initial'] } },
    'stats.json': {},
  };
}

export interface TarEntrySpec {
  name: string;
  data?: string | Buffer;
  type?: 'file' | 'directory' | 'symlink' | 'link' | 'character-device' | 'fifo';
  linkname?: string;
}

/** A .tar.gz of `entries` (names as given: hostile ones included). */
export async function makeTarGz(entries: readonly TarEntrySpec[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    pack.on('data', (c: unknown) => chunks.push(c as Buffer));
    pack.on('end', () => resolve());
    pack.on('error', reject);
  });
  for (const e of entries) {
    const data = e.data === undefined ? undefined : typeof e.data === 'string' ? Buffer.from(e.data) : e.data;
    await new Promise<void>((resolve, reject) => {
      const type = e.type ?? 'file';
      pack.entry({ name: e.name, type, linkname: e.linkname, size: type === 'file' ? (data?.length ?? 0) : 0, mode: 0o644 }, type === 'file' ? (data ?? Buffer.alloc(0)) : Buffer.alloc(0), (err) => (err ? reject(err) : resolve()));
    });
  }
  pack.finalize();
  await done;
  return zlib.gzipSync(Buffer.concat(chunks));
}

/** The export as Zulip's tarball: every file under the export directory's name. */
export function exportEntries(files: Record<string, unknown>, top = TOP): TarEntrySpec[] {
  return Object.entries(files).map(([name, v]) => ({
    name: `${top}/${name}`,
    data: typeof v === 'string' || Buffer.isBuffer(v) ? (v as string | Buffer) : JSON.stringify(v, null, 2),
  }));
}
