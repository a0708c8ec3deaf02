import type { ConflictIndexEntry, StoredEvent } from "#domain/append-plan.ts";
import { canonicalJson } from "#domain/hashing.ts";
import { effectivePolicy } from "#domain/readings.ts";
import type { RebuildAttempt } from "#domain/rebuild.ts";
import type { MemoryEvent, SequencedEvent, StoredPolicy, TrustPolicy } from "#domain/schemas.ts";
import { StoredPolicy as StoredPolicySchema } from "#domain/schemas.ts";
import type { SelectorVersion } from "#domain/validity.ts";
import type { AliasPort, AliasState, PublishRequest } from "#ports/alias.ts";
import type { ArtifactRecord, ArtifactRecords, ArtifactStatus } from "#ports/artifact-records.ts";
import type { AuditCheckpoint, AuditRounds } from "#ports/audit-rounds.ts";
import type {
  AppendResult,
  Clock,
  EventLog,
  ReadSnapshot,
  SubjectIndexing,
  SubjectPage,
} from "#ports/event-log.ts";
import type { SettingsPort, TenantSettings } from "#ports/settings.ts";
import { publishIfUnchanged, readAlias } from "./dynamo-alias.ts";
import { appendEvents, loadIndex } from "./dynamo-append.ts";
import { getRecord, listRecords, recordArtifact, updateRecordWhere } from "./dynamo-artifact-records.ts";
import { readAuditCheckpoint, saveAuditCheckpoint } from "./dynamo-audit-rounds.ts";
import { eventsById, eventsPage, eventsWhere, readSnapshot, updateClockIf } from "./dynamo-events.ts";
import { readSettings, updateSettings } from "./dynamo-settings.ts";
import {
  indexSubjects,
  listSubjects,
  markChecked,
  markForCheck,
  readRebuildAttempt,
  recordRebuildAttempt,
  subjectsNotOn,
  subjectsPage,
  subjectsToCheck,
} from "./dynamo-subjects.ts";
import { DynamoTable } from "./dynamo-table.ts";

/**
 * The DynamoDB store: one table per tenant, pk = `S#<subject>`.
 *   CLOCK {highWater, inputEpoch, policy, selector} · ALIAS {artifactId, sourceEpoch, coversThrough}
 *   E#<eventId> {seq, hash, body, actors} (immutable body; `seq` feeds the local index bySequence)
 *   K#<hash of key, scope>[#<sequence>#<position>] the conflict index, one small item per holder
 *   A#<artifactId> {status, stale, coversThrough, inputEpoch, parent, inputRoot, gate, createdAt}
 *   TENANT: SETTINGS, SUBJECT-INDEX (the backfill of bySubject), AUDIT-ROUND (the audit's checkpoint)
 * Appends are TransactWriteItems fenced on the clock they read (a concurrent append cancels ours and
 * we plan again); a publish is exactly one TransactWriteItems; a snapshot exactly one TransactGetItems.
 * Each operation below is in the module of its concern; the artifact files are in S3
 * (`S3ArtifactStore`), their records here.
 */
export class DynamoStore
  extends DynamoTable
  implements EventLog, AliasPort, ArtifactRecords, SettingsPort, AuditRounds
{
  // The event log and its clock (dynamo-append.ts, dynamo-events.ts).

  async append(subject: string, events: readonly MemoryEvent[]): Promise<AppendResult> {
    const result = await appendEvents(this, subject, events);
    return { ...result, snapshot: await readSnapshot(this, subject) };
  }

  snapshot(subject: string): Promise<ReadSnapshot> {
    return readSnapshot(this, subject);
  }

  eventsThrough(subject: string, highWater: number): Promise<SequencedEvent[]> {
    return eventsWhere(this, subject, "seq <= :bound", highWater);
  }

  eventsAfter(subject: string, after: number): Promise<SequencedEvent[]> {
    return eventsWhere(this, subject, "seq > :bound", after);
  }

  eventsPage(subject: string, after: number, through: number, limit: number): Promise<StoredEvent[]> {
    return eventsPage(this, subject, after, through, limit);
  }

  eventsById(subject: string, ids: readonly string[]): Promise<Map<string, StoredEvent>> {
    return eventsById(this, subject, ids);
  }

  async trustPolicy(subject: string): Promise<TrustPolicy> {
    return effectivePolicy((await this.readClock(subject)).policy);
  }

  async storedPolicy(subject: string): Promise<StoredPolicy> {
    return (await this.readClock(subject)).policy;
  }

  async setTrustPolicy(
    subject: string,
    policy: StoredPolicy,
    expected: { clock: Clock; policy: StoredPolicy },
    moveEpoch: boolean,
  ): Promise<Clock | null> {
    const read = await this.readClock(subject);
    if (
      read.highWater !== expected.clock.highWater ||
      read.inputEpoch !== expected.clock.inputEpoch ||
      canonicalJson(read.policy) !== canonicalJson(expected.policy)
    )
      return null;
    const changed = await updateClockIf(
      this,
      subject,
      expected.clock,
      moveEpoch,
      "policy = :p",
      { ":p": JSON.stringify(StoredPolicySchema.parse(policy)) },
      read,
    );
    return changed
      ? { highWater: expected.clock.highWater, inputEpoch: expected.clock.inputEpoch + (moveEpoch ? 1 : 0) }
      : null;
  }

  readingIndex(
    subject: string,
    keyScopes: ReadonlyArray<{ key: string; scope: string }>,
  ): Promise<ConflictIndexEntry[]> {
    return loadIndex(this, subject, keyScopes);
  }

  async selectorVersion(subject: string): Promise<SelectorVersion> {
    return (await this.readClock(subject)).selector;
  }

  adoptSelector(
    subject: string,
    version: SelectorVersion,
    expected: Clock,
    moveEpoch: boolean,
  ): Promise<boolean> {
    return updateClockIf(this, subject, expected, moveEpoch, "selector = :v", { ":v": version });
  }

  // Which subjects (dynamo-subjects.ts).

  listSubjects(): Promise<string[]> {
    return listSubjects(this);
  }

  subjectsPage(after: string | null, limit: number): Promise<SubjectPage> {
    return subjectsPage(this, after, limit);
  }

  indexSubjects(options: { maxPages?: number } = {}): Promise<SubjectIndexing> {
    return indexSubjects(this, options);
  }

  subjectsNotOn(version: SelectorVersion): Promise<string[]> {
    return subjectsNotOn(this, version);
  }

  subjectsToCheck(_rebuildAfterEvents: number): Promise<string[]> {
    return subjectsToCheck(this);
  }

  markChecked(subject: string, checked: Clock): Promise<void> {
    return markChecked(this, subject, checked);
  }

  markForCheck(subject: string): Promise<void> {
    return markForCheck(this, subject);
  }

  rebuildAttempt(subject: string): Promise<RebuildAttempt | null> {
    return readRebuildAttempt(this, subject);
  }

  recordRebuildAttempt(subject: string, attempt: RebuildAttempt): Promise<void> {
    return recordRebuildAttempt(this, subject, attempt);
  }

  // The alias and the switch (dynamo-alias.ts).

  readAlias(subject: string): Promise<AliasState | null> {
    return readAlias(this, subject);
  }

  publishIfUnchanged(request: PublishRequest): Promise<AliasState> {
    return publishIfUnchanged(this, request);
  }

  // The artifact records (dynamo-artifact-records.ts).

  recordArtifact(record: ArtifactRecord): Promise<void> {
    return recordArtifact(this, record);
  }

  getRecord(subject: string, artifactId: string): Promise<ArtifactRecord | null> {
    return getRecord(this, subject, artifactId);
  }

  listRecords(subject: string): Promise<ArtifactRecord[]> {
    return listRecords(this, subject);
  }

  transition(
    subject: string,
    artifactId: string,
    from: readonly ArtifactStatus[],
    to: ArtifactStatus,
  ): Promise<boolean> {
    return updateRecordWhere(this, subject, artifactId, from, "SET #status = :to", { ":to": to });
  }

  markStale(subject: string, artifactId: string, from: readonly ArtifactStatus[]): Promise<boolean> {
    return updateRecordWhere(this, subject, artifactId, from, "SET stale = :stale", { ":stale": true });
  }

  // The settings (dynamo-settings.ts).

  settings(): Promise<TenantSettings> {
    return readSettings(this);
  }

  updateSettings(patch: Partial<TenantSettings>): Promise<TenantSettings> {
    return updateSettings(this, patch);
  }

  // The scheduled audit's checkpoint (dynamo-audit-rounds.ts).

  checkpoint(): Promise<AuditCheckpoint | null> {
    return readAuditCheckpoint(this);
  }

  saveCheckpoint(next: AuditCheckpoint, expectedVersion: number | null): Promise<boolean> {
    return saveAuditCheckpoint(this, next, expectedVersion);
  }
}
