// Outgoing email. With smtp_url set (PARLEY_SMTP_URL, e.g. smtp://user:pass@mail.example.com:587) mail goes out
// through nodemailer; otherwise each message is written as one .eml file to DATA_DIR/outbox/ and logged,
// so small installs and tests work without a mail server. The text part is UTF-8 with
// Content-Transfer-Encoding 8bit (never quoted-printable or base64), so links stay readable in the file.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { App } from '../app';
import { loadNodemailer } from '../lazy';

export interface OutgoingEmail {
  to: string;
  subject: string;
  /** Plain text body; lines end in \n (written as CRLF). */
  text: string;
}

/** Where outbox files go: DATA_DIR/outbox (next to the uploads for an in-memory database). */
export function outboxDir(app: App): string {
  return app.config.dataDir === ':memory:' ? path.join(app.uploadsDir, 'outbox') : path.join(app.config.dataDir, 'outbox');
}

/** The sender address: email_from (PARLEY_EMAIL_FROM), else noreply@ the host of the public URL. */
function fromAddress(app: App): string {
  const configured = app.config.emailFrom;
  if (configured) return configured;
  let host = 'localhost';
  try {
    host = new URL(app.publicUrl).hostname || host;
  } catch {
    // keep localhost
  }
  return `Parley <noreply@${host}>`;
}

/** The bare address of the sender (Zulip's FromAddress.SUPPORT stands for the server's operator in some messages). */
export function supportAddress(app: App): string {
  const from = fromAddress(app);
  const angle = /<([^<>]+)>\s*$/.exec(from);
  return (angle ? angle[1] : from).trim();
}

/** RFC 2047 encoded-word for a header value that is not plain ASCII. */
function encodeHeader(value: string): string {
  const clean = value.replace(/[\r\n]+/g, ' ');
  if (/^[\x20-\x7e]*$/.test(clean)) return clean;
  return `=?UTF-8?B?${Buffer.from(clean, 'utf8').toString('base64')}?=`;
}

/** The whole message as RFC 5322 text with an 8bit UTF-8 plain-text body. */
export function formatEml(from: string, mail: OutgoingEmail, date: Date, messageId: string): string {
  const headers = [
    `From: ${encodeHeader(from)}`,
    `To: ${encodeHeader(mail.to)}`,
    `Subject: ${encodeHeader(mail.subject)}`,
    `Date: ${date.toUTCString().replace('GMT', '+0000')}`,
    `Message-ID: ${messageId}`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=UTF-8',
    'Content-Transfer-Encoding: 8bit',
  ];
  const body = mail.text.replace(/\r?\n/g, '\r\n');
  return headers.join('\r\n') + '\r\n\r\n' + body + (body.endsWith('\r\n') ? '' : '\r\n');
}

/**
 * Sends one email: SMTP when configured (asynchronously; failures are logged), else the outbox. Call it
 * from `app.batch.onCommit` so a rolled-back action sends nothing. Returns the outbox file, or null
 * when the message went to SMTP.
 */
export function sendEmail(app: App, mail: OutgoingEmail): string | null {
  const from = fromAddress(app);
  const smtpUrl = app.config.smtpUrl;
  if (smtpUrl) {
    // Loaded on first use (src/lazy.ts): nodemailer costs ~20 ms and ~5 MB, too much for every start.
    const nodemailer = loadNodemailer();
    const transport = nodemailer.createTransport(smtpUrl);
    transport
      // The recipient as an address object, which nodemailer takes as it is: a string is parsed as a
      // list with display names, so "a,b@x" or "v@evil.com(x.example.com" would name other mailboxes.
      .sendMail({ from, to: { name: '', address: mail.to }, subject: mail.subject, text: mail.text })
      .then(() => console.error(`parley: email to ${mail.to} sent: ${mail.subject}`))
      .catch((err: unknown) => console.error(`parley: email to ${mail.to} failed: ${(err as Error).message}`))
      .finally(() => transport.close());
    return null;
  }
  const dir = outboxDir(app);
  fs.mkdirSync(dir, { recursive: true });
  const now = new Date(app.clock.nowMs());
  const id = crypto.randomBytes(8).toString('hex');
  const host = /@([^>]+)>?$/.exec(from)?.[1] ?? 'localhost';
  const file = path.join(dir, `${now.toISOString().replace(/[:.]/g, '-')}-${id}.eml`);
  fs.writeFileSync(file, formatEml(from, mail, now, `<${id}@${host}>`), { encoding: 'utf8', flag: 'wx' });
  console.error(`parley: email to ${mail.to} written to ${file}: ${mail.subject}`);
  return file;
}
