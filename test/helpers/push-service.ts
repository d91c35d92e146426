// A stand-in push notification service: a node:http server on 127.0.0.1:0 that records every request
// Parley sends it. It can be told to fail (to exercise retries) and which legacy tokens it knows.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  path: string;
  authorization: string | undefined;
  body: any;
}

export interface TestPushService {
  url: string;
  requests: RecordedRequest[];
  /** Answer the next `n` requests with this status (503: "down") and error code (default BAD_REQUEST). */
  failNext(n: number, status?: number, code?: string): void;
  /** Legacy tokens the service accepts for test notifications (others: INVALID_REMOTE_PUSH_DEVICE_TOKEN). */
  knownTokens: Set<string>;
  /** Resolves once `pred` holds for some recorded request (polls), or rejects after `ms`. */
  waitFor(pred: (r: RecordedRequest) => boolean, ms?: number): Promise<RecordedRequest>;
  close(): Promise<void>;
}

export async function startPushService(): Promise<TestPushService> {
  const requests: RecordedRequest[] = [];
  let failures: { n: number; status: number; code: string } = { n: 0, status: 503, code: 'BAD_REQUEST' };
  const knownTokens = new Set<string>();
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (d) => (data += d));
    req.on('end', () => {
      let body: unknown = data;
      try {
        body = JSON.parse(data);
      } catch {
        /* keep the text */
      }
      const rec = { path: req.url ?? '', authorization: req.headers.authorization, body };
      if (failures.n > 0) {
        failures.n--;
        res.writeHead(failures.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ result: 'error', msg: 'down', code: failures.code }));
        return;
      }
      requests.push(rec);
      res.setHeader('content-type', 'application/json');
      if (rec.path === '/api/v1/remotes/push/register') knownTokens.add((body as { token: string }).token);
      if (rec.path === '/api/v1/remotes/push/test_notification' && !knownTokens.has((body as { token: string }).token)) {
        res.statusCode = 400;
        res.end(JSON.stringify({ result: 'error', msg: 'Device not recognized by the push bouncer', code: 'INVALID_REMOTE_PUSH_DEVICE_TOKEN' }));
        return;
      }
      res.end(JSON.stringify({ result: 'success', msg: '' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    knownTokens,
    failNext(n, status = 503, code = 'BAD_REQUEST') {
      failures = { n, status, code };
    },
    async waitFor(pred, ms = 5000) {
      const end = Date.now() + ms;
      for (;;) {
        const hit = requests.find(pred);
        if (hit) return hit;
        if (Date.now() > end) throw new Error('push service: no matching request');
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
