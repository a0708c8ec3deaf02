import { type FileHandle, open } from "node:fs/promises";
import Database from "better-sqlite3";
import { WalCheckpointer } from "./wal-checkpointer.ts";

/**
 * The embedded store's database: one SQLite file (WAL, `synchronous=FULL`) holding events, clock,
 * conflict index, alias, artifact records and settings, and the order this process's operations
 * run in. Every mutation runs in `BEGIN IMMEDIATE`, which takes the file's write lock before
 * reading, so two memgate processes racing on one file serialise exactly as two Lambdas racing on
 * DynamoDB conditions do: the loser sees the winner's write and its compare-and-set fails.
 *
 * Group commit: the writes this process asks for while a loop turn runs join one transaction,
 * each inside its own savepoint (all or nothing per write: a refused write rolls back to its
 * savepoint and its neighbours commit), and every write of the group settles only after the one
 * COMMIT that holds it is durable, so nothing is acknowledged before it is. Reads run on a second
 * connection that sees committed state only (WAL): a read never waits for a commit and never sees
 * a group half done.
 *
 * A serving process's store (`serving`) makes its commits durable off the serving thread: its
 * writer commits with `synchronous=NORMAL` (the COMMIT writes the log, no sync) and the group's
 * writes settle after a datasync of the log on libuv's thread pool, while this thread goes on
 * serving and committing the next groups (one sync at a time; a commit made while one runs joins
 * the next). The log is appended in order and a sync covers all of it, so a write that settled
 * survives a power loss as under `synchronous=FULL`; a read that may have seen a commit not yet
 * synced answers only once it is.
 */

const SCHEMA = `
CREATE TABLE IF NOT EXISTS clock (
  subject TEXT PRIMARY KEY,
  high_water INTEGER NOT NULL,
  input_epoch INTEGER NOT NULL,
  policy TEXT,
  selector TEXT,
  rebuild_attempt TEXT,
  epoch_moved_at INTEGER
);
CREATE TABLE IF NOT EXISTS events (
  subject TEXT NOT NULL,
  event_id TEXT NOT NULL,
  sequence INTEGER NOT NULL,
  hash TEXT NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY (subject, event_id),
  UNIQUE (subject, sequence)
);
CREATE TRIGGER IF NOT EXISTS events_write_once_update BEFORE UPDATE ON events
  BEGIN SELECT RAISE(ABORT, 'events are write-once'); END;
CREATE TRIGGER IF NOT EXISTS events_write_once_delete BEFORE DELETE ON events
  BEGIN SELECT RAISE(ABORT, 'events are never deleted'); END;
CREATE TABLE IF NOT EXISTS event_actors (
  subject TEXT NOT NULL,
  target_id TEXT NOT NULL,
  actor_id TEXT NOT NULL,
  PRIMARY KEY (subject, target_id, actor_id)
);
CREATE TABLE IF NOT EXISTS conflict_index (
  subject TEXT NOT NULL,
  key TEXT NOT NULL,
  scope TEXT NOT NULL,
  positions TEXT NOT NULL,
  readings TEXT,
  PRIMARY KEY (subject, key, scope)
);
CREATE TABLE IF NOT EXISTS alias (
  subject TEXT PRIMARY KEY,
  artifact_id TEXT NOT NULL,
  source_epoch INTEGER NOT NULL,
  covers_through INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS artifacts (
  subject TEXT NOT NULL,
  artifact_id TEXT NOT NULL,
  status TEXT NOT NULL,
  covers_through INTEGER NOT NULL,
  input_epoch INTEGER NOT NULL,
  parent_artifact_id TEXT,
  input_root TEXT NOT NULL,
  stale INTEGER NOT NULL DEFAULT 0,
  gate TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (subject, artifact_id)
);
CREATE TABLE IF NOT EXISTS settings (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  value TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS artifacts_never_deleted BEFORE DELETE ON artifacts
  BEGIN SELECT RAISE(ABORT, 'artifact records are never deleted'); END;
`;

/** At most this many writes join one transaction: the first of a long queue waits one group, not all. */
export const MAX_GROUP_WRITES = 256;

/** One connection and its prepared statements: what the concern modules run their SQL on. */
export class SqliteConnection {
  readonly db: Database.Database;
  /** Prepared statements, compiled once per connection. */
  private readonly statements = new Map<string, Database.Statement>();
  /** `together`'s transaction wrapper. */
  private deferred: ((work: (connection: SqliteConnection) => unknown) => unknown) | undefined;

  /** `synchronous`: FULL, or NORMAL for a writer whose commits `SqliteDatabase` syncs itself. */
  constructor(file: string, synchronous: "FULL" | "NORMAL" = "FULL") {
    this.db = new Database(file);
    this.db.pragma("journal_mode = WAL");
    // FULL: an append or publish acknowledged to a caller survives a power loss, not only a crash.
    this.db.pragma(`synchronous = ${synchronous}`);
    this.db.pragma("busy_timeout = 30000");
  }

  /** Runs `work` in one deferred (read) transaction, through a wrapper built once rather than per read. */
  together<T>(work: (connection: SqliteConnection) => T): T {
    this.deferred ??= this.db.transaction((inner: (connection: SqliteConnection) => unknown) =>
      inner(this),
    ).deferred;
    return this.deferred(work) as T;
  }

  /** Runs a statement of no answer (BEGIN, SAVEPOINT, COMMIT …), prepared once like the rest. */
  run(sql: string): void {
    this.statement(sql).run();
  }

  statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}

interface QueuedWrite {
  work: (connection: SqliteConnection) => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type WriteOutcome =
  | { write: QueuedWrite; ok: true; value: unknown }
  | { write: QueuedWrite; ok: false; error: unknown };

export class SqliteDatabase {
  private readonly writer: SqliteConnection;
  private readonly reader: SqliteConnection;
  /** Writes waiting for the next group, in the order they were asked for. */
  private queued: QueuedWrite[] = [];
  private grouping = false;
  private committed = 0;

  private readonly checkpointer: WalCheckpointer | null;
  /** Whether commits are synced off this thread, after COMMIT (a serving process's store). */
  private readonly syncsAfterCommit: boolean;
  /** The write-ahead log, opened for `syncLog` after the first commit. */
  private log: FileHandle | undefined;
  /** The newest sync asked for (settled, never rejecting): what a read waits for. */
  private lastSync: Promise<void> = Promise.resolve();
  /** A sync asked for that has not started: a commit made now joins it. */
  private nextSync: Promise<void> | null = null;

  /** `serving`: the log is checkpointed on a thread of its own (WalCheckpointer), never in a commit here, and commits are synced off this thread. */
  constructor(
    private readonly file: string,
    options: { serving?: boolean } = {},
  ) {
    this.syncsAfterCommit = options.serving === true;
    this.writer = new SqliteConnection(file, this.syncsAfterCommit ? "NORMAL" : "FULL");
    this.writer.db.exec(SCHEMA);
    // Stores from before selector v2 have no selector column: their subjects read as "v1".
    const columns = this.writer.db.pragma("table_info(clock)") as Array<{ name: string }>;
    if (!columns.some((column) => column.name === "selector"))
      this.writer.db.exec("ALTER TABLE clock ADD COLUMN selector TEXT");
    // Stores from before selector v3 keep no reading times: their holders are looked up when asked.
    const indexColumns = this.writer.db.pragma("table_info(conflict_index)") as Array<{ name: string }>;
    if (!indexColumns.some((column) => column.name === "readings"))
      this.writer.db.exec("ALTER TABLE conflict_index ADD COLUMN readings TEXT");
    // Stores from before rebuild attempts were remembered: none remembered yet.
    if (!columns.some((column) => column.name === "rebuild_attempt"))
      this.writer.db.exec("ALTER TABLE clock ADD COLUMN rebuild_attempt TEXT");
    // Stores from before the clock kept where its epoch moved: read as moved at the high water
    // (sqlite-events.ts `readClock`) until a write sets it.
    if (!columns.some((column) => column.name === "epoch_moved_at"))
      this.writer.db.exec("ALTER TABLE clock ADD COLUMN epoch_moved_at INTEGER");
    this.reader = new SqliteConnection(file);
    this.checkpointer = null;
    if (options.serving) {
      this.writer.db.pragma("wal_autocheckpoint = 0");
      this.checkpointer = new WalCheckpointer(file, () => {
        // The thread is gone: commits checkpoint again, as SQLite does by default.
        if (this.writer.db.open) this.writer.db.pragma("wal_autocheckpoint = 1000");
      });
    }
  }

  /**
   * A number that changes whenever another connection to the file commits (another process, or
   * another thread of this one), never for this object's own writes: what a cache of something
   * only this object writes checks before it answers.
   */
  othersVersion(): number {
    return this.writer.statement("PRAGMA data_version").pluck().get() as number;
  }

  /** Write transactions this object committed (each holding one or more writes). */
  get commits(): number {
    return this.committed;
  }

  /** Syncs the write-ahead log on libuv's thread pool: every commit written to it is durable after. */
  private async syncLog(): Promise<void> {
    this.log ??= await open(`${this.file}-wal`, "r");
    await this.log.datasync();
  }

  close(): void {
    void this.log?.close().catch(() => undefined);
    this.checkpointer?.stop();
    this.writer.db.close();
    this.reader.db.close();
  }

  /**
   * Runs `work` in a savepoint of the next group's BEGIN IMMEDIATE transaction; resolves after that
   * transaction committed, rejects with the work's own error (its savepoint rolled back, the rest
   * of the group unaffected) or with the commit's (nothing of the group was written).
   */
  write<T>(work: (connection: SqliteConnection) => Promise<T> | T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queued.push({ work, resolve: resolve as (value: unknown) => void, reject });
      // The bounded wait: writes asked for in this loop turn join; the group starts right after it.
      if (!this.grouping) {
        this.grouping = true;
        setImmediate(() => void this.runGroups());
      }
    });
  }

  /**
   * A read of committed state (never a group half done), on the reading connection; it answers
   * once the commits it may have seen are durable.
   */
  read<T>(work: (connection: SqliteConnection) => T): Promise<T> {
    try {
      const value = work(this.reader);
      return this.syncsAfterCommit ? this.lastSync.then(() => value) : Promise.resolve(value);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** A read of several statements from one database state: one deferred (read) transaction. */
  readTogether<T>(work: (connection: SqliteConnection) => T): Promise<T> {
    return this.read((connection) => connection.together(work));
  }

  private async runGroups(): Promise<void> {
    while (this.queued.length > 0) {
      const group = this.queued.splice(0, MAX_GROUP_WRITES);
      const commitsBefore = this.committed;
      const outcomes = await this.runGroup(group);
      // A serving store's group settles once its commit is synced, while the next group gathers.
      if (this.syncsAfterCommit && this.committed > commitsBefore)
        void this.durable().then(
          () => settle(outcomes),
          (error) => settle(unsynced(outcomes, error)),
        );
      else settle(outcomes);
      // Writes asked for meanwhile wait for the next turn's group, which the requests read in it join.
      if (this.queued.length > 0) await new Promise((resolve) => setImmediate(resolve));
    }
    this.grouping = false;
  }

  /**
   * Resolves once the commits made so far are synced. Syncs run one at a time: a commit made
   * while one runs joins the next, which starts when it ends and covers every commit before it.
   */
  private durable(): Promise<void> {
    if (this.nextSync) return this.nextSync;
    const sync = this.lastSync.then(() => {
      this.nextSync = null;
      return this.syncLog();
    });
    this.nextSync = sync;
    this.lastSync = sync.catch(() => undefined);
    return sync;
  }

  /** One transaction over `group`; never throws: each write's outcome says how it ended. */
  private async runGroup(group: QueuedWrite[]): Promise<WriteOutcome[]> {
    const writer = this.writer;
    const db = writer.db;
    const failAll = (error: unknown, outcomes: WriteOutcome[]): WriteOutcome[] =>
      outcomes.map((outcome) => ({
        write: outcome.write,
        ok: false,
        error: outcome.ok ? error : outcome.error,
      }));
    try {
      writer.run("BEGIN IMMEDIATE");
    } catch (error) {
      return group.map((write) => ({ write, ok: false, error }));
    }
    const outcomes: WriteOutcome[] = [];
    for (const [index, write] of group.entries()) {
      try {
        writer.run("SAVEPOINT write");
        const value = await write.work(writer);
        writer.run("RELEASE write");
        outcomes.push({ write, ok: true, value });
      } catch (error) {
        outcomes.push({ write, ok: false, error });
        try {
          writer.run("ROLLBACK TO write");
          writer.run("RELEASE write");
        } catch (rollbackError) {
          // The engine ended the whole transaction (an I/O or full-disk error): nothing of the
          // group stands; the writes not run yet go first in the next group.
          if (db.inTransaction) writer.run("ROLLBACK");
          this.queued.unshift(...group.slice(index + 1));
          return failAll(rollbackError, outcomes);
        }
      }
    }
    try {
      writer.run("COMMIT");
      this.committed++;
      return outcomes;
    } catch (error) {
      if (db.inTransaction) writer.run("ROLLBACK");
      return failAll(error, outcomes);
    }
  }
}

function settle(outcomes: readonly WriteOutcome[]): void {
  for (const outcome of outcomes)
    if (outcome.ok) outcome.write.resolve(outcome.value);
    else outcome.write.reject(outcome.error);
}

/** A group's outcomes when its commit could not be synced: none of its writes is acknowledged. */
function unsynced(outcomes: readonly WriteOutcome[], error: unknown): WriteOutcome[] {
  const failed = new Error("the commit was written but could not be synced to disk", { cause: error });
  return outcomes.map((outcome) =>
    outcome.ok ? { write: outcome.write, ok: false, error: failed } : outcome,
  );
}
