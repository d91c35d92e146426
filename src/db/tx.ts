// Write batching. Every request's writes run inside a SAVEPOINT of one transaction that stays open for
// the current event-loop turn (its reads run in it too) and commits in a setImmediate: all writes that arrive in the same turn
// share one COMMIT (one WAL append) while each stays atomic on its own (a failing request rolls back
// to its savepoint). Replies and events wait until the commit: nothing is announced that could still
// be lost, and a failed commit turns every waiting reply into a 500.
import type { Db } from './open';
import { invalidateAll } from './watch';

type CommitHook = (committed: boolean) => void;

export class WriteBatch {
  private open = false;
  /** Whether a write has run in the open batch (replies must then wait for the commit). */
  private dirty = false;
  /** Hooks of finished writes and replies, run after COMMIT. */
  private hooks: CommitHook[] = [];
  /** Hooks registered by the writes still running, innermost last. */
  private pending: CommitHook[][] = [];

  private failureListeners: (() => void)[] = [];

  /**
   * Changes whenever the database may have changed: when a write starts and when a turn that wrote
   * commits or fails. Caches of derived read results (lib/read-cache.ts) are valid while it stays the same.
   */
  epoch = 0;
  private lastTotalChanges = 0;
  private lastDataVersion = 0;
  private readonly totalChanges: { get(): unknown };
  private readonly dataVersion: { get(): unknown };

  constructor(private readonly db: Db) {
    this.totalChanges = db.prepare('SELECT total_changes()').pluck();
    this.dataVersion = db.prepare('PRAGMA data_version').pluck();
    this.lastTotalChanges = this.totalChanges.get() as number;
    this.lastDataVersion = this.dataVersion.get() as number;
  }

  /**
   * Moves the epoch if the database changed behind the batch's back since it last looked: a statement
   * run outside write() on this connection (total_changes) or a commit by another connection, such
   * as a second process on the same file (data_version).
   */
  private noticeOutsideChanges(): void {
    const total = this.totalChanges.get() as number;
    const version = this.dataVersion.get() as number;
    if (total !== this.lastTotalChanges || version !== this.lastDataVersion) this.epoch++;
    // Another connection's rows never fire this connection's watch triggers: drop every watched cache.
    if (version !== this.lastDataVersion) invalidateAll(this.db);
    this.lastTotalChanges = total;
    this.lastDataVersion = version;
  }

  /** Calls `fn` whenever a commit fails and the turn's writes are lost. */
  onCommitFailure(fn: () => void): void {
    this.failureListeners.push(fn);
  }

  /** Whether a reply written now would have to wait for this turn's commit (afterCommit would defer it). */
  get mustWait(): boolean {
    return this.open && this.dirty;
  }

  /** True while a batch transaction is open in this turn. */
  get inBatch(): boolean {
    return this.open;
  }

  /**
   * Opens this turn's transaction if none is open. Requests call it first thing, so their reads run
   * inside one transaction too: SQLite then takes its file locks once per turn instead of once per
   * statement. The transaction starts deferred and becomes a write transaction at the first write.
   */
  begin(): void {
    if (this.open) return;
    this.db.exec('BEGIN');
    this.noticeOutsideChanges();
    this.open = true;
    setImmediate(() => this.commit());
  }

  /**
   * Runs `fn` atomically inside this turn's batch; throws (after rolling back its part) if fn throws.
   *
   * `checksFirst: true` is for hot actions that finish every check before their first change
   * (doSendMessage): they run without a SAVEPOINT, whose statement journal copies every page the
   * write touches (50 scattered per-user index pages for a message to 50 subscribers). If such an
   * action throws before changing anything, nothing needs undoing; if it throws after a change (a bug,
   * a full disk), the whole turn is rolled back and every reply waiting on it becomes a 500, exactly as
   * when a commit fails. Either way no request is ever half applied. Nested writes always use a savepoint.
   */
  write<T>(fn: () => T, opts?: { checksFirst?: boolean }): T {
    this.begin();
    this.dirty = true;
    this.epoch++;
    const light = opts?.checksFirst === true && this.pending.length === 0;
    const changesBefore = this.totalChanges.get() as number;
    if (!light) this.db.exec('SAVEPOINT w');
    this.pending.push([]);
    let result: T;
    try {
      result = fn();
    } catch (err) {
      this.pending.pop();
      if (!light) {
        this.db.exec('ROLLBACK TO w');
        this.db.exec('RELEASE w');
        // The caches may since have read the undone rows back (a channel made public, then a refused
        // folder id).
        if ((this.totalChanges.get() as number) !== changesBefore) this.forgetUndoneRows();
      } else if ((this.totalChanges.get() as number) !== changesBefore) {
        console.error('parley: a write failed after changing the database; rolling back the whole turn', err);
        this.abortTurn();
      }
      throw err;
    }
    if (!light) this.db.exec('RELEASE w');
    const mine = this.pending.pop() as CommitHook[];
    const outer = this.pending[this.pending.length - 1];
    (outer ?? this.hooks).push(...mine);
    return result;
  }

  /**
   * After a rollback: the in-memory caches (src/db/watch.ts) heard the undone changes and may hold
   * rows that were never committed, and a rollback fires no trigger; they are emptied, and the epoch
   * moves.
   */
  private forgetUndoneRows(): void {
    this.epoch++;
    invalidateAll(this.db);
  }

  /** Rolls back everything this turn wrote: every waiting hook hears `false` (their replies become 500s). */
  private abortTurn(): void {
    try {
      this.db.exec('ROLLBACK');
    } catch {
      /* already rolled back by SQLite */
    }
    this.open = false;
    this.dirty = false;
    this.forgetUndoneRows();
    for (const fn of this.failureListeners) fn();
    const hooks = this.hooks;
    this.hooks = [];
    for (const hook of hooks) {
      try {
        hook(false);
      } catch (err) {
        console.error('parley: after-commit hook failed', err);
      }
    }
  }

  /** Inside write(): runs `cb` after the batch commits, and never if this write rolls back. */
  onCommit(cb: () => void): void {
    const list = this.pending[this.pending.length - 1];
    if (!list) throw new Error('onCommit outside write()');
    list.push((ok) => ok && cb());
  }

  /**
   * Runs `cb(committed)` once the current batch has committed; at once if none is open or nothing
   * has been written in it yet (then the reply can only show committed data).
   */
  afterCommit(cb: CommitHook): void {
    if (this.open && this.dirty) this.hooks.push(cb);
    else cb(true);
  }

  /** Commits now (also called by the scheduled setImmediate; a no-op when nothing is open). */
  commit(): void {
    if (!this.open) return;
    let ok = true;
    try {
      this.db.exec('COMMIT');
    } catch (err) {
      ok = false;
      console.error('parley: commit failed', err);
      try {
        this.db.exec('ROLLBACK');
      } catch {
        /* already rolled back by SQLite */
      }
      // Caches may hold rows this transaction wrote: they must forget them.
      invalidateAll(this.db);
      for (const fn of this.failureListeners) fn();
    }
    if (this.dirty || !ok) this.epoch++;
    this.noticeOutsideChanges();
    this.open = false;
    this.dirty = false;
    const hooks = this.hooks;
    this.hooks = [];
    // The hooks build events and replies from the database: they read inside the next batch's
    // transaction, not one implicit transaction (and its file locks) per statement.
    if (ok && hooks.length > 0) this.begin();
    for (const hook of hooks) {
      try {
        hook(ok);
      } catch (err) {
        console.error('parley: after-commit hook failed', err);
      }
    }
  }
}
