import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { ConflictIndexEntry, StoredEvent } from "#domain/append-plan.ts";
import type { GateReport, RefusedAttempts } from "#domain/gate/index.ts";
import { effectivePolicy } from "#domain/readings.ts";
import type {
  Manifest,
  MemoryEvent,
  SequencedEvent,
  Snapshot,
  StoredPolicy,
  TrustPolicy,
} from "#domain/schemas.ts";
import { StoredPolicy as StoredPolicySchema } from "#domain/schemas.ts";
import type { SelectorVersion } from "#domain/validity.ts";
import type { AliasPort, AliasState, PublishRequest } from "#ports/alias.ts";
import type { ArtifactRecord, ArtifactStatus } from "#ports/artifact-records.ts";
import type { ArtifactContents, ArtifactStore } from "#ports/artifacts.ts";
import type { AppendResult, Clock, EventLog } from "#ports/event-log.ts";
import { snapshotOf } from "#ports/event-log.ts";
import type { SettingsPort, TenantSettings } from "#ports/settings.ts";
import { BlobArtifactFiles } from "../artifact-files.ts";
import { publishIfUnchanged, readAlias } from "./sqlite-alias.ts";
import { getRecord, listRecords, recordArtifact, updateRecordWhere } from "./sqlite-artifacts.ts";
import { SqliteDatabase } from "./sqlite-database.ts";
import {
  appendEvents,
  eventsById,
  eventsPage,
  eventsWhere,
  loadIndex,
  readClock,
  updateClockIf,
} from "./sqlite-events.ts";
import { readSettings, updateSettings } from "./sqlite-settings.ts";
import { listSubjects, subjectsNotOn, subjectsToCheck } from "./sqlite-subjects.ts";
import { WriteOnceFiles } from "./write-once-files.ts";

/** The embedded store's home folder cannot be used: a user's setting to fix (exit 2). */
export class StoreHomeError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreHomeError";
  }
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

  constructor(home: string) {
    mkdirSync(home, { recursive: true });
    this.db = new SqliteDatabase(join(home, SqliteStore.FILE));
    this.files = new BlobArtifactFiles(new WriteOnceFiles(home));
  }

  close(): void {
    this.db.close();
  }

  // The event log and its clock (sqlite-events.ts).

  append(subject: string, events: readonly MemoryEvent[]): Promise<AppendResult> {
    return this.db.write(() => appendEvents(this.db, subject, events));
  }

  snapshot(subject: string): Promise<Snapshot> {
    return this.db.readTogether(() =>
      snapshotOf(subject, readClock(this.db, subject), readAlias(this.db, subject)),
    );
  }

  eventsThrough(subject: string, highWater: number): Promise<SequencedEvent[]> {
    return this.db.read(() => eventsWhere(this.db, subject, "sequence <= ?", highWater));
  }

  eventsAfter(subject: string, after: number): Promise<SequencedEvent[]> {
    return this.db.read(() => eventsWhere(this.db, subject, "sequence > ?", after));
  }

  eventsPage(subject: string, after: number, through: number, limit: number): Promise<StoredEvent[]> {
    return this.db.read(() => eventsPage(this.db, subject, after, through, limit));
  }

  eventsById(subject: string, ids: readonly string[]): Promise<Map<string, StoredEvent>> {
    return this.db.read(() => eventsById(this.db, subject, ids));
  }

  trustPolicy(subject: string): Promise<TrustPolicy> {
    return this.db.read(() => effectivePolicy(readClock(this.db, subject).policy));
  }

  storedPolicy(subject: string): Promise<StoredPolicy> {
    return this.db.read(() => readClock(this.db, subject).policy);
  }

  setTrustPolicy(
    subject: string,
    policy: StoredPolicy,
    expected: { clock: Clock; policy: StoredPolicy },
    moveEpoch: boolean,
  ): Promise<Clock | null> {
    const parsed = StoredPolicySchema.parse(policy);
    return this.db.write(() =>
      updateClockIf(this.db, subject, expected.clock, moveEpoch, { policy: parsed }, expected.policy),
    );
  }

  readingIndex(
    subject: string,
    keyScopes: ReadonlyArray<{ key: string; scope: string }>,
  ): Promise<ConflictIndexEntry[]> {
    return this.db.read(() => loadIndex(this.db, subject, keyScopes));
  }

  selectorVersion(subject: string): Promise<SelectorVersion> {
    return this.db.read(() => readClock(this.db, subject).selector);
  }

  adoptSelector(
    subject: string,
    version: SelectorVersion,
    expected: Clock,
    moveEpoch: boolean,
  ): Promise<boolean> {
    return this.db.write(
      () => updateClockIf(this.db, subject, expected, moveEpoch, { selector: version }) !== null,
    );
  }

  // Which subjects (sqlite-subjects.ts).

  listSubjects(): Promise<string[]> {
    return this.db.read(() => listSubjects(this.db));
  }

  subjectsNotOn(version: SelectorVersion): Promise<string[]> {
    return this.db.read(() => subjectsNotOn(this.db, version));
  }

  subjectsToCheck(rebuildAfterEvents: number): Promise<string[]> {
    return this.db.read(() => subjectsToCheck(this.db, rebuildAfterEvents));
  }

  async markChecked(_subject: string, _checked: Clock): Promise<void> {
    // Nothing to clear: subjectsToCheck derives its answer from the clock and alias themselves.
  }

  // The alias and the switch (sqlite-alias.ts).

  readAlias(subject: string): Promise<AliasState | null> {
    return this.db.read(() => readAlias(this.db, subject));
  }

  publishIfUnchanged(request: PublishRequest): Promise<AliasState> {
    return this.db.write(() => publishIfUnchanged(this.db, request));
  }

  // The artifacts' write-once files (artifact-files.ts over write-once-files.ts).

  writeArtifact(subject: string, artifactId: string, contents: ArtifactContents): Promise<void> {
    return this.files.writeArtifact(subject, artifactId, contents);
  }

  readArtifact(subject: string, artifactId: string): Promise<unknown> {
    return this.files.readArtifact(subject, artifactId);
  }

  readManifest(subject: string, artifactId: string): Promise<Manifest> {
    return this.files.readManifest(subject, artifactId);
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
    return this.db.write(() => recordArtifact(this.db, record));
  }

  getRecord(subject: string, artifactId: string): Promise<ArtifactRecord | null> {
    return this.db.read(() => getRecord(this.db, subject, artifactId));
  }

  listRecords(subject: string): Promise<ArtifactRecord[]> {
    return this.db.read(() => listRecords(this.db, subject));
  }

  transition(
    subject: string,
    artifactId: string,
    from: readonly ArtifactStatus[],
    to: ArtifactStatus,
  ): Promise<boolean> {
    return this.db.write(() => updateRecordWhere(this.db, subject, artifactId, from, "status = ?", to));
  }

  markStale(subject: string, artifactId: string, from: readonly ArtifactStatus[]): Promise<boolean> {
    return this.db.write(() => updateRecordWhere(this.db, subject, artifactId, from, "stale = ?", 1));
  }

  // The settings (sqlite-settings.ts).

  settings(): Promise<TenantSettings> {
    return this.db.read(() => readSettings(this.db));
  }

  updateSettings(patch: Partial<TenantSettings>): Promise<TenantSettings> {
    return this.db.write(() => updateSettings(this.db, patch));
  }
}
