// POST /messages/{id}/report (Zulip's report_message_backend and send_message_report): a member
// reports a message they can read; Notification Bot posts the report in the organization's
// moderation request channel, in a topic named after the reported user, with the reason, the
// reporter's notes and the message itself in a spoiler block. Texts are Zulip's.
import type { App } from '../app';
import { errors } from '../http/errors';
import { codePoints, prefixCodePoints } from '../http/params';
import { translate } from '../lib/i18n';
import { directRecipients, type MessageRow } from '../lib/messages';
import { getRealmById } from '../lib/realm';
import { realmChannel } from '../lib/realm-settings';
import { findStreamById } from '../lib/streams';
import { findUserById, type UserRow } from '../lib/users';
import { silentMention } from './channel-notices';
import { directMessageUrl, messageLinkSyntax } from './message-move-notices';
import { accessMessage, doSendMessage, MAX_MESSAGE_LENGTH } from './messages';
import { notificationBot } from './system-bots';

/** Zulip's Realm.REPORT_MESSAGE_REASONS: the report types and how the report names them. */
export const REPORT_MESSAGE_REASONS = {
  spam: 'Spam',
  harassment: 'Harassment',
  inappropriate: 'Inappropriate content',
  norms: 'Violates community norms',
  other: 'Other reason',
} as const;
export type ReportType = keyof typeof REPORT_MESSAGE_REASONS;

/** Zulip's Realm.MAX_REPORT_MESSAGE_EXPLANATION_LENGTH. */
export const MAX_REPORT_DESCRIPTION_LENGTH = 1000;

/**
 * Zulip's MAX_REPORT_MESSAGE_SNIPPET_LENGTH: the quoted message is shortened so that the notes and
 * the template around them (500 characters of room) fit in one message.
 */
export const MAX_REPORT_SNIPPET_LENGTH = MAX_MESSAGE_LENGTH - MAX_REPORT_DESCRIPTION_LENGTH - 500;
const SNIPPET_TRUNCATED = '\n[message truncated]';

/** Zulip's truncate_content (lengths in code points, as Python counts). */
function truncateContent(content: string, max: number, notice: string): string {
  return codePoints(content) > max ? prefixCodePoints(content, max - notice.length) + notice : content;
}

/** Zulip's get_unused_fence: a ``` fence longer than any fence inside the content. */
export function unusedFence(content: string): string {
  let length = 3;
  for (const m of content.matchAll(/^ {0,3}(`{3,})/gm)) length = Math.max(length, m[1].length + 1);
  return '`'.repeat(length);
}

/** Zulip's datetime_to_global_time: a <time:…> a client shows in each reader's own time zone. */
const globalTime = (seconds: number) => `<time:${new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, '+00:00')}>`;


/**
 * The report Notification Bot posts (Zulip's send_message_report): its content, in `locale` (the
 * organization's default language, as Zulip's override_language) where a catalogue has it.
 */
function reportContent(
  app: App,
  locale: string,
  reporter: UserRow,
  reported: UserRow,
  m: MessageRow,
  reportType: ReportType,
  description: string,
): string {
  const _ = (template: string, vars: Record<string, unknown>) => translate(locale, template, vars);
  const reporterMention = silentMention(reporter);
  const reportedMention = silentMention(reported);
  const at = globalTime(m.date_sent);
  let header: string;
  let original: string;
  if (m.stream_id !== null) {
    const s = findStreamById(app.db, m.realm_id, m.stream_id);
    header = _('{reporting_user_mention} reported a message sent by {reported_user_mention} at {reported_message_date_sent}.', {
      reporting_user_mention: reporterMention,
      reported_user_mention: reportedMention,
      reported_message_date_sent: at,
    });
    original = _('Original message at {channel_message_link}', { channel_message_link: messageLinkSyntax(m.stream_id, s?.name ?? '', m.topic, m.id) });
  } else {
    const members = directRecipients(app.db, m.direct_group_id as number);
    if (members.length <= 2) {
      // Zulip's is_1_to_1_message. Its display recipient (and so the link) is the one the message went to.
      const others = members.filter((u) => u.id !== m.sender_id);
      const recipient = others[0] ?? members[0] ?? reported;
      if (reported.id !== reporter.id) {
        header = _('{reporting_user_mention} reported a direct message sent by {reported_user_mention} at {reported_message_date_sent}.', {
          reporting_user_mention: reporterMention,
          reported_user_mention: reportedMention,
          reported_message_date_sent: at,
        });
      } else {
        // Someone reporting their own message names whom it went to (themselves, for a note to self).
        const to = members.find((u) => u.id !== reporter.id);
        header = _(
          '{reporting_user_mention} reported a direct message sent by {reported_user_mention} to {recipient_user} at {reported_message_date_sent}.',
          {
            reporting_user_mention: reporterMention,
            reported_user_mention: reportedMention,
            recipient_user: silentMention(to ?? reporter),
            reported_message_date_sent: at,
          },
        );
      }
      original = _('[Original message]({direct_message_link})', { direct_message_link: directMessageUrl(app, [recipient.id], m.id) });
    } else {
      // The other participants, their mentions sorted as text (Zulip sorts the mention strings).
      const mentions = members
        .filter((u) => u.id !== reported.id)
        .map(silentMention)
        .sort();
      const last = mentions.pop() as string;
      const list = mentions.join(', ') + (mentions.length > 1 ? ',' : '');
      header = _(
        '{reporting_user_mention} reported a direct message sent by {reported_user_mention} to {recipient_users} and {last_recipient_user} at {reported_message_date_sent}.',
        {
          reporting_user_mention: reporterMention,
          reported_user_mention: reportedMention,
          recipient_users: list,
          last_recipient_user: last,
          reported_message_date_sent: at,
        },
      );
      original = _('[Original message]({direct_message_link})', { direct_message_link: directMessageUrl(app, members.map((u) => u.id), m.id) });
    }
  }
  const snippet = truncateContent(m.content, MAX_REPORT_SNIPPET_LENGTH, SNIPPET_TRUNCATED);
  const fence = unusedFence(snippet);
  return (
    header +
    `\n\`\`\`quote\n**${_(REPORT_MESSAGE_REASONS[reportType], {})}**. ${description}\n\`\`\`\n\n` +
    `${fence} spoiler ${original}\n${snippet}\n${fence}\n`
  );
}

/**
 * POST /messages/{id}/report: checks as Zulip's report_message_backend (an explanation for "other",
 * reporting turned on, a message the reporter can read), then Notification Bot's report, all in one
 * write. Returns the report's message id.
 */
export function doReportMessage(app: App, reporter: UserRow, messageId: number, reportType: ReportType, description: string): number {
  if (reportType === 'other' && description === '') throw errors.badRequest('An explanation is required.');
  return app.batch.write(() => {
    const channel = realmChannel(app.db, reporter.realm_id, 'moderation_request_channel_id');
    if (!channel) throw errors.badRequest('Message reporting is not enabled in this organization.');
    const m = accessMessage(app, reporter, messageId);
    const reported = findUserById(app.db, m.realm_id, m.sender_id) as UserRow;
    // As Zulip's report_message_backend: the report is written in the organization's language.
    const locale = String(getRealmById(app.db, reporter.realm_id)?.default_language ?? 'en');
    const content = reportContent(app, locale, reporter, reported, m, reportType, description);
    // A channel that takes only the empty topic gets the report there.
    const topic = channel.topics_policy === 'empty_topic_only' ? '' : translate(locale, '{fullname} moderation', { fullname: reported.full_name });
    return doSendMessage(app, notificationBot(app, reporter.realm_id), {
      to: { kind: 'channel', streamId: channel.id, topic },
      content,
      client: 'Internal',
      system: true,
    }).id;
  });
}
