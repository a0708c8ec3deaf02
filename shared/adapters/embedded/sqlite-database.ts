import Database from "better-sqlite3";

/**
 * The embedded store's database: one SQLite file (WAL, `synchronous=FULL`) holding events, clock,
 * conflict index, alias, artifact records and settings, and the order this process's operations
 * run in. Every mutation runs in `BEGIN IMMEDIATE`, which takes the file's write lock before
 * reading, so two memgate processes racing on one file serialise exactly as two Lambdas racing on
 * DynamoDB conditions do: the loser sees the winner's write and its compare-and-set fails.
 */

const SCHEMA = `
CREATE TABLE IF NOT EXISTS clock (
  subject TEXT PRIMARY KEY,
  high_water INTEGER NOT NULL,
  input_epoch INTEGER NOT NULL,
  policy TEXT,
  selector TEXT
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

export class SqliteDatabase {
  private readonly db: Database.Database;
  /** Serialises this process's operations: each runs in one SQLite transaction on one connection. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Prepared statements, compiled once per connection. */
  private readonly statements = new Map<string, Database.Statement>();

  constructor(file: string) {
    this.db = new Database(file);
    this.db.pragma("journal_mode = WAL");
    // FULL: an append or publish acknowledged to a caller survives a power loss, not only a crash.
    this.db.pragma("synchronous = FULL");
    this.db.pragma("busy_timeout = 30000");
    this.db.exec(SCHEMA);
    // Stores from before selector v2 have no selector column: their subjects read as "v1".
    const columns = this.db.pragma("table_info(clock)") as Array<{ name: string }>;
    if (!columns.some((column) => column.name === "selector"))
      this.db.exec("ALTER TABLE clock ADD COLUMN selector TEXT");
    // Stores from before selector v3 keep no reading times: their holders are looked up when asked.
    const indexColumns = this.db.pragma("table_info(conflict_index)") as Array<{ name: string }>;
    if (!indexColumns.some((column) => column.name === "readings"))
      this.db.exec("ALTER TABLE conflict_index ADD COLUMN readings TEXT");
  }

  statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  close(): void {
    this.db.close();
  }

  /** Runs `work` inside BEGIN IMMEDIATE, one at a time in this process; rolls back on any error. */
  write<T>(work: () => Promise<T> | T): Promise<T> {
    return this.enqueue(async () => {
      this.db.exec("BEGIN IMMEDIATE");
      try {
        const result = await work();
        this.db.exec("COMMIT");
        return result;
      } catch (error) {
        if (this.db.inTransaction) this.db.exec("ROLLBACK");
        throw error;
      }
    });
  }

  /**
   * Runs a read after every operation this process started before it: a read never sees another
   * operation's transaction half done (async work inside a transaction yields to other callers).
   */
  read<T>(work: () => T): Promise<T> {
    return this.enqueue(async () => work());
  }

  /** A read of several statements from one database state: one deferred (read) transaction. */
  readTogether<T>(work: () => T): Promise<T> {
    return this.read(() => this.db.transaction(work).deferred());
  }

  private enqueue<T>(run: () => Promise<T>): Promise<T> {
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }
}
