// `parley export --data-dir DIR OUT.tar.gz`: the organization in the format of Zulip's exports
// (src/export/zulip-export.ts). The export code and tar-stream are loaded only when this runs.
import path from 'node:path';
import type { App } from '../app';
import type { ExportType } from '../export/filter';

export const EXPORT_USAGE = 'parley export --data-dir DIR|--config FILE [--export-type public|consent] OUT.tar.gz';

/** --export-type: what an API export of that type leaves out (src/export/filter.ts); absent, everything goes in. */
export const EXPORT_TYPE_NAMES: Readonly<Record<string, ExportType>> = { public: 1, consent: 2 };

/**
 * Exports the organization of `app`'s data directory to `out`. `app` only locates (and migrates) the
 * database; it is closed before the export opens its own read-only connection.
 */
export async function runExport(app: App, out: string, exportType?: ExportType): Promise<number> {
  const dbFile = app.db.name;
  const uploadsDir = app.uploadsDir;
  app.close();
  const { exportRealm } = await import('../export/zulip-export');
  // Ctrl-C or `kill`: the export removes its temporary files as the signal aborts it, then we exit
  // with the signal's conventional status.
  const abort = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    abort.abort();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // Started by the server for POST /export/realm (an IPC channel): when the server goes away (a crash, a
  // restart), the export stops and removes its files; the restarted server marks it failed.
  const onParentGone = () => onSignal('SIGTERM');
  if (process.channel) process.once('disconnect', onParentGone);
  // For the interruption test only: stop after this file is in the tarball, and wait to be killed.
  const stallAfter = process.env.PARLEY_EXPORT_TEST_STALL_AFTER;
  let summary;
  try {
    summary = await exportRealm({
      dbFile,
      uploadsDir,
      out,
      signal: abort.signal,
      exportType,
      onEntry: async (name) => {
        if (name !== stallAfter) return;
        process.stderr.write(`parley: export: stalled after ${name}\n`);
        // A pending timer keeps the process alive (a bare unresolved promise would let it exit).
        await new Promise(() => setInterval(() => undefined, 1 << 30));
      },
    });
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    process.removeListener('disconnect', onParentGone);
  }
  // The server records the counts with the export (Zulip's RealmExport.stats).
  if (process.send) await new Promise<void>((resolve) => process.send!({ type: 'exported', counts: summary.counts }, undefined, {}, () => resolve()));
  process.stdout.write(
    `export written to ${path.resolve(out)} (${summary.messages} messages in ${summary.messageFiles} files, ${summary.counts.zerver_userprofile ?? 0} users, ${summary.counts.zerver_stream ?? 0} channels)\n`,
  );
  return 0;
}
