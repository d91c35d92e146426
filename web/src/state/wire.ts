// The shapes of Zulip's API as this client reads them: its own copies (the web client imports
// nothing from the server's code). Only the fields the client uses are named; the rest pass through.

export interface User {
  user_id: number;
  full_name: string;
  email: string;
  avatar_url: string | null;
  is_bot: boolean;
  is_active: boolean;
  role: number;
  is_guest?: boolean;
  timezone?: string;
}

export interface Stream {
  stream_id: number;
  name: string;
  description: string;
  rendered_description?: string;
  invite_only: boolean;
  is_archived?: boolean;
  color?: string;
}

export interface Subscription extends Stream {
  color: string;
  is_muted: boolean;
  in_home_view?: boolean;
  pin_to_top: boolean;
}

export interface Reaction {
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
  user_id: number;
}

export interface DisplayRecipientUser {
  id: number;
  email: string;
  full_name: string;
}

export interface Message {
  id: number;
  type: 'stream' | 'private';
  sender_id: number;
  sender_full_name: string;
  sender_email: string;
  avatar_url: string | null;
  stream_id?: number;
  display_recipient: string | DisplayRecipientUser[];
  /** The topic ("subject" on the wire). */
  subject: string;
  content: string;
  timestamp: number;
  flags: string[];
  reactions: Reaction[];
  last_edit_timestamp?: number;
  is_me_message?: boolean;
  [extra: string]: unknown;
}

export interface UnreadMsgs {
  count: number;
  pms: { other_user_id?: number; sender_id?: number; unread_message_ids: number[] }[];
  streams: { stream_id: number; topic: string; unread_message_ids: number[] }[];
  huddles: { user_ids_string: string; unread_message_ids: number[] }[];
  mentions: number[];
  old_unreads_missing: boolean;
}

export interface UserSettings {
  enter_sends: boolean;
  color_scheme: number;
  twenty_four_hour_time: boolean;
  web_home_view?: string;
  send_read_receipts?: boolean;
  [extra: string]: unknown;
}

/** What the client reads from POST /register. */
export interface RegisterResponse {
  queue_id: string;
  last_event_id: number;
  zulip_feature_level: number;
  max_message_id: number;
  user_id: number;
  full_name: string;
  email: string;
  is_admin: boolean;
  is_guest: boolean;
  realm_name: string;
  realm_url?: string;
  realm_uri?: string;
  realm_empty_topic_display_name?: string;
  max_message_length: number;
  max_topic_length: number;
  server_typing_started_wait_period_milliseconds?: number;
  server_typing_stopped_wait_period_milliseconds?: number;
  server_typing_started_expiry_period_milliseconds?: number;
  event_queue_longpoll_timeout_seconds?: number;
  realm_users: User[];
  realm_non_active_users?: User[];
  cross_realm_bots?: User[];
  subscriptions: Subscription[];
  unsubscribed: Subscription[];
  never_subscribed: Stream[];
  unread_msgs: UnreadMsgs;
  starred_messages: number[];
  recent_private_conversations: { max_message_id: number; user_ids: number[] }[];
  user_topics: { stream_id: number; topic_name: string; visibility_policy: number; last_updated: number }[];
  muted_users: { id: number; timestamp: number }[];
  user_settings: UserSettings;
  [extra: string]: unknown;
}

/** One event from GET /events (a union by `type`, read loosely and checked where used). */
export interface ServerEvent {
  id: number;
  type: string;
  op?: string;
  [key: string]: unknown;
}

/** A narrow term as the API takes it. */
export interface Term {
  operator: string;
  operand: string | number | number[];
  negated?: boolean;
}
