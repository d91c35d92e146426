-- Parley's whole schema, readable in one place. A fresh database is created from this file; existing
-- databases are moved to it by the numbered migrations in src/db/migrations.ts (PRAGMA user_version).
--
-- Conventions: snake_case; every row carries (or reaches through its parent) its organization's
-- realm_id; times are INTEGER UNIX seconds unless the column says otherwise; booleans are 0/1.
-- Group-setting columns (can_*_group) hold a user_group id: a named group, a system group, or an
-- anonymous group (named = 0) that stands for a {direct_members, direct_subgroups} value, as in Zulip.
-- A table whose ids reach clients has `id INTEGER PRIMARY KEY AUTOINCREMENT`: as in Zulip, an id is
-- never used twice, even after the newest row is deleted (a client caching ids would otherwise get
-- the wrong object). Ids no client sees (reaction, bot_service, legacy_push_token, email_change, health_probe)
-- are plain rowids, which spares the sqlite_sequence write on every insert.

CREATE TABLE realm (
  id                              INTEGER PRIMARY KEY AUTOINCREMENT,
  string_id                       TEXT NOT NULL UNIQUE,          -- subdomain; '' for the root realm
  name                            TEXT NOT NULL,
  description                     TEXT NOT NULL DEFAULT '',
  date_created                    INTEGER NOT NULL,
  deactivated                     INTEGER NOT NULL DEFAULT 0,
  -- organization settings the API exposes as realm_*
  message_retention_days          INTEGER,                       -- NULL: unlimited
  empty_topic_display_name        TEXT NOT NULL DEFAULT 'general chat',
  topics_policy                   TEXT NOT NULL DEFAULT 'allow_empty_topic',
  enable_spectator_access         INTEGER NOT NULL DEFAULT 0,
  invite_required                 INTEGER NOT NULL DEFAULT 1,
  emails_restricted_to_domains    INTEGER NOT NULL DEFAULT 0,
  disallow_disposable_email_addresses INTEGER NOT NULL DEFAULT 1,
  waiting_period_threshold        INTEGER NOT NULL DEFAULT 0,
  default_language                TEXT NOT NULL DEFAULT 'en',
  welcome_message_custom_text     TEXT NOT NULL DEFAULT '',
  upload_quota_mib                INTEGER,                       -- NULL: no quota
  max_file_upload_size_mib        INTEGER,                       -- NULL: the server setting
  presence_last_update_id         INTEGER NOT NULL DEFAULT 0,   -- presence update-id protocol sequence
  -- permission group settings (user_group ids; filled in when the system groups are created)
  can_access_all_users_group      INTEGER,
  can_create_public_channel_group INTEGER,
  can_create_private_channel_group INTEGER,
  can_create_web_public_channel_group INTEGER,
  can_add_subscribers_group       INTEGER,
  can_invite_users_group          INTEGER,
  can_create_groups               INTEGER,
  can_manage_all_groups           INTEGER,
  can_mention_many_users_group    INTEGER,
  can_move_messages_between_channels_group INTEGER,
  can_move_messages_between_topics_group INTEGER,
  can_delete_any_message_group    INTEGER,
  can_delete_own_message_group    INTEGER,
  can_resolve_topics_group        INTEGER,
  can_create_bots_group           INTEGER,
  can_create_write_only_bots_group INTEGER,
  can_add_custom_emoji_group      INTEGER,
  can_set_delete_message_policy_group INTEGER,
  can_set_topics_policy_group     INTEGER,
  can_summarize_topics_group      INTEGER,
  direct_message_initiator_group  INTEGER,
  direct_message_permission_group INTEGER,
  create_multiuse_invite_group    INTEGER,
  can_change_user_emails          INTEGER NOT NULL DEFAULT 0,
  message_content_edit_limit_seconds INTEGER,                    -- NULL: no limit
  message_content_delete_limit_seconds INTEGER,
  move_messages_within_stream_limit_seconds INTEGER DEFAULT 604800,
  move_messages_between_streams_limit_seconds INTEGER DEFAULT 604800,
  allow_message_editing           INTEGER NOT NULL DEFAULT 1,
  allow_edit_history              INTEGER NOT NULL DEFAULT 1,
  mandatory_topics                INTEGER NOT NULL DEFAULT 0,
  extra_settings                  TEXT NOT NULL DEFAULT '{}',    -- JSON: realm_* settings without a column yet
  icon_source                     TEXT NOT NULL DEFAULT 'G',     -- G built-in default, U uploaded (<uploads>/avatars/<id>/realm/icon)
  icon_version                    INTEGER NOT NULL DEFAULT 1     -- in the icon URL, so a new icon is never served from a cache
);

CREATE TABLE realm_domain (
  realm_id          INTEGER NOT NULL REFERENCES realm(id),
  domain            TEXT NOT NULL,
  allow_subdomains  INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (realm_id, domain)
);

-- Humans and bots. role: 100 owner, 200 administrator, 300 moderator, 400 member, 600 guest.
-- bot_type: NULL for humans; 1 generic, 2 incoming webhook, 3 outgoing webhook, 4 embedded.
CREATE TABLE user (
  id                      INTEGER PRIMARY KEY AUTOINCREMENT,
  realm_id                INTEGER NOT NULL REFERENCES realm(id),
  email                   TEXT NOT NULL,                 -- API email (what Basic auth names)
  delivery_email          TEXT NOT NULL,                 -- where mail goes
  full_name               TEXT NOT NULL,
  password_hash           TEXT,                          -- bcrypt; NULL: no password login
  api_key                 TEXT NOT NULL,                 -- 32 alphanumeric characters
  role                    INTEGER NOT NULL DEFAULT 400,
  is_active               INTEGER NOT NULL DEFAULT 1,
  bot_type                INTEGER,
  bot_owner_id            INTEGER REFERENCES user(id),
  is_imported_stub        INTEGER NOT NULL DEFAULT 0,
  date_joined             INTEGER NOT NULL,              -- creation time until first login (see first_login)
  first_login_pending     INTEGER NOT NULL DEFAULT 0,    -- API-created or imported: date_joined moves on first login
  last_login              INTEGER,
  avatar_version          INTEGER NOT NULL DEFAULT 1,
  avatar_source           TEXT NOT NULL DEFAULT 'G',     -- G gravatar, U uploaded
  tos_version             TEXT,
  -- bots
  default_sending_stream_id          INTEGER,
  default_events_register_stream_id  INTEGER,
  default_all_public_streams         INTEGER NOT NULL DEFAULT 0,
  -- personal settings (PATCH /settings)
  timezone                                TEXT NOT NULL DEFAULT '',
  default_language                        TEXT NOT NULL DEFAULT 'en',
  twenty_four_hour_time                   INTEGER NOT NULL DEFAULT 0,
  web_channel_default_view                INTEGER NOT NULL DEFAULT 1,
  starred_message_counts                  INTEGER NOT NULL DEFAULT 1,
  receives_typing_notifications           INTEGER NOT NULL DEFAULT 1,
  web_suggest_update_timezone             INTEGER NOT NULL DEFAULT 1,
  fluid_layout_width                      INTEGER NOT NULL DEFAULT 0,
  high_contrast_mode                      INTEGER NOT NULL DEFAULT 0,
  web_font_size_px                        INTEGER NOT NULL DEFAULT 16,
  web_line_height_percent                 INTEGER NOT NULL DEFAULT 140,
  color_scheme                            INTEGER NOT NULL DEFAULT 1,
  enable_drafts_synchronization           INTEGER NOT NULL DEFAULT 1,
  translate_emoticons                     INTEGER NOT NULL DEFAULT 0,
  display_emoji_reaction_users            INTEGER NOT NULL DEFAULT 1,
  web_home_view                           TEXT NOT NULL DEFAULT 'inbox',
  web_escape_navigates_to_home_view       INTEGER NOT NULL DEFAULT 1,
  left_side_userlist                      INTEGER NOT NULL DEFAULT 0,
  emojiset                                TEXT NOT NULL DEFAULT 'google',
  demote_inactive_streams                 INTEGER NOT NULL DEFAULT 1,
  user_list_style                         INTEGER NOT NULL DEFAULT 2,
  web_animate_image_previews              TEXT NOT NULL DEFAULT 'on_hover',
  web_stream_unreads_count_display_policy INTEGER NOT NULL DEFAULT 2,
  hide_ai_features                        INTEGER NOT NULL DEFAULT 0,
  web_inbox_show_channel_folders          INTEGER NOT NULL DEFAULT 1,
  enable_stream_desktop_notifications     INTEGER NOT NULL DEFAULT 0,
  enable_stream_email_notifications       INTEGER NOT NULL DEFAULT 0,
  enable_stream_push_notifications        INTEGER NOT NULL DEFAULT 0,
  enable_stream_audible_notifications     INTEGER NOT NULL DEFAULT 0,
  notification_sound                      TEXT NOT NULL DEFAULT 'zulip',
  enable_desktop_notifications            INTEGER NOT NULL DEFAULT 1,
  enable_sounds                           INTEGER NOT NULL DEFAULT 1,
  email_notifications_batching_period_seconds INTEGER NOT NULL DEFAULT 120,
  enable_offline_email_notifications      INTEGER NOT NULL DEFAULT 1,
  enable_offline_push_notifications       INTEGER NOT NULL DEFAULT 1,
  enable_online_push_notifications        INTEGER NOT NULL DEFAULT 1,
  enable_followed_topic_desktop_notifications INTEGER NOT NULL DEFAULT 1,
  enable_followed_topic_email_notifications   INTEGER NOT NULL DEFAULT 1,
  enable_followed_topic_push_notifications    INTEGER NOT NULL DEFAULT 1,
  enable_followed_topic_audible_notifications INTEGER NOT NULL DEFAULT 1,
  enable_followed_topic_wildcard_mentions_notify INTEGER NOT NULL DEFAULT 1,
  enable_digest_emails                    INTEGER NOT NULL DEFAULT 1,
  enable_login_emails                     INTEGER NOT NULL DEFAULT 1,
  enable_marketing_emails                 INTEGER NOT NULL DEFAULT 1,
  message_content_in_email_notifications  INTEGER NOT NULL DEFAULT 1,
  pm_content_in_desktop_notifications     INTEGER NOT NULL DEFAULT 1,
  wildcard_mentions_notify                INTEGER NOT NULL DEFAULT 1,
  desktop_icon_count_display              INTEGER NOT NULL DEFAULT 1,
  realm_name_in_email_notifications_policy INTEGER NOT NULL DEFAULT 1,
  automatically_follow_topics_policy      INTEGER NOT NULL DEFAULT 3,
  automatically_unmute_topics_in_muted_streams_policy INTEGER NOT NULL DEFAULT 2,
  automatically_follow_topics_where_mentioned INTEGER NOT NULL DEFAULT 1,
  presence_enabled                        INTEGER NOT NULL DEFAULT 1,
  enter_sends                             INTEGER NOT NULL DEFAULT 0,
  send_private_typing_notifications       INTEGER NOT NULL DEFAULT 1,
  send_stream_typing_notifications        INTEGER NOT NULL DEFAULT 1,
  send_read_receipts                      INTEGER NOT NULL DEFAULT 1,
  allow_private_data_export               INTEGER NOT NULL DEFAULT 0,
  email_address_visibility                INTEGER NOT NULL DEFAULT 1,
  web_navigate_to_sent_message            INTEGER NOT NULL DEFAULT 1,
  web_mark_read_on_scroll_policy          INTEGER NOT NULL DEFAULT 1,
  resolved_topic_notice_auto_read_policy  TEXT NOT NULL DEFAULT 'except_followed',
  edited_settings                         TEXT NOT NULL DEFAULT '[]', -- JSON: settings the user changed themselves
  avatar_file                             TEXT                        -- uploaded avatar (avatar_source U): random name under <uploads>/avatars/<realm_id>/
);
CREATE UNIQUE INDEX user_realm_email ON user(realm_id, email COLLATE NOCASE);
CREATE UNIQUE INDEX user_realm_delivery_email ON user(realm_id, delivery_email COLLATE NOCASE);
CREATE UNIQUE INDEX user_api_key ON user(api_key);
CREATE INDEX user_bot_owner ON user(bot_owner_id) WHERE bot_owner_id IS NOT NULL;
-- @-mentions by name (lib/render.ts) and the bot name check: without it each mention scanned the
-- organization's users.
CREATE INDEX user_realm_full_name ON user(realm_id, full_name COLLATE NOCASE);

-- Web login sessions (HttpOnly cookie). The cookie holds a random token; only its SHA-256 is stored.
CREATE TABLE session (
  token_hash  TEXT PRIMARY KEY,
  user_id     INTEGER NOT NULL REFERENCES user(id),
  created     INTEGER NOT NULL,
  expires     INTEGER NOT NULL
);
CREATE INDEX session_user ON session(user_id);

-- User groups: named groups, system groups (role:*), and anonymous groups holding group-setting values.
CREATE TABLE user_group (
  id                        INTEGER PRIMARY KEY AUTOINCREMENT,
  realm_id                  INTEGER NOT NULL REFERENCES realm(id),
  name                      TEXT,                         -- NULL for anonymous groups
  description               TEXT NOT NULL DEFAULT '',
  named                     INTEGER NOT NULL DEFAULT 1,
  is_system_group           INTEGER NOT NULL DEFAULT 0,
  deactivated               INTEGER NOT NULL DEFAULT 0,
  date_created              INTEGER,
  creator_id                INTEGER REFERENCES user(id),
  can_add_members_group     INTEGER,
  can_join_group            INTEGER,
  can_leave_group           INTEGER,
  can_manage_group          INTEGER,
  can_mention_group         INTEGER,
  can_remove_members_group  INTEGER
);
CREATE UNIQUE INDEX user_group_realm_name ON user_group(realm_id, name) WHERE name IS NOT NULL;

CREATE TABLE user_group_member (
  group_id  INTEGER NOT NULL REFERENCES user_group(id),
  user_id   INTEGER NOT NULL REFERENCES user(id),
  PRIMARY KEY (group_id, user_id)
) WITHOUT ROWID;
CREATE INDEX user_group_member_user ON user_group_member(user_id, group_id);

CREATE TABLE user_group_subgroup (
  supergroup_id  INTEGER NOT NULL REFERENCES user_group(id),
  subgroup_id    INTEGER NOT NULL REFERENCES user_group(id),
  PRIMARY KEY (supergroup_id, subgroup_id)
) WITHOUT ROWID;
CREATE INDEX user_group_subgroup_sub ON user_group_subgroup(subgroup_id, supergroup_id);

CREATE TABLE channel_folder (
  id                    INTEGER PRIMARY KEY AUTOINCREMENT,
  realm_id              INTEGER NOT NULL REFERENCES realm(id),
  name                  TEXT NOT NULL,
  description           TEXT NOT NULL DEFAULT '',
  rendered_description  TEXT NOT NULL DEFAULT '',
  "order"               INTEGER NOT NULL DEFAULT 0,
  date_created          INTEGER NOT NULL,
  creator_id            INTEGER REFERENCES user(id),
  is_archived           INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX channel_folder_realm_name ON channel_folder(realm_id, name COLLATE NOCASE);

-- Channels (streams). message_retention_days: NULL realm default, -1 unlimited, N days.
-- topics_policy: inherit, allow_empty_topic, disable_empty_topic, empty_topic_only.
CREATE TABLE stream (
  id                                     INTEGER PRIMARY KEY AUTOINCREMENT,
  realm_id                               INTEGER NOT NULL REFERENCES realm(id),
  name                                   TEXT NOT NULL,
  description                            TEXT NOT NULL DEFAULT '',
  rendered_description                   TEXT NOT NULL DEFAULT '',
  date_created                           INTEGER NOT NULL,
  creator_id                             INTEGER REFERENCES user(id),
  invite_only                            INTEGER NOT NULL DEFAULT 0,
  is_web_public                          INTEGER NOT NULL DEFAULT 0,
  history_public_to_subscribers          INTEGER NOT NULL DEFAULT 1,
  message_retention_days                 INTEGER,
  topics_policy                          TEXT NOT NULL DEFAULT 'inherit',
  folder_id                              INTEGER REFERENCES channel_folder(id),
  deactivated                            INTEGER NOT NULL DEFAULT 0,   -- archived
  first_message_id                       INTEGER,
  is_recently_active                     INTEGER NOT NULL DEFAULT 1,
  can_add_subscribers_group              INTEGER,
  can_administer_channel_group           INTEGER,
  can_create_topic_group                 INTEGER,
  can_delete_any_message_group           INTEGER,
  can_delete_own_message_group           INTEGER,
  can_move_messages_out_of_channel_group INTEGER,
  can_move_messages_within_channel_group INTEGER,
  can_remove_subscribers_group           INTEGER,
  can_resolve_topics_group               INTEGER,
  can_send_message_group                 INTEGER,
  can_subscribe_group                    INTEGER
);
CREATE UNIQUE INDEX stream_realm_name ON stream(realm_id, name COLLATE NOCASE);

CREATE TABLE default_stream (
  realm_id   INTEGER NOT NULL REFERENCES realm(id),
  stream_id  INTEGER NOT NULL REFERENCES stream(id),
  PRIMARY KEY (realm_id, stream_id)
) WITHOUT ROWID;

-- Per-user channel membership and properties. Notification columns: NULL inherits the user setting.
CREATE TABLE subscription (
  user_id                   INTEGER NOT NULL REFERENCES user(id),
  stream_id                 INTEGER NOT NULL REFERENCES stream(id),
  active                    INTEGER NOT NULL DEFAULT 1,
  is_muted                  INTEGER NOT NULL DEFAULT 0,
  color                     TEXT NOT NULL DEFAULT '#c2c2c2',
  pin_to_top                INTEGER NOT NULL DEFAULT 0,
  desktop_notifications     INTEGER,
  audible_notifications     INTEGER,
  push_notifications        INTEGER,
  email_notifications       INTEGER,
  wildcard_mentions_notify  INTEGER,
  PRIMARY KEY (user_id, stream_id)
) WITHOUT ROWID;
CREATE INDEX subscription_stream ON subscription(stream_id, user_id) WHERE active = 1;

-- Direct-message conversations: one row per distinct set of participants (1:1, group, and self).
CREATE TABLE direct_group (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  realm_id    INTEGER NOT NULL REFERENCES realm(id),
  member_key  TEXT NOT NULL                  -- sorted member ids joined by ','
);
CREATE UNIQUE INDEX direct_group_key ON direct_group(realm_id, member_key);

CREATE TABLE direct_group_member (
  group_id  INTEGER NOT NULL REFERENCES direct_group(id),
  user_id   INTEGER NOT NULL REFERENCES user(id),
  PRIMARY KEY (group_id, user_id)
) WITHOUT ROWID;
CREATE INDEX direct_group_member_user ON direct_group_member(user_id, group_id);

-- Messages. Channel messages have stream_id; direct messages have direct_group_id and topic ''.
-- topic_key is the case-folded topic, so topic narrows are index lookups. AUTOINCREMENT: an id is
-- never used twice, even after the newest message is deleted (Zulip clients take a higher id as a
-- newer message, and the usermessage cursors below rely on it).
CREATE TABLE message (
  id                 INTEGER PRIMARY KEY AUTOINCREMENT,
  realm_id           INTEGER NOT NULL REFERENCES realm(id),
  sender_id          INTEGER NOT NULL REFERENCES user(id),
  stream_id          INTEGER REFERENCES stream(id),
  direct_group_id    INTEGER REFERENCES direct_group(id),
  topic              TEXT NOT NULL DEFAULT '',
  topic_key          TEXT NOT NULL DEFAULT '',
  content            TEXT NOT NULL,
  rendered_content   TEXT NOT NULL,
  date_sent          INTEGER NOT NULL,
  last_edit_time     INTEGER,
  last_moved_time    INTEGER,
  edit_history       TEXT,                     -- JSON array, newest first, as Zulip returns it
  has_link           INTEGER NOT NULL DEFAULT 0,
  has_image          INTEGER NOT NULL DEFAULT 0,
  has_attachment     INTEGER NOT NULL DEFAULT 0,
  client             TEXT NOT NULL DEFAULT 'API'
);
CREATE INDEX message_stream_topic ON message(stream_id, topic_key, id) WHERE stream_id IS NOT NULL;
CREATE INDEX message_stream ON message(stream_id, id) WHERE stream_id IS NOT NULL;
CREATE INDEX message_direct_group ON message(direct_group_id, id) WHERE direct_group_id IS NOT NULL;
CREATE INDEX message_sender ON message(sender_id, id);

-- Full-text index over topic and content (external content: the message table holds the text). Words
-- are stemmed as English (porter), as Zulip's PostgreSQL search stems them: "runs" finds "running".
CREATE VIRTUAL TABLE message_fts USING fts5(
  topic, content, content='message', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2'
);

-- Per-user message rows: who received a message and their flags.
-- flags bits: 1 read, 2 starred, 4 collapsed, 8 mentioned, 16 stream_wildcard_mentioned,
-- 32 topic_wildcard_mentioned, 64 group_mentioned, 128 has_alert_word, 256 historical,
-- 512 is_private, 1024 active_mobile_push_notification.
-- Keyed by user first, as the reads are (a user's history, unread, starred, mentions). A channel
-- message's rows are not all written at send time: see usermessage_cursor below.
CREATE TABLE usermessage (
  user_id     INTEGER NOT NULL,
  message_id  INTEGER NOT NULL,
  flags       INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (user_id, message_id)
) WITHOUT ROWID;
CREATE INDEX usermessage_message ON usermessage(message_id, user_id);
-- usermessage_unread holds the flags too: reads of unread rows (the unread_msgs of /register, 2,000
-- rows for a busy user, and is:unread narrows) find them in the index without a seek in the table
-- per row; an index entry changed with the flags already (they decide the partial index).
CREATE INDEX usermessage_unread ON usermessage(user_id, message_id, flags) WHERE (flags & 1) = 0;
CREATE INDEX usermessage_starred ON usermessage(user_id, message_id) WHERE (flags & 2) <> 0;
CREATE INDEX usermessage_mentioned ON usermessage(user_id, message_id) WHERE (flags & 120) <> 0;
CREATE INDEX usermessage_private ON usermessage(user_id, message_id) WHERE (flags & 512) <> 0;
-- Messages a push told the user's phones about, to withdraw when read (src/push/remove.ts).
CREATE INDEX usermessage_active_push ON usermessage(user_id, message_id) WHERE (flags & 1024) <> 0;

-- Rows that are a user's before they are written. A channel message gives every active subscriber a
-- row, and for most of them it is the plain one: flags 0 (unread, nothing else). Writing those rows
-- at send time, keyed by user, costs ~100 µs per message to 50 subscribers (50 scattered B-tree
-- pages at every commit: bench/README.md), so a send writes only the rows that differ (the sender's,
-- mentions, alert words, muted senders, direct messages) and leaves the plain ones implied:
--
--   a user has the row (user, m, flags 0), unless usermessage holds one, for every message m newer
--   than the user's cursor in a channel the user is actively subscribed to, while the user is active.
--
-- Moving a cursor forward writes the implied rows it passes over (trigger usermessage_cursor_advance),
-- in user order, so they land on a few pages. Code that reads or changes a user's rows moves that
-- user's cursor to the newest message first (src/lib/user-messages.ts); a lookup of one message
-- reads usermessage_pending beside usermessage. Every change to what is implied (a subscription, the
-- user's activity, a message changing channel) first moves the cursors it affects (triggers below),
-- so what was implied under the old state is written under the old state. A user with no cursor
-- has no implied rows: the first subscription creates it at the newest message.
CREATE TABLE usermessage_cursor (
  user_id     INTEGER PRIMARY KEY,
  message_id  INTEGER NOT NULL
);
CREATE INDEX usermessage_cursor_position ON usermessage_cursor(message_id);

-- The implied rows (flags 0), some of which usermessage may already hold with their own flags.
CREATE VIEW usermessage_pending AS
SELECT c.user_id AS user_id, m.id AS message_id
FROM usermessage_cursor c
JOIN user u ON u.id = c.user_id AND u.is_active = 1
JOIN subscription s ON s.user_id = c.user_id AND s.active = 1
JOIN message m ON m.stream_id = s.stream_id AND m.id > c.message_id;

CREATE TRIGGER usermessage_cursor_advance BEFORE UPDATE OF message_id ON usermessage_cursor
WHEN NEW.message_id > OLD.message_id
BEGIN
  -- NOT EXISTS rather than OR IGNORE: an outer INSERT OR REPLACE would turn OR IGNORE into REPLACE.
  INSERT INTO usermessage (user_id, message_id, flags)
  SELECT p.user_id, p.message_id, 0 FROM usermessage_pending p
  WHERE p.user_id = OLD.user_id AND p.message_id <= NEW.message_id
    AND NOT EXISTS (SELECT 1 FROM usermessage x WHERE x.user_id = p.user_id AND x.message_id = p.message_id)
  ORDER BY p.message_id;
END;

CREATE TRIGGER usermessage_cursor_forward_only BEFORE UPDATE OF message_id ON usermessage_cursor
WHEN NEW.message_id < OLD.message_id
BEGIN
  SELECT RAISE(ABORT, 'usermessage_cursor only moves forward');
END;

-- Before a user's subscriptions change: their implied rows so far are written, and the cursor
-- (created here on the first subscription) stands at the newest message.
CREATE TRIGGER subscription_insert_cursor BEFORE INSERT ON subscription
BEGIN
  UPDATE usermessage_cursor SET message_id = (SELECT coalesce(max(id), 0) FROM message)
  WHERE user_id = NEW.user_id AND message_id < (SELECT coalesce(max(id), 0) FROM message);
  INSERT INTO usermessage_cursor (user_id, message_id)
  SELECT NEW.user_id, (SELECT coalesce(max(id), 0) FROM message)
  WHERE NOT EXISTS (SELECT 1 FROM usermessage_cursor WHERE user_id = NEW.user_id);
END;

CREATE TRIGGER subscription_update_cursor BEFORE UPDATE OF user_id, stream_id, active ON subscription
WHEN OLD.active IS NOT NEW.active OR OLD.user_id IS NOT NEW.user_id OR OLD.stream_id IS NOT NEW.stream_id
BEGIN
  UPDATE usermessage_cursor SET message_id = (SELECT coalesce(max(id), 0) FROM message)
  WHERE user_id IN (OLD.user_id, NEW.user_id) AND message_id < (SELECT coalesce(max(id), 0) FROM message);
END;

CREATE TRIGGER subscription_delete_cursor BEFORE DELETE ON subscription
BEGIN
  UPDATE usermessage_cursor SET message_id = (SELECT coalesce(max(id), 0) FROM message)
  WHERE user_id = OLD.user_id AND message_id < (SELECT coalesce(max(id), 0) FROM message);
END;

CREATE TRIGGER user_active_cursor BEFORE UPDATE OF is_active ON user
WHEN OLD.is_active IS NOT NEW.is_active
BEGIN
  UPDATE usermessage_cursor SET message_id = (SELECT coalesce(max(id), 0) FROM message)
  WHERE user_id = OLD.id AND message_id < (SELECT coalesce(max(id), 0) FROM message);
END;

-- A message changing channel: the old channel's subscribers get their implied rows written, and the
-- new channel's subscribers are moved past it, so that no row appears or vanishes by implication.
CREATE TRIGGER message_move_cursor BEFORE UPDATE OF stream_id ON message
WHEN OLD.stream_id IS NOT NEW.stream_id
BEGIN
  UPDATE usermessage_cursor SET message_id = (SELECT max(id) FROM message)
  WHERE message_id < OLD.id
    AND user_id IN (SELECT user_id FROM subscription WHERE stream_id IN (OLD.stream_id, NEW.stream_id) AND active = 1);
END;

-- reaction_type: unicode_emoji, realm_emoji, zulip_extra_emoji. The rowid keeps the order reactions
-- were added in, which is the order clients show them.
CREATE TABLE reaction (
  id             INTEGER PRIMARY KEY,
  message_id     INTEGER NOT NULL REFERENCES message(id) ON DELETE CASCADE,
  user_id        INTEGER NOT NULL REFERENCES user(id),
  emoji_name     TEXT NOT NULL,
  emoji_code     TEXT NOT NULL,
  reaction_type  TEXT NOT NULL DEFAULT 'unicode_emoji'
);
CREATE UNIQUE INDEX reaction_unique ON reaction(message_id, user_id, reaction_type, emoji_code);

-- Submessages: the data of a message's widget (/poll, /todo), as Zulip's SubMessage. The first is the
-- widget itself (msg_type 'widget', written with the message); each later one is a vote, a new option
-- or task, an edit of the question or title. Clients replay them in id order. AUTOINCREMENT: ids reach
-- clients. They go with their message (deletion, retention: ON DELETE CASCADE).
CREATE TABLE submessage (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  message_id  INTEGER NOT NULL REFERENCES message(id) ON DELETE CASCADE,
  sender_id   INTEGER NOT NULL REFERENCES user(id),
  msg_type    TEXT NOT NULL,
  content     TEXT NOT NULL
);
CREATE INDEX submessage_message ON submessage(message_id, id);

-- Muted/followed topics. visibility_policy: 0 inherit, 1 muted, 2 unmuted, 3 followed.
CREATE TABLE user_topic (
  user_id            INTEGER NOT NULL REFERENCES user(id),
  stream_id          INTEGER NOT NULL REFERENCES stream(id),
  topic_key          TEXT NOT NULL,
  topic_name         TEXT NOT NULL,
  visibility_policy  INTEGER NOT NULL,
  last_updated       INTEGER NOT NULL,
  PRIMARY KEY (user_id, stream_id, topic_key)
) WITHOUT ROWID;

CREATE TABLE muted_user (
  user_id        INTEGER NOT NULL REFERENCES user(id),
  muted_user_id  INTEGER NOT NULL REFERENCES user(id),
  date_muted     INTEGER NOT NULL,
  PRIMARY KEY (user_id, muted_user_id)
) WITHOUT ROWID;

CREATE TABLE alert_word (
  user_id  INTEGER NOT NULL REFERENCES user(id),
  word     TEXT NOT NULL,
  PRIMARY KEY (user_id, word)
) WITHOUT ROWID;

CREATE TABLE user_status (
  user_id        INTEGER PRIMARY KEY REFERENCES user(id),
  status_text    TEXT NOT NULL DEFAULT '',
  emoji_name     TEXT NOT NULL DEFAULT '',
  emoji_code     TEXT NOT NULL DEFAULT '',
  reaction_type  TEXT NOT NULL DEFAULT 'unicode_emoji',
  timestamp      INTEGER NOT NULL
);

-- Presence: one row per user; last_update_id follows realm.presence_last_update_id.
CREATE TABLE presence (
  user_id              INTEGER PRIMARY KEY REFERENCES user(id),
  realm_id             INTEGER NOT NULL REFERENCES realm(id),
  last_active_time     INTEGER,
  last_connected_time  INTEGER,
  last_update_id       INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX presence_realm_update ON presence(realm_id, last_update_id);

CREATE TABLE linkifier (
  id                         INTEGER PRIMARY KEY AUTOINCREMENT,
  realm_id                   INTEGER NOT NULL REFERENCES realm(id),
  pattern                    TEXT NOT NULL,
  url_template               TEXT NOT NULL,
  example_input              TEXT,
  reverse_template           TEXT,
  alternative_url_templates  TEXT NOT NULL DEFAULT '[]',  -- JSON array of strings
  "order"                    INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX linkifier_realm_pattern ON linkifier(realm_id, pattern);

CREATE TABLE realm_emoji (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  realm_id     INTEGER NOT NULL REFERENCES realm(id),
  name         TEXT NOT NULL,
  author_id    INTEGER REFERENCES user(id),
  file_name    TEXT,
  deactivated  INTEGER NOT NULL DEFAULT 0
);
-- :name: in a message (lib/render.ts) looks its emoji up by name: without it, a scan of every
-- organization's custom emoji per :name:.
CREATE INDEX realm_emoji_realm_name ON realm_emoji(realm_id, name, deactivated, id);

-- Custom profile fields and their per-user values.
CREATE TABLE custom_profile_field (
  id                          INTEGER PRIMARY KEY AUTOINCREMENT,
  realm_id                    INTEGER NOT NULL REFERENCES realm(id),
  name                        TEXT NOT NULL,
  hint                        TEXT NOT NULL DEFAULT '',
  field_type                  INTEGER NOT NULL,
  field_data                  TEXT NOT NULL DEFAULT '',
  "order"                     INTEGER NOT NULL DEFAULT 0,
  display_in_profile_summary  INTEGER NOT NULL DEFAULT 0,
  required                    INTEGER NOT NULL DEFAULT 0,
  editable_by_user            INTEGER NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX custom_profile_field_name ON custom_profile_field(realm_id, name COLLATE NOCASE);

CREATE TABLE custom_profile_field_value (
  user_id         INTEGER NOT NULL REFERENCES user(id),
  field_id        INTEGER NOT NULL REFERENCES custom_profile_field(id) ON DELETE CASCADE,
  value           TEXT NOT NULL,
  rendered_value  TEXT,
  PRIMARY KEY (user_id, field_id)
) WITHOUT ROWID;

-- Per-bot key/value storage (PUT /bot_storage).
CREATE TABLE bot_storage (
  bot_id  INTEGER NOT NULL REFERENCES user(id),
  key     TEXT NOT NULL,
  value   TEXT NOT NULL,
  PRIMARY KEY (bot_id, key)
) WITHOUT ROWID;

-- Outgoing-webhook and embedded bot services.
CREATE TABLE bot_service (
  id         INTEGER PRIMARY KEY,
  bot_id     INTEGER NOT NULL REFERENCES user(id),
  name       TEXT NOT NULL,
  base_url   TEXT NOT NULL DEFAULT '',
  interface  INTEGER NOT NULL DEFAULT 1,
  config     TEXT NOT NULL DEFAULT '{}'
);

-- Uploaded files. path_id is the file's path below DATA_DIR/uploads and in /user_uploads/ URLs.
CREATE TABLE attachment (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  realm_id         INTEGER NOT NULL REFERENCES realm(id),
  owner_id         INTEGER NOT NULL REFERENCES user(id),
  path_id          TEXT NOT NULL UNIQUE,
  file_name        TEXT NOT NULL,
  content_type     TEXT,
  size             INTEGER NOT NULL,
  create_time      INTEGER NOT NULL,
  is_realm_public  INTEGER NOT NULL DEFAULT 0,
  is_web_public    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX attachment_owner ON attachment(owner_id);

CREATE TABLE attachment_message (
  attachment_id  INTEGER NOT NULL REFERENCES attachment(id) ON DELETE CASCADE,
  message_id     INTEGER NOT NULL REFERENCES message(id) ON DELETE CASCADE,
  PRIMARY KEY (attachment_id, message_id)
) WITHOUT ROWID;
CREATE INDEX attachment_message_message ON attachment_message(message_id);

CREATE TABLE attachment_scheduled_message (
  attachment_id         INTEGER NOT NULL REFERENCES attachment(id) ON DELETE CASCADE,
  scheduled_message_id  INTEGER NOT NULL REFERENCES scheduled_message(id) ON DELETE CASCADE,
  PRIMARY KEY (attachment_id, scheduled_message_id)
) WITHOUT ROWID;

-- Resumable (tus) uploads in progress; the partial bytes live in DATA_DIR/uploads/tus/<id>.
CREATE TABLE tus_upload (
  id            TEXT PRIMARY KEY,
  realm_id      INTEGER NOT NULL REFERENCES realm(id),
  user_id       INTEGER NOT NULL REFERENCES user(id),
  length        INTEGER NOT NULL,
  offset        INTEGER NOT NULL DEFAULT 0,
  file_name     TEXT NOT NULL,
  content_type  TEXT,
  created       INTEGER NOT NULL,
  expires       INTEGER NOT NULL
);

-- Mobile push. client_device hands out device_id (never reused: a client that kept an old id must
-- not act on another device); push_device holds the E2EE registration (push_key = 0x31 || 32-byte
-- secretbox key): token_id is the token in use, token_updated when it last changed,
-- registered_token_id the one the push service acknowledged (token_id while they differ is
-- pending), registration_error the service's error code for token_id. legacy_push_token is the
-- pre-E2EE registration.
CREATE TABLE client_device (
  id       INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id  INTEGER NOT NULL REFERENCES user(id),
  created  INTEGER NOT NULL
);

CREATE TABLE push_device (
  device_id                    INTEGER PRIMARY KEY REFERENCES client_device(id) ON DELETE CASCADE,
  user_id                      INTEGER NOT NULL REFERENCES user(id),
  push_key_id                  INTEGER,
  push_key                     BLOB,
  token_kind                   TEXT,
  token_id                     TEXT,
  bouncer_public_key           TEXT,
  encrypted_push_registration  TEXT,
  updated                      INTEGER NOT NULL,
  token_updated                INTEGER,
  registered_token_id          TEXT,
  registration_error           TEXT
);
CREATE INDEX push_device_user ON push_device(user_id);

CREATE TABLE legacy_push_token (
  id          INTEGER PRIMARY KEY,
  user_id     INTEGER NOT NULL REFERENCES user(id),
  kind        TEXT NOT NULL,              -- fcm or apns
  token       TEXT NOT NULL,
  ios_app_id  TEXT,
  updated     INTEGER NOT NULL
);
CREATE UNIQUE INDEX legacy_push_token_user ON legacy_push_token(user_id, kind, token);

-- Invitations (single-address and multi-use links) and what an accepted one grants.
-- status: 0 pending, 1 used, 2 revoked. expires NULL: never.
CREATE TABLE invitation (
  id                                   INTEGER PRIMARY KEY AUTOINCREMENT,
  realm_id                             INTEGER NOT NULL REFERENCES realm(id),
  email                                TEXT,                     -- NULL for multi-use links
  referrer_id                          INTEGER NOT NULL REFERENCES user(id),
  invited_as                           INTEGER NOT NULL DEFAULT 400,
  confirmation_key                     TEXT NOT NULL UNIQUE,
  created                              INTEGER NOT NULL,
  expires                              INTEGER,
  status                               INTEGER NOT NULL DEFAULT 0,
  multiuse                             INTEGER NOT NULL DEFAULT 0,
  include_realm_default_subscriptions  INTEGER NOT NULL DEFAULT 0,
  notify_referrer_on_join              INTEGER NOT NULL DEFAULT 1,
  welcome_message_custom_text          TEXT,
  stream_ids                           TEXT NOT NULL DEFAULT '[]',  -- JSON
  group_ids                            TEXT NOT NULL DEFAULT '[]',  -- JSON
  -- A sign-up through a multi-use link, waiting for its address to be confirmed: the link it came
  -- from. The row is a single-use invitation to that address, sent to it, that no list shows.
  registration_of                      INTEGER REFERENCES invitation(id)
);
CREATE INDEX invitation_realm_status ON invitation(realm_id, status);

-- One-time links to set a password (`parley import` prints one per imported person, who has an account
-- but no password). Only the key's SHA-256 is kept, as for sessions: a copy of the database sets no
-- password. A link works once, until it expires.
CREATE TABLE password_link (
  id        INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id   INTEGER NOT NULL REFERENCES user(id),
  key_hash  TEXT NOT NULL UNIQUE,
  created   INTEGER NOT NULL,
  expires   INTEGER NOT NULL,
  used      INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX password_link_user ON password_link(user_id);

CREATE TABLE email_change (
  id                INTEGER PRIMARY KEY,
  user_id           INTEGER NOT NULL REFERENCES user(id),
  new_email         TEXT NOT NULL,
  confirmation_key  TEXT NOT NULL UNIQUE,
  created           INTEGER NOT NULL,
  expires           INTEGER NOT NULL,
  used              INTEGER NOT NULL DEFAULT 0
);

-- Scheduled messages (send later) and their delivery state.
CREATE TABLE scheduled_message (
  id                            INTEGER PRIMARY KEY AUTOINCREMENT,
  realm_id                      INTEGER NOT NULL REFERENCES realm(id),
  sender_id                     INTEGER NOT NULL REFERENCES user(id),
  type                          TEXT NOT NULL,            -- stream or private
  stream_id                     INTEGER,
  recipient_ids                 TEXT,                     -- JSON array for direct messages
  topic                         TEXT NOT NULL DEFAULT '',
  content                       TEXT NOT NULL,
  rendered_content              TEXT NOT NULL,
  scheduled_timestamp           INTEGER NOT NULL,
  failed                        INTEGER NOT NULL DEFAULT 0,
  failure_message               TEXT,
  delivered                     INTEGER NOT NULL DEFAULT 0,
  delivered_message_id          INTEGER,
  read_by_sender                INTEGER NOT NULL DEFAULT 1,
  created                       INTEGER NOT NULL,
  -- Zulip's delivery_type: 1 send later (GET /scheduled_messages), 2 a message reminder (GET
  -- /reminders), sent by Notification Bot to the sender; reminders share the id space and the timer.
  delivery_type                 INTEGER NOT NULL DEFAULT 1,
  reminder_target_message_id    INTEGER,                  -- no foreign key: the message may be deleted
  reminder_note                 TEXT
);
CREATE INDEX scheduled_message_due ON scheduled_message(scheduled_timestamp) WHERE delivered = 0 AND failed = 0;
CREATE INDEX scheduled_message_sender ON scheduled_message(sender_id);

-- Synchronised drafts. type: '' (none), stream, private.
CREATE TABLE draft (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id    INTEGER NOT NULL REFERENCES user(id),
  type       TEXT NOT NULL DEFAULT '',
  "to"       TEXT NOT NULL DEFAULT '[]',   -- JSON array of ids
  topic      TEXT NOT NULL DEFAULT '',
  content    TEXT NOT NULL,
  timestamp  INTEGER NOT NULL
);
CREATE INDEX draft_user ON draft(user_id);

-- Code playgrounds (Zulip's RealmPlayground): links from a code block of a language to an outside
-- site; url_template is an RFC 6570 template whose only variable is {code}.
CREATE TABLE realm_playground (
  id                 INTEGER PRIMARY KEY AUTOINCREMENT,
  realm_id           INTEGER NOT NULL REFERENCES realm(id),
  name               TEXT NOT NULL,
  pygments_language  TEXT NOT NULL,
  url_template       TEXT NOT NULL
);
CREATE UNIQUE INDEX realm_playground_unique ON realm_playground(realm_id, pygments_language, name);

-- A user's saved snippets (Zulip's SavedSnippet): reusable message text, private to the user.
CREATE TABLE saved_snippet (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id       INTEGER NOT NULL REFERENCES user(id),
  title         TEXT NOT NULL,
  content       TEXT NOT NULL,
  date_created  INTEGER NOT NULL
);
CREATE INDEX saved_snippet_user ON saved_snippet(user_id);

-- A user's navigation views (Zulip's NavigationView): built-in views pinned or hidden, and named
-- custom views, keyed by their URL fragment; the id only keeps their creation order.
CREATE TABLE navigation_view (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id    INTEGER NOT NULL REFERENCES user(id),
  fragment   TEXT NOT NULL,
  is_pinned  INTEGER NOT NULL DEFAULT 0,
  name       TEXT
);
CREATE UNIQUE INDEX navigation_view_user_fragment ON navigation_view(user_id, fragment);

-- Data exports requested over the API (Zulip's RealmExport): type 1 public, 2 full with member
-- consent; status 1 requested, 2 started, 3 succeeded, 4 failed, 5 deleted. export_path is the
-- tarball's URL path (/user_avatars/exports/REALM/TOKEN/NAME.tar.gz), set on success; the file lives
-- under DATA_DIR/exports and never leaves the data directory.
CREATE TABLE realm_export (
  id                  INTEGER PRIMARY KEY AUTOINCREMENT,
  realm_id            INTEGER NOT NULL REFERENCES realm(id),
  acting_user_id      INTEGER REFERENCES user(id),
  type                INTEGER NOT NULL,
  status              INTEGER NOT NULL,
  date_requested      REAL NOT NULL,
  date_started        REAL,
  date_succeeded      REAL,
  date_failed         REAL,
  date_deleted        REAL,
  export_path         TEXT,
  sha256sum_hex       TEXT,
  tarball_size_bytes  INTEGER,
  stats               TEXT
);
CREATE INDEX realm_export_realm ON realm_export(realm_id, date_requested);

-- Always empty: GET /health deletes from it, a statement that changes nothing but must take the
-- write lock, which proves the database takes writes (not read-only, not locked by another writer).
CREATE TABLE health_probe (
  id  INTEGER PRIMARY KEY
);
