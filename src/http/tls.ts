// The TLS certificate and key for HTTPS without a reverse proxy. The pair is checked here with Node's
// crypto before uWebSockets.js sees it: uWS only says "App construction failed", and a key it cannot
// decrypt could make OpenSSL prompt on a terminal. Every message names the file at fault.
import crypto from 'node:crypto';
import fs from 'node:fs';

export interface TlsFiles {
  cert: string;
  key: string;
  /** For an encrypted private key (PEM with a passphrase). */
  passphrase?: string | null;
}

/** A pair that parses and matches, with what the logs say about it. */
export interface CheckedTls extends TlsFiles {
  /** SHA-256 fingerprint of the leaf certificate, as `AB:CD:...`. */
  fingerprint256: string;
  /** SHA-256 of both files' bytes: a reload with the same files has nothing to do. */
  filesSha256: string;
  /** The leaf certificate's notBefore and notAfter, as OpenSSL prints them. */
  validFrom: string;
  validTo: string;
}

/** A certificate or key that cannot be used: stops the start, or keeps the old pair on reload. */
export class TlsError extends Error {}

const READ_REASONS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'it is a directory',
};

/** A certificate chain or key is a few kilobytes; anything past this is not one. */
const MAX_PEM_BYTES = 1024 * 1024;

/**
 * The file's bytes, bounded: a FIFO would block the start (or, on SIGHUP, the running server) forever
 * and /dev/zero would never end, so neither is read whole.
 */
function readPem(file: string, what: string): Buffer {
  try {
    const st = fs.statSync(file);
    if (st.isFIFO() || st.isSocket()) throw new TlsError(`cannot read the TLS ${what} ${file}: not a regular file`);
    if (st.size > MAX_PEM_BYTES) throw new TlsError(`the TLS ${what} ${file} is too large (${st.size} bytes, at most ${MAX_PEM_BYTES})`);
    const fd = fs.openSync(file, 'r');
    const buf = Buffer.alloc(MAX_PEM_BYTES + 1);
    let n = 0;
    try {
      for (let got = -1; got !== 0 && n < buf.length; n += got) got = fs.readSync(fd, buf, n, buf.length - n, null);
    } finally {
      fs.closeSync(fd);
    }
    if (n > MAX_PEM_BYTES) throw new TlsError(`the TLS ${what} ${file} is too large (more than ${MAX_PEM_BYTES} bytes)`);
    return buf.subarray(0, n);
  } catch (err) {
    if (err instanceof TlsError) throw err;
    const code = (err as NodeJS.ErrnoException).code ?? '';
    throw new TlsError(`cannot read the TLS ${what} ${file}: ${READ_REASONS[code] ?? (err as Error).message}`);
  }
}

/** Reads and checks the pair; throws TlsError naming the file when it cannot serve. */
export function checkTlsPair(files: TlsFiles): CheckedTls {
  const certPem = readPem(files.cert, 'certificate');
  const keyPem = readPem(files.key, 'key');
  let cert: crypto.X509Certificate;
  try {
    // PEM only (Node would take DER too, uWS would not). The first certificate of the file is a
    // fullchain.pem's leaf; uWS loads the whole chain.
    if (!certPem.includes('-----BEGIN CERTIFICATE-----')) throw new Error('not PEM');
    cert = new crypto.X509Certificate(certPem);
  } catch {
    throw new TlsError(`the TLS certificate ${files.cert} is not a PEM certificate`);
  }
  // An encrypted key: PKCS#8 ("ENCRYPTED PRIVATE KEY") or the older PEM header ("Proc-Type: 4,ENCRYPTED").
  const encrypted = /-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: *4,ENCRYPTED/.test(keyPem.toString('latin1'));
  if (encrypted && !files.passphrase) throw new TlsError(`the TLS key ${files.key} is encrypted: set PARLEY_TLS_KEY_PASSPHRASE`);
  let key: crypto.KeyObject;
  try {
    key = crypto.createPrivateKey(encrypted ? { key: keyPem, passphrase: files.passphrase as string } : { key: keyPem });
  } catch {
    if (encrypted) throw new TlsError(`the TLS key ${files.key} cannot be decrypted with PARLEY_TLS_KEY_PASSPHRASE`);
    throw new TlsError(`the TLS key ${files.key} is not a PEM private key`);
  }
  if (!cert.checkPrivateKey(key)) {
    // The key may belong to a later certificate of the file: a chain pasted in the wrong order.
    const all = certPem.toString('latin1').match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
    const at = all.findIndex((pem, i) => {
      if (i === 0) return false;
      try {
        return new crypto.X509Certificate(pem).checkPrivateKey(key);
      } catch {
        return false;
      }
    });
    if (at > 0) {
      throw new TlsError(
        `the TLS certificate file ${files.cert} is in the wrong order: the certificate for the key ${files.key} is number ${at + 1} of ${all.length}; it must come first, then the chain (as in certbot's fullchain.pem)`,
      );
    }
    throw new TlsError(`the TLS key ${files.key} does not match the certificate ${files.cert}`);
  }
  const filesSha256 = crypto.createHash('sha256').update(certPem).update('\0').update(keyPem).digest('hex');
  return { ...files, fingerprint256: cert.fingerprint256, filesSha256, validFrom: cert.validFrom, validTo: cert.validTo };
}

/**
 * What to tell the operator about a pair that loads but that clients will refuse: expired, or not yet
 * valid (a clock far behind). It is still served: refusing would leave the box unreachable until a
 * renewal, and a person can choose to proceed in a browser. null when the dates are fine.
 */
export function tlsValidityWarning(pair: CheckedTls, nowMs = Date.now()): string | null {
  if (nowMs > Date.parse(pair.validTo)) return `the TLS certificate ${pair.cert} expired on ${pair.validTo}; clients will refuse it until it is renewed`;
  if (nowMs < Date.parse(pair.validFrom)) return `the TLS certificate ${pair.cert} is not valid before ${pair.validFrom} (is this machine's clock right?); clients will refuse it until then`;
  return null;
}
