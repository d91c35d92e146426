// A stand-in outgoing-webhook bot server: a node:http server on 127.0.0.1:0 that records every request
// Parley sends it and answers each with the next queued behaviour (a JSON answer by default).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BotRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** What to do with one request: answer (status, body) or hold it until `release` is called. */
export type Behaviour =
  | { status?: number; body: string | Buffer; contentType?: string }
  | { hold: true };

export interface TestBotServer {
  url: string;
  requests: BotRequest[];
  /** Queues behaviours for the next requests (the default afterwards: 200 {"response_not_required": true}). */
  answerWith(...b: Behaviour[]): void;
  /** Answers the held requests with this body. */
  release(status: number, body: string): void;
  /** Resolves once `n` requests have come (polls), or rejects after `ms`. */
  waitForRequests(n: number, ms?: number): Promise<BotRequest[]>;
  close(): Promise<void>;
}

export async function startBotServer(): Promise<TestBotServer> {
  const requests: BotRequest[] = [];
  const queue: Behaviour[] = [];
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      requests.push({ path: req.url ?? '', headers: req.headers, text: Buffer.concat(chunks).toString('utf8') });
      const b = queue.shift() ?? { body: JSON.stringify({ response_not_required: true }) };
      if ('hold' in b) {
        held.push(res);
        return;
      }
      res.writeHead(b.status ?? 200, { 'content-type': b.contentType ?? 'application/json' });
      res.end(b.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    answerWith: (...b) => queue.push(...b),
    release(status, body) {
      for (const res of held.splice(0)) {
        if (res.destroyed) continue;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(body);
      }
    },
    async waitForRequests(n, ms = 10_000) {
      const end = Date.now() + ms;
      while (requests.length < n) {
        if (Date.now() > end) throw new Error(`bot server: ${requests.length} of ${n} requests came`);
        await new Promise((r) => setTimeout(r, 10));
      }
      return requests.slice(0, n);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
