// API keys, password hashes and constant-time comparison.
import crypto from 'node:crypto';
import bcrypt from 'bcryptjs';

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `length` random alphanumeric characters (rejection sampling keeps the distribution uniform). */
export function randomAlnum(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of crypto.randomBytes(length * 2)) {
      if (b < 248) out += ALNUM[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** A new API key: 32 alphanumeric characters, like Zulip's. */
export const newApiKey = () => randomAlnum(32);

export const API_KEY_FORMAT = /^[A-Za-z0-9]{32}$/;

/** Compares two secrets without leaking where they differ. */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ab.length !== bb.length) {
    crypto.timingSafeEqual(ab, ab);
    return false;
  }
  return crypto.timingSafeEqual(ab, bb);
}

const BCRYPT_ROUNDS = 10;

/** bcrypt hash of a password. */
export function hashPassword(password: string): string {
  return bcrypt.hashSync(password, BCRYPT_ROUNDS);
}

let dummyHash: string | null = null;

/**
 * Whether `password` matches the stored hash (false when there is none). Without a hash it still
 * runs one bcrypt comparison, so response time does not tell whether an account exists.
 */
export function checkPassword(password: string, hash: string | null): boolean {
  if (!hash) {
    dummyHash ??= bcrypt.hashSync('parley-no-such-account', BCRYPT_ROUNDS);
    bcrypt.compareSync(password, dummyHash);
    return false;
  }
  return bcrypt.compareSync(password, hash);
}
