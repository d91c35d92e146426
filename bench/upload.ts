// Upload benchmark: a 100 MB file through POST /user_uploads (multipart), through tus (one PATCH),
// and back down through GET /user_uploads/..., against a server in a child process whose resident
// memory is sampled every 5 ms. The server must not grow by more than 20 MB; throughput is printed
// beside a plain stream copy and fs.copyFile of the same file on the same disk.
//   node --import tsx bench/upload.ts [size_mb]
import { fork, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

const MB = 1_000_000;

async function serverMain(): Promise<void> {
  const { startTestServer } = await import('../test/helpers/server');
  const t = await startTestServer({ configure: (c) => (c.maxFileUploadSizeMib = 1024) });
  const gc = (globalThis as { gc?: () => void }).gc;
  // Peaks sampled in-process every 5 ms (cheap: memoryUsage reads /proc).
  let peak = { rss: 0, ab: 0, heap: 0 };
  const sample = () => {
    const m = process.memoryUsage();
    peak = { rss: Math.max(peak.rss, m.rss), ab: Math.max(peak.ab, m.arrayBuffers), heap: Math.max(peak.heap, m.heapUsed) };
  };
  setInterval(sample, 5).unref();
  process.on('message', (msg: string) => {
    if (msg === 'reset') {
      gc?.();
      const m = process.memoryUsage();
      peak = { rss: m.rss, ab: m.arrayBuffers, heap: m.heapUsed };
      process.send?.({ mem: peak });
    }
    if (msg === 'peak') {
      sample();
      process.send?.({ mem: peak });
    }
    if (msg === 'stop') void t.close().then(() => process.exit(0));
  });
  process.send?.({ ready: true, url: t.url, email: t.users.hamlet.email, apiKey: t.users.hamlet.apiKey, dataDir: t.dataDir });
}

interface Mem {
  rss: number;
  ab: number;
  heap: number;
}

function ask(child: ChildProcess, msg: string): Promise<Mem> {
  return new Promise((resolve) => {
    const on = (m: { mem?: Mem }) => {
      if (m.mem !== undefined) {
        child.off('message', on);
        resolve(m.mem);
      }
    };
    child.on('message', on);
    child.send(msg);
  });
}

function request(
  url: string,
  opts: http.RequestOptions,
  body: (req: http.ClientRequest) => Promise<void>,
  sink?: (res: http.IncomingMessage) => Promise<void>,
): Promise<{ status: number; text: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, opts, (res) => {
      if (sink) {
        sink(res).then(() => resolve({ status: res.statusCode ?? 0, text: '', headers: res.headers }), reject);
        return;
      }
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
    });
    req.on('error', reject);
    body(req).then(() => req.end(), reject);
  });
}

async function main(): Promise<void> {
  const sizeMb = Number(process.argv[2] ?? 100);
  const size = sizeMb * MB;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-upload-'));
  const src = path.join(work, 'source.bin');
  {
    const fd = fs.openSync(src, 'w');
    const block = crypto.randomBytes(4 * MB);
    for (let done = 0; done < size; done += block.length) fs.writeSync(fd, block, 0, Math.min(block.length, size - done));
    fs.closeSync(fd);
  }
  const child = fork(__filename, ['server'], { execArgv: ['--import', 'tsx', '--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const info = await new Promise<{ url: string; email: string; apiKey: string; dataDir: string }>((resolve) =>
    child.on('message', (m: { ready?: boolean }) => m.ready && resolve(m as never)),
  );
  const auth = 'Basic ' + Buffer.from(`${info.email}:${info.apiKey}`).toString('base64');
  const rows: { name: string; seconds: number; growthMb: number | null; abMb: number; heapMb: number }[] = [];

  const measure = async (name: string, fn: () => Promise<void>) => {
    const base = await ask(child, 'reset');
    const t0 = process.hrtime.bigint();
    await fn();
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const peak = await ask(child, 'peak');
    rows.push({ name, seconds, growthMb: (peak.rss - base.rss) / MB, abMb: (peak.ab - base.ab) / MB, heapMb: (peak.heap - base.heap) / MB });
  };

  // Baselines: the same bytes copied on the same disk.
  await measure('plain stream copy', async () => {
    await pipeline(fs.createReadStream(src), fs.createWriteStream(path.join(info.dataDir, 'copy.bin')));
  });
  rows[rows.length - 1].growthMb = null;
  await measure('fs.copyFile', async () => fs.promises.copyFile(src, path.join(info.dataDir, 'copy2.bin')));
  rows[rows.length - 1].growthMb = null;

  let url = '';
  await measure('POST /user_uploads (multipart)', async () => {
    const boundary = 'bench' + crypto.randomBytes(8).toString('hex');
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const res = await request(
      info.url + '/api/v1/user_uploads',
      {
        method: 'POST',
        headers: { authorization: auth, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': head.length + size + tail.length },
      },
      async (req) => {
        req.write(head);
        await pipeline(fs.createReadStream(src), req, { end: false });
        req.write(tail);
      },
    );
    if (res.status !== 200) throw new Error(`upload failed: ${res.status} ${res.text}`);
    url = JSON.parse(res.text).url;
  });

  await measure('tus (POST + one PATCH)', async () => {
    const created = await request(
      info.url + '/api/v1/tus',
      { method: 'POST', headers: { authorization: auth, 'tus-resumable': '1.0.0', 'upload-length': size, 'upload-metadata': `filename ${Buffer.from('tus.bin').toString('base64')}` } },
      async () => undefined,
    );
    if (created.status !== 201) throw new Error(`tus create failed: ${created.status} ${created.text}`);
    const res = await request(
      info.url + created.headers.location,
      {
        method: 'PATCH',
        headers: { authorization: auth, 'tus-resumable': '1.0.0', 'upload-offset': 0, 'content-type': 'application/offset+octet-stream', 'content-length': size },
      },
      async (req) => pipeline(fs.createReadStream(src), req, { end: false }),
    );
    if (res.status !== 200) throw new Error(`tus patch failed: ${res.status} ${res.text}`);
  });

  await measure('GET /user_uploads/... (download)', async () => {
    let got = 0;
    const res = await request(info.url + url, { method: 'GET', headers: { authorization: auth } }, async () => undefined, async (r) => {
      for await (const chunk of r) got += (chunk as Buffer).length;
    });
    if (res.status !== 200 || got !== size) throw new Error(`download failed: ${res.status}, ${got} bytes`);
  });

  child.send('stop');
  await new Promise((r) => child.on('exit', r));
  fs.rmSync(work, { recursive: true, force: true });

  // Other work on the machine moves the throughput numbers: print the load beside them.
  console.log(`upload benchmark: ${sizeMb} MB file, server RSS sampled every 5 ms (limit: +20 MB), load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log('  what                               seconds    MB/s   server RSS growth   (of which buffers, JS heap)');
  let ok = true;
  for (const r of rows) {
    const growth = r.growthMb === null ? '      -' : `${r.growthMb.toFixed(1).padStart(7)} MB`;
    if (r.growthMb !== null && r.growthMb >= 20) ok = false;
    const detail = r.growthMb === null ? '' : `      ${r.abMb.toFixed(1)} MB, ${r.heapMb.toFixed(1)} MB`;
    console.log(`  ${r.name.padEnd(34)} ${r.seconds.toFixed(2).padStart(7)} ${(sizeMb / r.seconds).toFixed(0).padStart(7)}   ${growth}${detail}`);
  }
  console.log(ok ? 'PASS: server memory stayed within 20 MB of its baseline' : 'FAIL: server memory grew by 20 MB or more');
  if (!ok) process.exitCode = 1;
}

if (process.argv[2] === 'server') void serverMain();
else void main();
