// Validation rules shared by several actions (names, emails, passwords), in Zulip's wording.
import net from 'node:net';
import { domainToASCII } from 'node:url';
import type { Db } from '../db/open';
import { stmt } from '../db/stmt';
import { errors } from '../http/errors';
import { codePoints } from '../http/params';
import type { RealmRow } from './realm';

export const MAX_NAME_LENGTH = 100;
export const MIN_NAME_LENGTH = 2;
const NAME_INVALID_CHARS = /[*`\\>"@\u0000-\u001f\u007f]/;

/** Zulip's check_full_name: trimmed, 2..100 code points, none of its reserved characters, no "|123" suffix. */
export function checkFullName(raw: string, opts: { minLength?: number } = {}): string {
  const name = raw.trim();
  if (codePoints(name) > MAX_NAME_LENGTH) throw errors.badRequest('Name too long!');
  if (codePoints(name) < Math.max(1, opts.minLength ?? MIN_NAME_LENGTH)) throw errors.badRequest('Name too short!');
  if (NAME_INVALID_CHARS.test(name)) throw errors.badRequest('Invalid characters in name!');
  // "Name|123" is how mentions disambiguate users: a name may not look like one.
  if (/\|\d+$/.test(raw)) throw errors.badRequest('Invalid format!');
  return name;
}

// Deliberately simple: one @, a non-empty local part, a dotted domain, no spaces or control characters.
const EMAIL = /^[^\s@\u0000-\u001f]+@[^\s@\u0000-\u001f]+\.[^\s@\u0000-\u001f]+$/;

/** Whether `email` looks like an email address (Django's validator is the reference; this is close). */
export function isValidEmail(email: string): boolean {
  return email.length <= 254 && EMAIL.test(email);
}

// Django's EmailValidator (Zulip's validate_email): a dot-atom local part, a domain of host-name
// labels (or its IDNA form, or an address literal). Quoted local parts, which Django also takes, are
// refused: mail software reads their @ and commas in its own ways.
const ATOM = "[-!#$%&'*+/=?^_`{}|~0-9A-Za-z]+";
const LOCAL_PART = new RegExp(`^${ATOM}(?:\\.${ATOM})*$`);
const DOMAIN_PART = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z0-9-]{2,63}$/;
const ADDRESS_LITERAL = /^\[([A-Fa-f0-9:.]+)\]$/;

/**
 * Whether `email` is an address Parley may write to, as Django's validator says (isValidEmail's
 * looser shape let "victim@evil.com(x.example.com" through: it ends in an allowed subdomain, and mail
 * software delivers it to evil.com). For addresses people give: invitations, sign-ups, changes.
 */
export function isDeliverableEmail(email: string): boolean {
  if (email.length > 254) return false;
  const at = email.lastIndexOf('@');
  if (at <= 0 || !LOCAL_PART.test(email.slice(0, at))) return false;
  const domain = email.slice(at + 1);
  if (domain.toLowerCase() === 'localhost') return true;
  const literal = ADDRESS_LITERAL.exec(domain);
  if (literal) return net.isIP(literal[1]) !== 0;
  if (DOMAIN_PART.test(domain) && !domain.endsWith('-')) return true;
  // An internationalised domain, in its IDNA (punycode) form.
  const ascii = domainToASCII(domain);
  return ascii !== '' && ascii !== domain && DOMAIN_PART.test(ascii) && !ascii.endsWith('-');
}

/**
 * Zulip's validate_email_is_valid with the organization's validator: why `email` may not have an
 * account here (its texts), or null. With emails_restricted_to_domains the domain must be allowed
 * (or a subdomain of one that allows them), and the local part may not contain "+".
 */
export function realmEmailProblem(db: Db, realm: RealmRow, email: string): string | null {
  if (!isDeliverableEmail(email)) return 'Invalid address.';
  if (!realm.emails_restricted_to_domains) return null;
  const at = email.lastIndexOf('@');
  if (email.slice(0, at).includes('+')) return 'Email addresses containing + are not allowed.';
  const domain = email.slice(at + 1).toLowerCase();
  const rows = stmt(db, 'SELECT domain, allow_subdomains FROM realm_domain WHERE realm_id = ?').all(realm.id) as { domain: string; allow_subdomains: number }[];
  const ok = rows.some((r) => domain === r.domain.toLowerCase() || (r.allow_subdomains === 1 && domain.endsWith('.' + r.domain.toLowerCase())));
  return ok ? null : 'Outside your domain.';
}

export const PASSWORD_MIN_LENGTH = 6;

/** Zulip's check_password_strength, reduced to its length rule. */
export function checkPasswordStrength(password: string): void {
  if (password.length < PASSWORD_MIN_LENGTH) throw errors.badRequest('The password is too weak.');
}

/**
 * 1-based position of the first character Zulip refuses in names and topics (control characters,
 * Unicode non-characters), or 0 when there is none.
 */
export function invalidCharacterPosition(text: string): number {
  let position = 0;
  for (const ch of text) {
    position++;
    const c = ch.codePointAt(0) as number;
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || (c >= 0xfdd0 && c <= 0xfdef) || (c & 0xfffe) === 0xfffe) return position;
  }
  return 0;
}
