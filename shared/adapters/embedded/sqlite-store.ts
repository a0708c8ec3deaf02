import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { ConflictIndexEntry, StoredEvent } from "#domain/append-plan.ts";
import { deepFreeze } from "#domain/frozen.ts";
import type { GateReport, RefusedAttempts } from "#domain/gate/index.ts";
import { effectivePolicy } from "#domain/readings.ts";
import type { RebuildAttempt } from "#domain/rebuild.ts";
import type { Manifest, MemoryEvent, SequencedEvent, StoredPolicy, TrustPolicy } from "#domain/schemas.ts";
import { StoredPolicy as StoredPolicySchema } from "#domain/schemas.ts";
import type { SelectorVersion } from "#domain/validity.ts";
import type { AliasPort, AliasState, PublishRequest } from "#ports/alias.ts";
import type { ArtifactRecord, ArtifactStatus } from "#ports/artifact-records.ts";
import type { ArtifactContents, ArtifactStore } from "#ports/artifacts.ts";
import type {
  AppendResult,
  Clock,
  EventLog,
  ReadSnapshot,
  SubjectIndexing,
  SubjectPage,
} from "#ports/event-log.ts";
import { snapshotOf } from "#ports/event-log.ts";
import type { SettingsPort, TenantSettings } from "#ports/settings.ts";
import { neverPause, type Pause } from "#ports/time.ts";
import { BlobArtifactFiles } from "../artifact-files.ts";
import { publishIfUnchanged, readAlias } from "./sqlite-alias.ts";
import { getRecord, listRecords, recordArtifact, updateRecordWhere } from "./sqlite-artifacts.ts";
import { SqliteDatabase } from "./sqlite-database.ts";
import {
  appendEvents,
  eventsById,
  eventsPage,
  eventsWhere,
  HeldEvents,
  loadIndex,
  readClock,
  updateClockIf,
} from "./sqlite-events.ts";
import { readSettings, updateSettings } from "./sqlite-settings.ts";
import {
  listSubjects,
  readRebuildAttempt,
  recordRebuildAttempt,
  subjectsNotOn,
  subjectsPage,
  subjectsToCheck,
} from "./sqlite-subjects.ts";
import { WriteOnceFiles } from "./write-once-files.ts";

/** The embedded store's home folder cannot be used: a user's setting to fix (exit 2). */
export class StoreHomeError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreHomeError";
  }
}

export interface SqliteStoreOptions {
  /** Called between the events of a large batch or read (default: never pauses). */
  pause?: Pause;
  /**
   * The store of a process that serves requests (serve, mcp): its log is checkpointed on a thread
   * of its own, never inside a commit, and its commits are synced on libuv's thread pool, so
   * neither holds the serving thread.
   */
  serving?: boolean;
}

/**
 * The embedded store: every port but the queue over one home folder, holding the SQLite database
 * (`sqlite-database.ts`: events, clock, conflict index, alias, artifact records, settings) and the
 * artifacts' write-once files (`write-once-files.ts`). Each operation below says the transaction
 * it runs in (`write`: BEGIN IMMEDIATE; `read`: after every operation this process started before
 * it); the statements are in the module of their concern. Artifact files are written outside any
 * transaction, durable before the pipeline records the artifact.
 */
export class SqliteStore implements EventLog, AliasPort, ArtifactStore, SettingsPort {
  /** The database's file name inside the home folder. */
  static readonly FILE = "memgate.sqlite";

  private readonly db: SqliteDatabase;
  private readonly files: BlobArtifactFiles;
  /** The settings as last read, and the version of other connections' commits they were read at. */
  private settingsRead: { othersVersion: number; settings: TenantSettings } | null = null;
  private settingsWrites = 0;

  /**
   * Opens (creating when absent) the store in `home`; a home that is a file, unwritable or on a
   * read-only file system is a StoreHomeError saying which, never a stack trace.
   */
  static open(home: string, options: SqliteStoreOptions = {}): SqliteStore {
    try {
      return new SqliteStore(home, options);
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

  private readonly pause: Pause;
  /** Events read lately, decoded: a page of them is read again without its rows. */
  private readonly held = new HeldEvents();

  constructor(home: string, options: SqliteStoreOptions = {}) {
    this.pause = options.pause ?? neverPause;
    mkdirSync(home, { recursive: true });
    this.db = new SqliteDatabase(join(home, SqliteStore.FILE), {
      serving: options.serving === true,
    });
    this.files = new BlobArtifactFiles(new WriteOnceFiles(home));
  }

  close(): void {
    this.db.close();
  }

  /** Write transactions this store committed; with group commit, fewer than the writes they hold. */
  get commits(): number {
    return this.db.commits;
  }

  // The event log and its clock (sqlite-events.ts).

  append(subject: string, events: readonly MemoryEvent[]): Promise<AppendResult> {
    return this.db.write(async (db) => {
      const { written, clock } = await appendEvents(db, subject, events, this.pause);
      return { ...written, snapshot: snapshotOf(subject, clock, readAlias(db, subject)) };
    });
  }

  snapshot(subject: string): Promise<ReadSnapshot> {
    return this.db.readTogether((db) => snapshotOf(subject, readClock(db, subject), readAlias(db, subject)));
  }

  async eventsThrough(subject: string, highWater: number): Promise<SequencedEvent[]> {
    return await this.db.read((db) => eventsWhere(db, subject, "sequence <= ?", highWater, this.pause));
  }

  async eventsAfter(subject: string, after: number): Promise<SequencedEvent[]> {
    return await this.db.read((db) => eventsWhere(db, subject, "sequence > ?", after, this.pause));
  }

  eventsPage(subject: string, after: number, through: number, limit: number): Promise<StoredEvent[]> {
    return this.db.read((db) => eventsPage(db, subject, after, through, limit, this.held));
  }

  eventsById(subject: string, ids: readonly string[]): Promise<Map<string, StoredEvent>> {
    return this.db.read((db) => eventsById(db, subject, ids));
  }

  trustPolicy(subject: string): Promise<TrustPolicy> {
    return this.db.read((db) => effectivePolicy(readClock(db, subject).policy));
  }

  storedPolicy(subject: string): Promise<StoredPolicy> {
    return this.db.read((db) => readClock(db, subject).policy);
  }

  setTrustPolicy(
    subject: string,
    policy: StoredPolicy,
    expected: { clock: Clock; policy: StoredPolicy },
    moveEpoch: boolean,
  ): Promise<Clock | null> {
    const parsed = StoredPolicySchema.parse(policy);
    return this.db.write((db) =>
      updateClockIf(db, subject, expected.clock, moveEpoch, { policy: parsed }, expected.policy),
    );
  }

  readingIndex(
    subject: string,
    keyScopes: ReadonlyArray<{ key: string; scope: string }>,
  ): Promise<ConflictIndexEntry[]> {
    return this.db.read((db) => loadIndex(db, subject, keyScopes));
  }

  selectorVersion(subject: string): Promise<SelectorVersion> {
    return this.db.read((db) => readClock(db, subject).selector);
  }

  adoptSelector(
    subject: string,
    version: SelectorVersion,
    expected: Clock,
    moveEpoch: boolean,
  ): Promise<boolean> {
    return this.db.write(
      (db) => updateClockIf(db, subject, expected, moveEpoch, { selector: version }) !== null,
    );
  }

  // Which subjects (sqlite-subjects.ts).

  listSubjects(): Promise<string[]> {
    return this.db.read((db) => listSubjects(db));
  }

  subjectsPage(after: string | null, limit: number): Promise<SubjectPage> {
    return this.db.read((db) => subjectsPage(db, after, limit));
  }

  /** The clock table is the listing (its primary key is the subject): nothing to backfill. */
  async indexSubjects(): Promise<SubjectIndexing> {
    return { added: 0, complete: true };
  }

  subjectsNotOn(version: SelectorVersion): Promise<string[]> {
    return this.db.read((db) => subjectsNotOn(db, version));
  }

  subjectsToCheck(rebuildAfterEvents: number): Promise<string[]> {
    return this.db.read((db) => subjectsToCheck(db, rebuildAfterEvents));
  }

  async markChecked(_subject: string, _checked: Clock): Promise<void> {
    // Nothing to clear: subjectsToCheck derives its answer from the clock and alias themselves.
  }

  async markForCheck(_subject: string): Promise<void> {
    // Nothing to mark: subjectsToCheck finds a STALE summary from the records themselves.
  }

  rebuildAttempt(subject: string): Promise<RebuildAttempt | null> {
    return this.db.read((db) => readRebuildAttempt(db, subject));
  }

  recordRebuildAttempt(subject: string, attempt: RebuildAttempt): Promise<void> {
    return this.db.write((db) => recordRebuildAttempt(db, subject, attempt));
  }

  // The alias and the switch (sqlite-alias.ts).

  readAlias(subject: string): Promise<AliasState | null> {
    return this.db.read((db) => readAlias(db, subject));
  }

  publishIfUnchanged(request: PublishRequest): Promise<AliasState> {
    return this.db.write((db) => publishIfUnchanged(db, request));
  }

  // The artifacts' write-once files (artifact-files.ts over write-once-files.ts).

  writeArtifact(subject: string, artifactId: string, contents: ArtifactContents): Promise<void> {
    return this.files.writeArtifact(subject, artifactId, contents);
  }

  readArtifact(subject: string, artifactId: string, pause?: Pause): Promise<unknown> {
    return this.files.readArtifact(subject, artifactId, pause);
  }

  readManifest(subject: string, artifactId: string, pause?: Pause): Promise<Manifest> {
    return this.files.readManifest(subject, artifactId, pause);
  }

  readReport(subject: string, artifactId: string): Promise<GateReport> {
    return this.files.readReport(subject, artifactId);
  }

  readRecallIndex(subject: string, artifactId: string): Promise<unknown> {
    return this.files.readRecallIndex(subject, artifactId);
  }

  readAttempts(subject: string, artifactId: string): Promise<RefusedAttempts> {
    return this.files.readAttempts(subject, artifactId);
  }

  readSegment(subject: string, key: string): Promise<string | undefined> {
    return this.files.readSegment(subject, key);
  }

  writeSegment(subject: string, key: string, answer: string): Promise<void> {
    return this.files.writeSegment(subject, key, answer);
  }

  // The artifact records (sqlite-artifacts.ts).

  recordArtifact(record: ArtifactRecord): Promise<void> {
    return this.db.write((db) => recordArtifact(db, record));
  }

  getRecord(subject: string, artifactId: string): Promise<ArtifactRecord | null> {
    return this.db.read((db) => getRecord(db, subject, artifactId));
  }

  listRecords(subject: string): Promise<ArtifactRecord[]> {
    return this.db.read((db) => listRecords(db, subject));
  }

  transition(
    subject: string,
    artifactId: string,
    from: readonly ArtifactStatus[],
    to: ArtifactStatus,
  ): Promise<boolean> {
    return this.db.write((db) => updateRecordWhere(db, subject, artifactId, from, "status = ?", to));
  }

  markStale(subject: string, artifactId: string, from: readonly ArtifactStatus[]): Promise<boolean> {
    return this.db.write((db) => updateRecordWhere(db, subject, artifactId, from, "stale = ?", 1));
  }

  // The settings (sqlite-settings.ts).

  /**
   * Read on every append and recall, changed rarely: kept until this store changes them or another
   * connection commits anything (then read again, whatever that commit was).
   */
  settings(): Promise<TenantSettings> {
    const othersVersion = this.db.othersVersion();
    if (this.settingsRead?.othersVersion === othersVersion)
      return Promise.resolve(this.settingsRead.settings);
    return this.db.read((db) => {
      // Shared by every caller until the next change: frozen.
      const settings = deepFreeze({ ...readSettings(db) });
      if (this.settingsWrites === 0) this.settingsRead = { othersVersion, settings };
      return settings;
    });
  }

  async updateSettings(patch: Partial<TenantSettings>): Promise<TenantSettings> {
    this.settingsWrites++;
    this.settingsRead = null;
    try {
      return await this.db.write((db) => updateSettings(db, patch));
    } finally {
      this.settingsWrites--;
      this.settingsRead = null;
    }
  }
}
