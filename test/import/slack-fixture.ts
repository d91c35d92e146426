// A small Slack workspace export for the importer's tests: people (owner, admin, member with a
// Unicode name, a deactivated one, a guest, a bot user), an integration that posts without a user, a
// user who was deleted from the workspace (only their reaction is left), public, private and archived
// channels, a group DM and a DM; threads (long names, colliding names, Unicode, a reply on a later
// day), files with and without their contents, reactions (skin tones, unknown emoji), every
// formatting and mention rule, and the notices Zulip's importer skips.

// 2024-01-02 12:00:00 UTC and onwards.
const T = 1704196800;
export const ts = (s: number, micro = 100) => `${T + s}.${String(micro).padStart(6, '0')}`;

export const BIO = 'Builds things: houses, bridges, sheds, and the occasional treehouse.';

export const LONG_TEXT = 'Deploy plan for tomorrow morning, please review carefully before we start everything';

export function slackExport(): Record<string, unknown> {
  const users = [
    { id: 'U001', name: 'ada', real_name: 'Ada Lovelace', deleted: false, is_admin: true, is_owner: true, is_primary_owner: true, tz: 'Europe/London', profile: { email: 'ada@example.com', real_name: 'Ada Lovelace', phone: '+44 20 7946 0000', fields: { Xf01: { value: 'Mathematician', alt: '' } } } },
    { id: 'U002', name: 'bob', real_name: 'Bob Builder', deleted: false, is_admin: true, tz: 'America/Chicago', profile: { email: 'bob@example.com', skype: 'bob.builder', fields: { Xf01: { value: '', alt: '' }, Xf02: { value: BIO, alt: '' } } } },
    { id: 'U003', name: 'cleo', real_name: 'Cléo Ünïcode', deleted: false, tz: 'Etc', profile: { email: 'cleo@example.com' } },
    { id: 'U004', name: 'dan', real_name: 'Dan Departed', deleted: true, profile: { email: 'dan@example.com' } },
    { id: 'U005', name: 'gina', real_name: 'Gina Guest', deleted: false, is_restricted: true, profile: { email: 'gina@example.com' } },
    { id: 'U006', name: 'deploybot', real_name: 'Deploy Bot', deleted: false, is_bot: true, profile: { bot_id: 'B006', real_name_normalized: 'Deploy Bot' } },
    // The same person twice (a second account with the same address): one Parley account.
    { id: 'U007', name: 'ada.alt', real_name: 'Ada Alt', deleted: false, profile: { email: 'ADA@example.com' } },
    // Slack's own bot, as exports list it: not marked as a bot, no address.
    { id: 'USLACKBOT', name: 'slackbot', real_name: 'Slackbot', deleted: false, is_bot: false, profile: { real_name: 'Slackbot' } },
  ];
  const channels = [
    { id: 'C001', name: 'general', created: T - 86400, is_archived: false, members: ['U001', 'U002', 'U003', 'U004', 'U005', 'U006'], purpose: { value: 'Company-wide\nannouncements' }, topic: { value: 'ignored when there is a purpose' } },
    { id: 'C002', name: 'random', created: T - 86400, is_archived: false, members: ['U001', 'U002', 'U007'], purpose: { value: '' }, topic: { value: 'Anything goes' } },
    { id: 'C003', name: 'old-project', created: T - 2 * 86400, is_archived: true, members: ['U001'], purpose: { value: 'Done' } },
  ];
  const groups = [{ id: 'G001', name: 'secret-plans', created: T - 86400, is_archived: false, members: ['U001', 'U002'], purpose: { value: 'Private stuff' } }];
  const mpims = [{ id: 'G002', name: 'mpdm-ada--bob--cleo-1', created: T, members: ['U001', 'U002', 'U003'] }];
  const dms = [{ id: 'D001', created: T, members: ['U001', 'U002'] }];
  const general2 = [
    {
      type: 'message', user: 'U001', ts: ts(0),
      text: 'Hello *team* and _all_ of ~you~ <!channel>, see <https://example.com/a_b|the site>, <https://example.org> and <#C002|random> :thumbsup: :smile: :wave::skin-tone-3: &lt;tag&gt; &amp; <mailto:x@example.com|x@example.com>',
      reactions: [
        { name: 'thumbsup', users: ['U002', 'U003'], count: 2 },
        { name: '+1::skin-tone-2', users: ['U002', 'U005'], count: 2 },
        { name: 'customparrot', users: ['U002'], count: 1 },
        { name: 'tada', users: ['U404', 'U003'], count: 2 },
      ],
    },
    { type: 'message', subtype: 'channel_join', user: 'U005', ts: ts(10), text: '<@U005> has joined the channel' },
    { type: 'message', user: 'U002', ts: ts(3200, 200), thread_ts: ts(3200, 200), reply_count: 2, text: LONG_TEXT },
    { type: 'message', user: 'U003', ts: ts(3300, 300), thread_ts: ts(3200, 200), parent_user_id: 'U002', text: '<@U002> looks good `*not bold*` <@U999>' },
    { type: 'message', user: 'U001', ts: ts(6800, 400), thread_ts: ts(6800, 400), text: LONG_TEXT },
    { type: 'message', user: 'U003', ts: ts(10400, 500), thread_ts: ts(10400, 500), text: 'Ünïcode 🎉 thread ☃\nsecond line' },
    { type: 'message', subtype: 'thread_broadcast', user: 'U001', ts: ts(10500, 600), thread_ts: ts(10400, 500), root: { user: 'U003' }, text: 'Also sent to the channel' },
    {
      type: 'message', subtype: 'bot_message', bot_id: 'B999', username: 'GitHub', ts: ts(13200, 700), text: '',
      attachments: [{ title: 'PR #1', title_link: 'https://github.com/x/y/pull/1', text: 'Fix *bug*', fields: [{ title: 'Status', value: 'open' }, { title: 'Reviewers' }], footer: 'GitHub', ts: T + 13200 }],
    },
    {
      type: 'message', user: 'U001', ts: ts(14200, 800), text: 'Here is the report',
      files: [
        { id: 'F001', name: 'report.txt', title: 'Report', mimetype: 'text/plain', url_private: 'https://files.slack.com/files-pri/T1-F001/report.txt', size: 11, created: T + 14200 },
        { id: 'F002', name: 'chart.png', title: 'Chart', mimetype: 'image/png', url_private: 'https://files.slack.com/files-pri/T1-F002/chart.png', size: 100, created: T + 14200 },
        { id: 'F003', mode: 'tombstone' },
      ],
    },
    { type: 'message', subtype: 'me_message', user: 'U002', ts: ts(15000), text: 'waves' },
    { type: 'message', user: 'U004', ts: ts(16000), text: 'An old message from someone who left' },
    { type: 'message', user: 'U001', ts: ts(17000), text: 'Code: ```const x = *y*; a &lt; b``` and\n&gt; a quote with _style_' },
    { type: 'message', subtype: 'bot_message', user: 'U006', bot_id: 'B006', ts: ts(18000), text: 'Deployed v1.2 to <https://prod.example.com|prod>' },
    { type: 'message', subtype: 'pinned_item', user: 'U001', ts: ts(18500), text: 'pinned a message' },
    { type: 'message', user: 'U00', ts: ts(18600), text: 'renamed the channel' },
    { type: 'message', user: 'U001', ts: ts(18700), mimetype: 'application/vnd.slack-docs', text: 'A Slack post' },
    { type: 'message', user: 'U001', ts: ts(18800), text: '' },
  ];
  const general3 = [
    { type: 'message', user: 'U001', ts: ts(86400 + 100), thread_ts: ts(3200, 200), parent_user_id: 'U002', text: 'Done, deployed.' },
    { type: 'message', user: 'USLACKBOT', ts: ts(86400 + 200), text: 'Reminder: standup.' },
  ];
  return {
    'users.json': users,
    'channels.json': channels,
    'groups.json': groups,
    'mpims.json': mpims,
    'dms.json': dms,
    'integration_logs.json': [],
    'general/2024-01-02.json': general2,
    'general/2024-01-03.json': general3,
    'random/2024-01-02.json': [{ type: 'message', user: 'U007', ts: ts(5), text: 'Posted from my second account' }],
    'secret-plans/2024-01-02.json': [{ type: 'message', user: 'U001', ts: ts(20), text: 'Only for <@U002>' }],
    'old-project/2024-01-02.json': [{ type: 'message', user: 'U001', ts: ts(1), text: 'Archived talk' }],
    'mpdm-ada--bob--cleo-1/2024-01-02.json': [{ type: 'message', user: 'U003', ts: ts(30), text: 'Group hello <@U001>' }],
    'D001/2024-01-02.json': [
      { type: 'message', user: 'U002', ts: ts(40), text: 'hi Ada' },
      { type: 'message', user: 'U001', ts: ts(50), text: 'hi Bob', reactions: [{ name: 'heart', users: ['U002'], count: 1 }] },
    ],
    // A folder of no conversation (Slack's canvases and the like): not read.
    'unknown-folder/2024-01-02.json': [{ user: 'U001', ts: ts(60), text: 'never imported' }],
    '__uploads/F001/report.txt': 'hello world',
  };
}
