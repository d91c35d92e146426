// Personal settings (PATCH /settings): each setting's wire type and allowed values, the language
// codes Zulip has translations for, and time zone names.
import type { UserRow } from './users';

export type SettingType = 'bool' | 'int' | 'str';

export interface SettingDef {
  type: SettingType;
  /** Allowed values for enumerations (checked by the parameter, Zulip's "Not in the list"). */
  values?: readonly (number | string)[];
}

const bool: SettingDef = { type: 'bool' };
const int: SettingDef = { type: 'int' };
const enumInt = (...values: number[]): SettingDef => ({ type: 'int', values });
const enumStr = (...values: string[]): SettingDef => ({ type: 'str', values });

/** Every setting PATCH /settings accepts, with the user table column of the same name. */
export const SETTINGS: Readonly<Record<string, SettingDef>> = {
  twenty_four_hour_time: bool,
  web_mark_read_on_scroll_policy: enumInt(1, 2, 3),
  web_channel_default_view: enumInt(1, 2, 3, 4),
  starred_message_counts: bool,
  receives_typing_notifications: bool,
  web_suggest_update_timezone: bool,
  fluid_layout_width: bool,
  high_contrast_mode: bool,
  web_font_size_px: int,
  web_line_height_percent: int,
  color_scheme: enumInt(1, 2, 3),
  enable_drafts_synchronization: bool,
  translate_emoticons: bool,
  display_emoji_reaction_users: bool,
  default_language: { type: 'str' },
  web_home_view: enumStr('recent', 'inbox', 'all_messages'),
  web_escape_navigates_to_home_view: bool,
  left_side_userlist: bool,
  emojiset: enumStr('google', 'twitter', 'text', 'google-blob'),
  demote_inactive_streams: enumInt(1, 2, 3),
  user_list_style: enumInt(1, 2, 3),
  web_animate_image_previews: enumStr('always', 'on_hover', 'never'),
  web_stream_unreads_count_display_policy: enumInt(1, 2, 3),
  hide_ai_features: bool,
  web_inbox_show_channel_folders: bool,
  timezone: { type: 'str' },
  enable_stream_desktop_notifications: bool,
  enable_stream_email_notifications: bool,
  enable_stream_push_notifications: bool,
  enable_stream_audible_notifications: bool,
  notification_sound: { type: 'str' },
  enable_desktop_notifications: bool,
  enable_sounds: bool,
  email_notifications_batching_period_seconds: int,
  enable_offline_email_notifications: bool,
  enable_offline_push_notifications: bool,
  enable_online_push_notifications: bool,
  enable_followed_topic_desktop_notifications: bool,
  enable_followed_topic_email_notifications: bool,
  enable_followed_topic_push_notifications: bool,
  enable_followed_topic_audible_notifications: bool,
  enable_followed_topic_wildcard_mentions_notify: bool,
  wildcard_mentions_notify: bool,
  enable_digest_emails: bool,
  enable_login_emails: bool,
  enable_marketing_emails: bool,
  message_content_in_email_notifications: bool,
  pm_content_in_desktop_notifications: bool,
  desktop_icon_count_display: enumInt(1, 2, 3, 4),
  realm_name_in_email_notifications_policy: enumInt(1, 2, 3),
  automatically_follow_topics_policy: enumInt(1, 2, 3, 4),
  automatically_unmute_topics_in_muted_streams_policy: enumInt(1, 2, 3, 4),
  automatically_follow_topics_where_mentioned: bool,
  presence_enabled: bool,
  enter_sends: bool,
  send_private_typing_notifications: bool,
  send_stream_typing_notifications: bool,
  send_read_receipts: bool,
  allow_private_data_export: bool,
  email_address_visibility: enumInt(1, 2, 3, 4, 5),
  web_navigate_to_sent_message: bool,
  resolved_topic_notice_auto_read_policy: enumStr('always', 'except_followed', 'never'),
};

/** Zulip's notification sounds ("none" turns them off). */
export const NOTIFICATION_SOUNDS = ['chime', 'ding', 'zulip'];

/** Largest email batching period Zulip accepts: one week. */
export const MAX_EMAIL_BATCHING_PERIOD_SECONDS = 7 * 24 * 60 * 60;

/** Zulip's language codes (locale/language_name_map.json) and their names. */
export const LANGUAGES: Readonly<Record<string, string>> = {
  ar: 'العربيّة',
  be: 'Беларуская',
  bg: 'Български',
  bn: 'বাংলা',
  bqi: 'Lurî Bəxtiyarî',
  ca: 'Català',
  cs: 'Čeština',
  cy: 'Cymraeg',
  da: 'Dansk',
  de: 'Deutsch',
  el: 'Ελληνικά',
  en: 'English',
  en_GB: 'British English',
  eo: 'Esperanto',
  es: 'Español',
  fa: 'فارسی',
  fi: 'Suomi',
  fr: 'Français',
  gl: 'Galego',
  gu: 'ગુજરાતી',
  hi: 'हिंदी',
  hu: 'Magyar',
  id: 'Bahasa Indonesia',
  it: 'Italiano',
  ja: '日本語',
  ko: '한국어',
  lt: 'Lietuviškai',
  lv: 'Latviešu',
  ml: 'മലയാളം',
  mn: 'Монгол',
  nl: 'Nederlands',
  no: 'Norsk',
  pl: 'Polski',
  pt: 'Português',
  pt_BR: 'Português (Brasil)',
  pt_PT: 'Português (Portugal)',
  ro: 'Română',
  ru: 'Русский',
  si: 'සිංහල',
  sk: 'Slovenčina',
  sr: 'Српски',
  sv: 'Svenska',
  ta: 'தமிழ்',
  te: 'తెలుగు',
  tl: 'Tagalog',
  tr: 'Türkçe',
  uk: 'Українська',
  uz: 'O‘zbek',
  vi: 'Tiếng Việt',
  'zh-hans': '简体中文',
  'zh-hant': '繁體中文',
};

let timezones: Set<string> | null = null;

/** Whether `tz` is an IANA time zone name this runtime knows, or "" (no zone set). */
export function isValidTimezone(tz: string): boolean {
  if (tz === '') return true;
  if (!timezones) {
    timezones = new Set(Intl.supportedValuesOf('timeZone'));
    // Intl lists canonical names only; UTC and aliases such as Asia/Calcutta are valid IANA names too.
    timezones.add('UTC');
    timezones.add('Etc/UTC');
  }
  if (timezones.has(tz)) return true;
  try {
    // Links (Asia/Calcutta, US/Eastern) resolve through Intl even when not listed.
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return /^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(tz);
  } catch {
    return false;
  }
}

/** The value of `name` for `user` as the API shows it (booleans from 0/1). */
export function settingValue(user: UserRow, name: string): unknown {
  const def = SETTINGS[name];
  const raw = user[name];
  if (def.type === 'bool') return raw === 1 || raw === true;
  if (def.type === 'int') return Number(raw);
  return String(raw ?? '');
}

/** Settings the user changed themselves (skip_if_already_edited). */
export function editedSettings(user: UserRow): Set<string> {
  try {
    const list = JSON.parse(String(user.edited_settings ?? '[]'));
    return new Set(Array.isArray(list) ? list.filter((x): x is string => typeof x === 'string') : []);
  } catch {
    return new Set();
  }
}

