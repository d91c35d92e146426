// `parley export --data-dir DIR OUT.tar.gz`: the organization in the format of Zulip's exports
// (src/export/zulip-export.ts). The export code and tar-stream are loaded only when this runs.
import path from 'node:path';
import type { App } from '../app';

export const EXPORT_USAGE = 'parley export --data-dir DIR|--config FILE OUT.tar.gz';

/**
 * Exports the organization of `app`'s data directory to `out`. `app` only locates (and migrates) the
 * database; it is closed before the export opens its own read-only connection.
 */
export async function runExport(app: App, out: string): Promise<number> {
  const dbFile = app.db.name;
  const uploadsDir = app.uploadsDir;
  app.close();
  const { exportRealm } = await import('../export/zulip-export');
  // For the interruption test only: stop after this file is in the tarball, and wait to be killed.
  const stallAfter = process.env.PARLEY_EXPORT_TEST_STALL_AFTER;
  const summary = await exportRealm({
    dbFile,
    uploadsDir,
    out,
    onEntry: async (name) => {
      if (name !== stallAfter) return;
      process.stderr.write(`parley: export: stalled after ${name}\n`);
      // A pending timer keeps the process alive (a bare unresolved promise would let it exit).
      await new Promise(() => setInterval(() => undefined, 1 << 30));
    },
  });
  process.stdout.write(
    `export written to ${path.resolve(out)} (${summary.messages} messages in ${summary.messageFiles} files, ${summary.counts.zerver_userprofile ?? 0} users, ${summary.counts.zerver_stream ?? 0} channels)\n`,
  );
  return 0;
}
