// A bare uWebSockets.js hello-world: the ceiling Parley's HTTP rate is compared with. Loaded through
// src/native.ts like Parley itself, so both run the same addon.
// Run: node --import tsx bench/bare-uws.ts [--port N]  → prints `listening on http://127.0.0.1:N`.
import { loadUws } from '../src/native';

/** Starts the hello-world on 127.0.0.1:port (0: any free port); resolves to the bound port and a closer. */
export function startBareUws(port = 0): Promise<{ port: number; close(): void }> {
  const uws = loadUws();
  const app = uws.App();
  app.any('/*', (res) => {
    res.cork(() => {
      res.writeHeader('Content-Type', 'text/plain');
      res.end('Hello World!');
    });
  });
  return new Promise((resolve, reject) => {
    app.listen('127.0.0.1', port, (socket) => {
      if (!socket) return reject(new Error(`could not listen on 127.0.0.1:${port}`));
      resolve({
        port: uws.us_socket_local_port(socket),
        close: () => (app as unknown as { close(): void }).close(),
      });
    });
  });
}

if (require.main === module) {
  const i = process.argv.indexOf('--port');
  startBareUws(i > 0 ? Number(process.argv[i + 1]) : 0).then(({ port, close }) => {
    process.stdout.write(`listening on http://127.0.0.1:${port}\n`);
    process.once('SIGTERM', close);
    process.once('SIGINT', close);
  });
}
