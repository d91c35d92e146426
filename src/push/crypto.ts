// End-to-end encryption of push payloads: libsodium secretbox (XSalsa20-Poly1305) with the device's
// push_key, as Zulip and its mobile app do. The wire value is base64(nonce(24) || ciphertext).
import type Sodium from 'libsodium-wrappers';
import { loadSodium } from '../lazy';

// libsodium (a large WebAssembly module) loads on the first encryption, not at every start.
async function sodiumReady(): Promise<typeof Sodium> {
  const sodium = loadSodium();
  await sodium.ready;
  return sodium;
}

/** The first byte of a push_key: which cryptosystem the rest is a key for. */
export const PUSH_KEY_SECRETBOX = 0x31;
export const PUSH_KEY_LENGTH = 33;

/** Decodes and checks a client's push_key (base64 of 0x31 + 32-byte key); null if invalid. */
export function parsePushKey(b64: string): Buffer | null {
  if (!isBase64(b64)) return null;
  const raw = Buffer.from(b64, 'base64');
  if (raw.length !== PUSH_KEY_LENGTH || raw[0] !== PUSH_KEY_SECRETBOX) return null;
  return raw;
}

/** Strict RFC 4648 base64 (standard alphabet, padded). */
export function isBase64(s: string): boolean {
  return s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s) && Buffer.from(s, 'base64').toString('base64') === s;
}

/** Encrypts `plaintext` for a device holding `pushKey` (the 33 stored bytes). */
export async function encryptForDevice(pushKey: Buffer, plaintext: string): Promise<string> {
  const sodium = await sodiumReady();
  const key = pushKey.subarray(1);
  const nonce = sodium.randombytes_buf(sodium.crypto_secretbox_NONCEBYTES);
  const box = sodium.crypto_secretbox_easy(Buffer.from(plaintext, 'utf8'), nonce, key);
  return Buffer.concat([Buffer.from(nonce), Buffer.from(box)]).toString('base64');
}

/** The client side (tests, tools): opens `encrypted_data` with the 33-byte push_key. */
export async function decryptForDevice(pushKey: Buffer, encrypted: string): Promise<string> {
  const sodium = await sodiumReady();
  const raw = Buffer.from(encrypted, 'base64');
  const nonce = raw.subarray(0, sodium.crypto_secretbox_NONCEBYTES);
  const box = raw.subarray(sodium.crypto_secretbox_NONCEBYTES);
  return Buffer.from(sodium.crypto_secretbox_open_easy(box, nonce, pushKey.subarray(1))).toString('utf8');
}
