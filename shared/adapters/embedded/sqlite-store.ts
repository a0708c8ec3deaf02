import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { link, mkdir, open, readFile, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import type { AppendPlan, ConflictIndexEntry, StoredEvent } from "#domain/append-plan.ts";
import { planAppend } from "#domain/append-plan.ts";
import { GateReport, RefusedAttempts } from "#domain/gate.ts";
import { decodeStoredEvent } from "#domain/hashing.ts";
import type { Manifest, MemoryEvent, SequencedEvent, Snapshot, TrustPolicy } from "#domain/schemas.ts";
import {
  DEFAULT_TRUST_POLICY,
  Manifest as ManifestSchema,
  TrustPolicy as TrustPolicySchema,
} from "#domain/schemas.ts";
import { SELECTOR_VERSION, type SelectorVersion, selectorNamed } from "#domain/validity.ts";
import {
  AlreadyWrittenError,
  NotFoundError,
  PublishRefusedError,
  translatePlanError,
} from "#ports/errors.ts";
import type {
  AliasPort,
  AliasState,
  AppendResult,
  ArtifactFiles,
  ArtifactRecord,
  ArtifactStatus,
  ArtifactStore,
  Clock,
  EventLog,
  PublishRequest,
  SettingsPort,
  TenantSettings,
} from "#ports/store.ts";
import { DEFAULT_SETTINGS, snapshotOf } from "#ports/store.ts";
import { boundedName } from "../bounded-name.ts";

/**
 * The embedded store: one SQLite file (WAL) for events, clock, conflict index, alias and artifact
 * records, and write-once files for artifact bodies and manifests. Every mutation runs in
 * `BEGIN IMMEDIATE`, which takes the file's write lock before reading, so two memgate processes
 * racing on one file serialise exactly as two Lambdas racing on DynamoDB conditions do: the loser
 * sees the winner's write and its compare-and-set fails.
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

interface EventRow {
  event_id: string;
  sequence: number;
  hash: string;
  body: string;
}

interface ArtifactRow {
  subject: string;
  artifact_id: string;
  status: ArtifactStatus;
  covers_through: number;
  input_epoch: number;
  parent_artifact_id: string | null;
  input_root: string;
  stale: number;
  gate: string;
  created_at: string;
}

/**
 * File-name-safe form of an id: letters, digits, _ and - stay; everything else becomes %XX; a long
 * result is bounded (see `boundedName`).
 */
function safeName(id: string): string {
  const escaped = Array.from(new TextEncoder().encode(id), (byte) => {
    const char = String.fromCharCode(byte);
    return /[A-Za-z0-9_-]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }).join("");
  return boundedName(id, escaped);
}

/** fsync of a folder, so a new entry in it survives a power loss. */
async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The embedded store's home folder cannot be used: a user's setting to fix (exit 2). */
/** The write-once files beside an artifact record, one folder each. */
type BlobKind = "artifacts" | "manifests" | "reports" | "recall" | "attempts" | "segments";

export class StoreHomeError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreHomeError";
  }
}

export class SqliteStore implements EventLog, AliasPort, ArtifactStore, SettingsPort {
  private readonly db: Database.Database;
  /** Serialises this process's operations: each runs in one SQLite transaction on one connection. */
  private queue: Promise<unknown> = Promise.resolve();

  /** The database's file name inside the home folder. */
  static readonly FILE = "memgate.sqlite";

  /**
   * Opens (creating when absent) the store in `home`; a home that is a file, unwritable or on a
   * read-only file system is a StoreHomeError saying which, never a stack trace.
   */
  static open(home: string): SqliteStore {
    try {
      return new SqliteStore(home);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? "";
      const why =
        code === "ENOTDIR" || code === "EEXIST"
          ? "is a file, not a folder"
          : code === "EACCES" || code === "EPERM"
            ? "is not writable by this user"
            : code === "EROFS" || code === "SQLITE_READONLY" || code === "SQLITE_CANTOPEN"
              ? "cannot be written (read-only or missing permissions)"
              : `cannot hold a store (${error instanceof Error ? error.message : String(error)})`;
      throw new StoreHomeError(`--home ${home} ${why}`, { cause: error });
    }
  }

  constructor(private readonly home: string) {
    mkdirSync(home, { recursive: true });
    this.db = new Database(join(home, SqliteStore.FILE));
    this.db.pragma("journal_mode = WAL");
    // FULL: an append or publish acknowledged to a caller survives a power loss, not only a crash.
    this.db.pragma("synchronous = FULL");
    this.db.pragma("busy_timeout = 30000");
    this.db.exec(SCHEMA);
    // Stores from before selector v2 have no selector column: their subjects read as "v1".
    const columns = this.db.pragma("table_info(clock)") as Array<{ name: string }>;
    if (!columns.some((column) => column.name === "selector"))
      this.db.exec("ALTER TABLE clock ADD COLUMN selector TEXT");
  }

  /** Prepared statements, compiled once per connection. */
  private readonly statements = new Map<string, Database.Statement>();

  private statement(sql: string): Database.Statement {
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
  private exclusive<T>(work: () => Promise<T> | T): Promise<T> {
    const run = async (): Promise<T> => {
      this.db.exec("BEGIN IMMEDIATE");
      try {
        const result = await work();
        this.db.exec("COMMIT");
        return result;
      } catch (error) {
        if (this.db.inTransaction) this.db.exec("ROLLBACK");
        throw error;
      }
    };
    return this.enqueue(run);
  }

  /**
   * Runs a read after every operation this process started before it: a read never sees another
   * operation's transaction half done (async work inside a transaction yields to other callers).
   */
  private read<T>(work: () => T): Promise<T> {
    return this.enqueue(async () => work());
  }

  private enqueue<T>(run: () => Promise<T>): Promise<T> {
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  private readClock(subject: string): Clock & { policy: TrustPolicy; selector: SelectorVersion } {
    const row = this.statement(
      "SELECT high_water, input_epoch, policy, selector FROM clock WHERE subject = ?",
    ).get(subject) as
      | { high_water: number; input_epoch: number; policy: string | null; selector: string | null }
      | undefined;
    return {
      highWater: row?.high_water ?? 0,
      inputEpoch: row?.input_epoch ?? 0,
      policy: row?.policy ? TrustPolicySchema.parse(JSON.parse(row.policy)) : DEFAULT_TRUST_POLICY,
      selector: row ? selectorNamed(row.selector) : SELECTOR_VERSION,
    };
  }

  private readAliasRow(subject: string): AliasState | null {
    const row = this.statement(
      "SELECT artifact_id, source_epoch, covers_through FROM alias WHERE subject = ?",
    ).get(subject) as { artifact_id: string; source_epoch: number; covers_through: number } | undefined;
    return row
      ? { artifactId: row.artifact_id, sourceEpoch: row.source_epoch, coversThrough: row.covers_through }
      : null;
  }

  private loadEvents(subject: string, ids: readonly string[]): Map<string, StoredEvent> {
    const found = new Map<string, StoredEvent>();
    const byId = this.statement(
      "SELECT event_id, sequence, hash, body FROM events WHERE subject = ? AND event_id = ?",
    );
    const actors = this.statement("SELECT actor_id FROM event_actors WHERE subject = ? AND target_id = ?");
    for (const id of ids) {
      const row = byId.get(subject, id) as EventRow | undefined;
      if (!row) continue;
      found.set(id, {
        event: parseStoredEvent(row),
        hash: row.hash,
        actors: (actors.all(subject, id) as Array<{ actor_id: string }>).map((a) => a.actor_id),
      });
    }
    return found;
  }

  private loadIndex(
    subject: string,
    keyScopes: ReadonlyArray<{ key: string; scope: string }>,
  ): ConflictIndexEntry[] {
    const select = this.statement(
      "SELECT positions FROM conflict_index WHERE subject = ? AND key = ? AND scope = ?",
    );
    const entries: ConflictIndexEntry[] = [];
    for (const { key, scope } of keyScopes) {
      const row = select.get(subject, key, scope) as { positions: string } | undefined;
      if (row) entries.push({ key, scope, positions: JSON.parse(row.positions) });
    }
    return entries;
  }

  async append(subject: string, events: readonly MemoryEvent[]): Promise<AppendResult> {
    return this.exclusive(async () => {
      const clock = this.readClock(subject);
      let plan: AppendPlan;
      try {
        plan = await planAppend(events, {
          clock,
          policy: clock.policy,
          loadEvents: async (ids) => this.loadEvents(subject, ids),
          loadIndex: async (keyScopes) => this.loadIndex(subject, keyScopes),
        });
      } catch (error) {
        throw translatePlanError(subject, error);
      }
      this.applyPlan(subject, plan, clock.policy);
      return {
        appended: plan.newEvents.map((entry) => entry.event.eventId),
        duplicates: plan.duplicates,
        highWater: plan.clockAfter.highWater,
        inputEpoch: plan.clockAfter.inputEpoch,
        epochMoved: plan.clockAfter.inputEpoch !== plan.clockBefore.inputEpoch,
        validityChanged: plan.validityChanged,
        chunks: 1,
      };
    });
  }

  private applyPlan(subject: string, plan: AppendPlan, policy: TrustPolicy): void {
    const insertEvent = this.statement(
      "INSERT INTO events (subject, event_id, sequence, hash, body) VALUES (?, ?, ?, ?, ?)",
    );
    for (const { event, hash } of plan.newEvents) {
      const { sequence, ...content } = event;
      insertEvent.run(subject, event.eventId, sequence, hash, JSON.stringify(content));
    }
    const insertActor = this.statement(
      "INSERT OR IGNORE INTO event_actors (subject, target_id, actor_id) VALUES (?, ?, ?)",
    );
    for (const [target, actors] of plan.actorsAdded)
      for (const actor of actors) insertActor.run(subject, target, actor);
    const upsertIndex = this.statement(
      "INSERT INTO conflict_index (subject, key, scope, positions) VALUES (?, ?, ?, ?) ON CONFLICT (subject, key, scope) DO UPDATE SET positions = excluded.positions",
    );
    for (const entry of plan.index)
      upsertIndex.run(subject, entry.key, entry.scope, JSON.stringify(entry.positions));
    this.writeClock(subject, plan.clockAfter, policy);
  }

  private writeClock(subject: string, clock: Clock, policy: TrustPolicy): void {
    this.statement(
      // A new subject starts on the current selector; an existing one keeps its own until adopted.
      "INSERT INTO clock (subject, high_water, input_epoch, policy, selector) VALUES (?, ?, ?, ?, ?) ON CONFLICT (subject) DO UPDATE SET high_water = excluded.high_water, input_epoch = excluded.input_epoch, policy = excluded.policy",
    ).run(subject, clock.highWater, clock.inputEpoch, JSON.stringify(policy), SELECTOR_VERSION);
  }

  async snapshot(subject: string): Promise<Snapshot> {
    // One read transaction: clock and alias from the same database state.
    return this.read(() => {
      const read = this.db.transaction(() => ({
        clock: this.readClock(subject),
        alias: this.readAliasRow(subject),
      }));
      const { clock, alias } = read.deferred();
      return snapshotOf(subject, clock, alias);
    });
  }

  async eventsThrough(subject: string, highWater: number): Promise<SequencedEvent[]> {
    return this.eventsWhere(subject, "sequence <= ?", highWater);
  }

  async eventsAfter(subject: string, after: number): Promise<SequencedEvent[]> {
    return this.eventsWhere(subject, "sequence > ?", after);
  }

  async eventsPage(subject: string, after: number, through: number, limit: number): Promise<StoredEvent[]> {
    return this.read(() => {
      const rows = this.statement(
        "SELECT event_id, sequence, hash, body FROM events WHERE subject = ? AND sequence > ? AND sequence <= ? ORDER BY sequence LIMIT ?",
      ).all(subject, after, through, limit) as EventRow[];
      const actors = this.statement("SELECT actor_id FROM event_actors WHERE subject = ? AND target_id = ?");
      return rows.map((row) => ({
        event: parseStoredEvent(row),
        hash: row.hash,
        actors: (actors.all(subject, row.event_id) as Array<{ actor_id: string }>).map((a) => a.actor_id),
      }));
    });
  }

  async eventsById(subject: string, ids: readonly string[]): Promise<Map<string, StoredEvent>> {
    return this.read(() => this.loadEvents(subject, ids));
  }

  private eventsWhere(subject: string, condition: string, bound: number): Promise<SequencedEvent[]> {
    return this.read(() => {
      const rows = this.statement(
        `SELECT event_id, sequence, hash, body FROM events WHERE subject = ? AND ${condition} ORDER BY sequence`,
      ).all(subject, bound) as EventRow[];
      return rows.map(parseStoredEvent);
    });
  }

  async trustPolicy(subject: string): Promise<TrustPolicy> {
    return this.read(() => {
      return this.readClock(subject).policy;
    });
  }

  async setTrustPolicy(
    subject: string,
    policy: TrustPolicy,
    expected: Clock,
    moveEpoch: boolean,
  ): Promise<Clock | null> {
    const parsed = TrustPolicySchema.parse(policy);
    return this.exclusive(() => this.updateClockIf(subject, expected, moveEpoch, { policy: parsed }));
  }

  async selectorVersion(subject: string): Promise<SelectorVersion> {
    return this.read(() => this.readClock(subject).selector);
  }

  async adoptSelector(
    subject: string,
    version: SelectorVersion,
    expected: Clock,
    moveEpoch: boolean,
  ): Promise<boolean> {
    return this.exclusive(
      () => this.updateClockIf(subject, expected, moveEpoch, { selector: version }) !== null,
    );
  }

  /**
   * Inside a transaction: sets the policy or the selector on the clock only if it still equals
   * `expected`, moving the epoch by one when `moveEpoch`; null when the clock moved meanwhile.
   */
  private updateClockIf(
    subject: string,
    expected: Clock,
    moveEpoch: boolean,
    set: { policy?: TrustPolicy; selector?: SelectorVersion },
  ): Clock | null {
    const clock = this.readClock(subject);
    if (clock.highWater !== expected.highWater || clock.inputEpoch !== expected.inputEpoch) return null;
    const next = { highWater: clock.highWater, inputEpoch: clock.inputEpoch + (moveEpoch ? 1 : 0) };
    this.writeClock(subject, next, set.policy ?? clock.policy);
    if (set.selector !== undefined)
      this.statement("UPDATE clock SET selector = ? WHERE subject = ?").run(set.selector, subject);
    return next;
  }

  async subjectsToCheck(rebuildAfterEvents: number): Promise<string[]> {
    // The rule of rebuildReason, in SQL over the committed clock and alias rows: exact.
    return this.read(() =>
      (
        this.statement(
          `SELECT clock.subject FROM clock LEFT JOIN alias ON alias.subject = clock.subject
           WHERE (alias.subject IS NULL AND clock.high_water > 0)
              OR alias.source_epoch != clock.input_epoch
              OR clock.high_water - alias.covers_through >= ?
           ORDER BY clock.subject`,
        ).all(rebuildAfterEvents) as Array<{ subject: string }>
      ).map((row) => row.subject),
    );
  }

  async markChecked(_subject: string, _checked: Clock): Promise<void> {
    // Nothing to clear: subjectsToCheck derives its answer from the clock and alias themselves.
  }

  async subjectsNotOn(version: SelectorVersion): Promise<string[]> {
    return this.read(() =>
      (
        this.statement("SELECT subject FROM clock WHERE selector IS NOT ? ORDER BY subject").all(
          version,
        ) as Array<{
          subject: string;
        }>
      ).map((row) => row.subject),
    );
  }

  async listSubjects(): Promise<string[]> {
    return this.read(() =>
      (this.statement("SELECT subject FROM clock ORDER BY subject").all() as Array<{ subject: string }>).map(
        (row) => row.subject,
      ),
    );
  }

  async readAlias(subject: string): Promise<AliasState | null> {
    return this.read(() => {
      return this.readAliasRow(subject);
    });
  }

  async publishIfUnchanged(request: PublishRequest): Promise<AliasState> {
    return this.exclusive(() => {
      const { subject, artifactId, expectedAlias } = request;
      const clock = this.readClock(subject);
      if (clock.inputEpoch !== request.inputEpoch)
        throw new PublishRefusedError(
          "epoch-moved",
          `the clock is at epoch ${clock.inputEpoch}, the artifact was built at ${request.inputEpoch}`,
        );
      if (clock.highWater < request.newCoversThrough)
        throw new PublishRefusedError(
          "beyond-log",
          `the artifact covers through ${request.newCoversThrough}, but the log ends at ${clock.highWater}`,
        );
      const alias = this.readAliasRow(subject);
      const unchanged =
        expectedAlias === null
          ? alias === null
          : alias !== null &&
            alias.artifactId === expectedAlias.parentArtifactId &&
            alias.sourceEpoch === expectedAlias.sourceEpoch &&
            alias.coversThrough === expectedAlias.coversThrough;
      if (!unchanged)
        throw new PublishRefusedError(
          "alias-moved",
          `the alias is ${alias ? `${alias.artifactId}@${alias.sourceEpoch}/${alias.coversThrough}` : "unset"}, the snapshot expected ${expectedAlias ? `${expectedAlias.parentArtifactId}@${expectedAlias.sourceEpoch}/${expectedAlias.coversThrough}` : "none"}`,
        );
      if (alias !== null && request.newCoversThrough < alias.coversThrough)
        throw new PublishRefusedError(
          "coverage-decrease",
          `coverage would go from ${alias.coversThrough} back to ${request.newCoversThrough}`,
        );
      const moved = this.statement(
        "UPDATE artifacts SET status = 'PUBLISHED' WHERE subject = ? AND artifact_id = ? AND status IN ('CANDIDATE', 'SHADOW') AND stale = 0",
      ).run(subject, artifactId);
      if (moved.changes !== 1)
        throw new PublishRefusedError(
          "artifact-not-publishable",
          `${artifactId} is not a CANDIDATE or SHADOW artifact of ${subject}`,
        );
      if (alias !== null)
        this.statement(
          "UPDATE artifacts SET status = 'SUPERSEDED' WHERE subject = ? AND artifact_id = ? AND status = 'PUBLISHED'",
        ).run(subject, alias.artifactId);
      const next = { artifactId, sourceEpoch: request.inputEpoch, coversThrough: request.newCoversThrough };
      this.statement(
        "INSERT INTO alias (subject, artifact_id, source_epoch, covers_through) VALUES (?, ?, ?, ?) ON CONFLICT (subject) DO UPDATE SET artifact_id = excluded.artifact_id, source_epoch = excluded.source_epoch, covers_through = excluded.covers_through",
      ).run(subject, next.artifactId, next.sourceEpoch, next.coversThrough);
      return next;
    });
  }

  private blobPath(kind: BlobKind, subject: string, artifactId: string): string {
    return join(this.home, kind, safeName(subject), `${safeName(artifactId)}.json`);
  }

  /** Write-once: the body goes to a temporary file, then is hard-linked into place (EEXIST if taken). */
  private async writeOnce(path: string, text: string): Promise<void> {
    const folder = dirname(path);
    const created = await mkdir(folder, { recursive: true });
    // New folders are entries of their parents: sync each parent up to the first that existed.
    if (created)
      for (let at = folder; at !== dirname(created); at = dirname(at)) await syncFolder(dirname(at));
    const temporary = `${path}.${randomUUID()}.tmp`;
    // Durable before anything names it: the body reaches the disk, then its directory entry does,
    // and only then does the caller commit the record that points at it.
    const file = await open(temporary, "wx");
    try {
      await file.writeFile(text);
      await file.sync();
    } finally {
      await file.close();
    }
    try {
      await link(temporary, path);
      await syncFolder(folder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST")
        throw new AlreadyWrittenError(path, { cause: error });
      throw error;
    } finally {
      await rm(temporary, { force: true });
    }
  }

  async writeArtifact(subject: string, artifactId: string, files: ArtifactFiles): Promise<void> {
    const write = (kind: BlobKind, value: unknown) =>
      this.writeOnce(this.blobPath(kind, subject, artifactId), JSON.stringify(value));
    await write("manifests", files.manifest);
    await write("artifacts", files.body);
    if (files.report) await write("reports", files.report);
    if (files.recallIndex !== undefined) await write("recall", files.recallIndex);
    if (files.attempts && files.attempts.length > 0) await write("attempts", files.attempts);
  }

  async readAttempts(subject: string, artifactId: string): Promise<RefusedAttempts> {
    const text = await this.readOptional(this.blobPath("attempts", subject, artifactId));
    return text === undefined ? [] : RefusedAttempts.parse(JSON.parse(text));
  }

  readSegment(subject: string, key: string): Promise<string | undefined> {
    return this.readOptional(this.blobPath("segments", subject, key));
  }

  async writeSegment(subject: string, key: string, answer: string): Promise<void> {
    try {
      await this.writeOnce(this.blobPath("segments", subject, key), answer);
    } catch (error) {
      if (!(error instanceof AlreadyWrittenError)) throw error;
    }
  }

  async readRecallIndex(subject: string, artifactId: string): Promise<unknown> {
    return JSON.parse(await this.readBlob(this.blobPath("recall", subject, artifactId), artifactId));
  }

  async readArtifact(subject: string, artifactId: string): Promise<unknown> {
    return JSON.parse(await this.readBlob(this.blobPath("artifacts", subject, artifactId), artifactId));
  }

  async readReport(subject: string, artifactId: string): Promise<GateReport> {
    return GateReport.parse(
      JSON.parse(await this.readBlob(this.blobPath("reports", subject, artifactId), artifactId)),
    );
  }

  async readManifest(subject: string, artifactId: string): Promise<Manifest> {
    return ManifestSchema.parse(
      JSON.parse(await this.readBlob(this.blobPath("manifests", subject, artifactId), artifactId)),
    );
  }

  private async readBlob(path: string, artifactId: string): Promise<string> {
    const text = await this.readOptional(path);
    if (text === undefined) throw new NotFoundError(`no artifact ${artifactId}`);
    return text;
  }

  /** A write-once file's text; undefined when it was never written. */
  private async readOptional(path: string): Promise<string | undefined> {
    try {
      return await readFile(path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  }

  async recordArtifact(record: ArtifactRecord): Promise<void> {
    await this.exclusive(() => {
      try {
        this.statement(
          "INSERT INTO artifacts (subject, artifact_id, status, covers_through, input_epoch, parent_artifact_id, input_root, gate, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        ).run(
          record.subject,
          record.artifactId,
          record.status,
          record.coversThrough,
          record.inputEpoch,
          record.parentArtifactId,
          record.inputRoot,
          JSON.stringify(record.gate),
          record.createdAt,
        );
      } catch (error) {
        if ((error as { code?: string }).code === "SQLITE_CONSTRAINT_PRIMARYKEY")
          throw new AlreadyWrittenError(`artifact record ${record.artifactId}`, { cause: error });
        throw error;
      }
    });
  }

  async getRecord(subject: string, artifactId: string): Promise<ArtifactRecord | null> {
    return this.read(() => {
      const row = this.statement("SELECT * FROM artifacts WHERE subject = ? AND artifact_id = ?").get(
        subject,
        artifactId,
      ) as ArtifactRow | undefined;
      return row ? toRecord(row) : null;
    });
  }

  async listRecords(subject: string): Promise<ArtifactRecord[]> {
    return this.read(() => {
      const rows = this.statement(
        "SELECT * FROM artifacts WHERE subject = ? ORDER BY created_at, artifact_id",
      ).all(subject) as ArtifactRow[];
      return rows.map(toRecord);
    });
  }

  async transition(
    subject: string,
    artifactId: string,
    from: readonly ArtifactStatus[],
    to: ArtifactStatus,
  ): Promise<boolean> {
    return this.exclusive(() => this.updateArtifactWhere(subject, artifactId, from, "status = ?", to));
  }

  async markStale(subject: string, artifactId: string, from: readonly ArtifactStatus[]): Promise<boolean> {
    return this.exclusive(() => this.updateArtifactWhere(subject, artifactId, from, "stale = ?", 1));
  }

  /** One conditional update of an artifact record that is in one of `from` and not marked stale. */
  private updateArtifactWhere(
    subject: string,
    artifactId: string,
    from: readonly ArtifactStatus[],
    assignment: string,
    value: string | number,
  ): boolean {
    if (from.length === 0) return false;
    const changed = this.statement(
      `UPDATE artifacts SET ${assignment} WHERE subject = ? AND artifact_id = ? AND stale = 0 AND status IN (${from.map(() => "?").join(", ")})`,
    ).run(value, subject, artifactId, ...from);
    return changed.changes === 1;
  }

  async settings(): Promise<TenantSettings> {
    return this.read(() => {
      const row = this.statement("SELECT value FROM settings WHERE id = 1").get() as
        | { value: string }
        | undefined;
      return row
        ? { ...DEFAULT_SETTINGS, ...(JSON.parse(row.value) as Partial<TenantSettings>) }
        : DEFAULT_SETTINGS;
    });
  }

  async updateSettings(patch: Partial<TenantSettings>): Promise<TenantSettings> {
    return this.exclusive(async () => {
      const row = this.statement("SELECT value FROM settings WHERE id = 1").get() as
        | { value: string }
        | undefined;
      const next = {
        ...DEFAULT_SETTINGS,
        ...(row ? (JSON.parse(row.value) as Partial<TenantSettings>) : {}),
        ...patch,
      };
      this.statement(
        "INSERT INTO settings (id, value) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET value = excluded.value",
      ).run(JSON.stringify(next));
      return next;
    });
  }
}

function parseStoredEvent(row: EventRow): SequencedEvent {
  return decodeStoredEvent(row.body, row.sequence, row.hash);
}

function toRecord(row: ArtifactRow): ArtifactRecord {
  return {
    subject: row.subject,
    artifactId: row.artifact_id,
    status: row.status,
    stale: row.stale === 1,
    coversThrough: row.covers_through,
    inputEpoch: row.input_epoch,
    parentArtifactId: row.parent_artifact_id,
    inputRoot: row.input_root,
    gate: GateReport.parse(JSON.parse(row.gate)),
    createdAt: row.created_at,
  };
}
