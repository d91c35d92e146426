// TLS test helpers: self-signed certificates made with the openssl CLI in a temp dir, and an HTTPS
// client (node:https) that trusts exactly the given certificates and reports which one it was served.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';

export interface CertPair {
  cert: string;
  key: string;
  /** The certificate's PEM (to trust it). */
  pem: Buffer;
  fingerprint256: string;
}

/**
 * A self-signed certificate for 127.0.0.1 and localhost, written to DIR/NAME.crt and DIR/NAME.key
 * (the key encrypted with `passphrase` when given).
 */
export function makeCertPair(dir: string, name: string, opts: { passphrase?: string } = {}): CertPair {
  const cert = path.join(dir, `${name}.crt`);
  const key = path.join(dir, `${name}.key`);
  const keyArgs = opts.passphrase ? ['-aes-256-cbc', '-pass', `pass:${opts.passphrase}`] : [];
  execFileSync('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', ...keyArgs, '-out', key], { stdio: 'pipe' });
  execFileSync(
    'openssl',
    [
      'req', '-x509', '-key', key, ...(opts.passphrase ? ['-passin', `pass:${opts.passphrase}`] : []),
      '-out', cert, '-days', '2', '-subj', `/CN=parley-test-${name}`,
      '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { stdio: 'pipe' },
  );
  const pem = fs.readFileSync(cert);
  return { cert, key, pem, fingerprint256: new crypto.X509Certificate(pem).fingerprint256 };
}

/**
 * A self-signed certificate that expired long ago (2020-01-01 to 2020-01-02), for `key` of `pair`,
 * written to DIR/NAME.crt (`openssl ca` is the only 3.0 command that takes explicit dates).
 */
export function makeExpiredCert(dir: string, name: string, key: string): { cert: string; pem: Buffer; fingerprint256: string } {
  const ca = fs.mkdtempSync(path.join(dir, `${name}-ca-`));
  fs.writeFileSync(path.join(ca, 'index.txt'), '');
  fs.writeFileSync(path.join(ca, 'serial'), '01\n');
  fs.writeFileSync(
    path.join(ca, 'ca.cnf'),
    `[ca]\ndefault_ca = d\n[d]\ndatabase = ${ca}/index.txt\nnew_certs_dir = ${ca}\nserial = ${ca}/serial\ndefault_md = sha256\npolicy = p\n[p]\ncommonName = supplied\n`,
  );
  const csr = path.join(ca, 'r.csr');
  execFileSync('openssl', ['req', '-new', '-key', key, '-subj', `/CN=parley-test-${name}`, '-out', csr], { stdio: 'pipe' });
  const cert = path.join(dir, `${name}.crt`);
  execFileSync(
    'openssl',
    ['ca', '-batch', '-config', path.join(ca, 'ca.cnf'), '-selfsign', '-keyfile', key, '-in', csr, '-out', cert, '-startdate', '20200101000000Z', '-enddate', '20200102000000Z', '-notext'],
    { stdio: 'pipe' },
  );
  const pem = fs.readFileSync(cert);
  return { cert, pem, fingerprint256: new crypto.X509Certificate(pem).fingerprint256 };
}

export interface HttpsResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: any;
  /** SHA-256 fingerprint of the certificate the server presented on this request's connection. */
  fingerprint256: string;
}

/** One request over HTTPS trusting `ca` (an Agent keeps the connection for later requests). */
export function httpsRequest(
  url: string,
  opts: { ca: Buffer[]; method?: string; headers?: Record<string, string>; body?: string; agent?: https.Agent },
): Promise<HttpsResult> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method: opts.method ?? 'GET', headers: opts.headers, ca: opts.ca, agent: opts.agent ?? false }, (res) => {
      // Read it now: a keep-alive agent detaches the socket once the body ends.
      const fingerprint256 = (res.socket as import('node:tls').TLSSocket).getPeerCertificate().fingerprint256;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body, fingerprint256 });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** Basic auth and a form body, as the Zulip clients send them. */
export function apiOverHttps(
  base: string,
  ca: Buffer[],
  user: { email: string; apiKey: string } | null,
  method: string,
  apiPath: string,
  params: Record<string, unknown> = {},
  agent?: https.Agent,
): Promise<HttpsResult> {
  const headers: Record<string, string> = {};
  if (user) headers.authorization = 'Basic ' + Buffer.from(`${user.email}:${user.apiKey}`).toString('base64');
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) form.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  const encoded = form.toString();
  const full = `${base}/api/v1${apiPath}`;
  if (method === 'GET') return httpsRequest(encoded ? `${full}?${encoded}` : full, { ca, headers, agent });
  headers['content-type'] = 'application/x-www-form-urlencoded';
  return httpsRequest(full, { ca, method, headers, body: encoded, agent });
}
