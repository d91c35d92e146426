// Validation rules shared by several actions (names, emails, passwords), in Zulip's wording.
import { errors } from '../http/errors';
import { codePoints } from '../http/params';

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
