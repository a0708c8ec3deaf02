import type { StoredEvent } from "#domain/append-plan.ts";
import type { GateReport, RefusedAttempts } from "#domain/gate.ts";
import type {
  ExpectedAlias,
  Manifest,
  MemoryEvent,
  SequencedEvent,
  Snapshot,
  TrustPolicy,
} from "#domain/schemas.ts";
import type { SelectorVersion } from "#domain/validity.ts";

/**
 * The storage ports. Two adapter sets implement them, AWS (DynamoDB, S3, SQS) and embedded (one
 * SQLite file, write-once files, an in-process queue); one contract suite runs against both.
 */

export interface Clock {
  highWater: number;
  inputEpoch: number;
}

export interface AliasState {
  artifactId: string;
  sourceEpoch: number;
  coversThrough: number;
}

export interface AppendResult {
  /** Ids written by this call, in sequence order. */
  appended: string[];
  /** Ids already stored with identical content: a no-op. */
  duplicates: string[];
  highWater: number;
  inputEpoch: number;
  /** Whether the append revoked, superseded or created a new conflict (the epoch moved). */
  epochMoved: boolean;
  /** Whether the append revoked or superseded something (validity changed, not only a new conflict). */
  validityChanged: boolean;
  /** Atomic chunks the batch was written in (1 unless the engine bounds a transaction). */
  chunks: number;
}

/** The event log with its source clock. */
export interface EventLog {
  /**
   * Appends a batch: each event write-once (an identical re-send is a no-op, a different one with
   * the same id is refused with nothing written); highWater moves by the count appended, and
   * inputEpoch moves in the same transaction when the batch revokes, supersedes or creates a new
   * conflict. A batch too large for one transaction is split into ordered chunks, each atomic.
   */
  append(subject: string, events: readonly MemoryEvent[]): Promise<AppendResult>;
  /** One consistent read of clock and alias: the snapshot message. */
  snapshot(subject: string): Promise<Snapshot>;
  /** Every stored event with sequence <= highWater, ascending. */
  eventsThrough(subject: string, highWater: number): Promise<SequencedEvent[]>;
  /** Every stored event with sequence > after, ascending (the tail a summary does not cover). */
  eventsAfter(subject: string, after: number): Promise<SequencedEvent[]>;
  /**
   * At most `limit` stored events with after < sequence <= through, ascending, each with the ids
   * of the events acting on it: one page of the log, for recall that does not read the whole log.
   */
  eventsPage(subject: string, after: number, through: number, limit: number): Promise<StoredEvent[]>;
  /** Stored events by id, each with the ids acting on it; unknown ids are absent. */
  eventsById(subject: string, ids: readonly string[]): Promise<Map<string, StoredEvent>>;
  trustPolicy(subject: string): Promise<TrustPolicy>;
  /**
   * Changes the subject's trust policy, moving inputEpoch when `moveEpoch` (validity changes under
   * it), only if the clock still equals `expected`; null when it moved meanwhile (nothing changed).
   */
  setTrustPolicy(
    subject: string,
    policy: TrustPolicy,
    expected: Clock,
    moveEpoch: boolean,
  ): Promise<Clock | null>;
  /**
   * The selector whose epoch rule the subject's clock follows: subjects created before selector
   * v2 read "v1" until `adoptSelector` moves them on; new subjects start on the current one.
   */
  selectorVersion(subject: string): Promise<SelectorVersion>;
  /**
   * Marks the subject's clock as following `version`, moving inputEpoch by one when `moveEpoch`
   * (validity or conflicts differ under it), only if the clock still equals `expected`; false
   * when it moved meanwhile (nothing changed then).
   */
  adoptSelector(
    subject: string,
    version: SelectorVersion,
    expected: Clock,
    moveEpoch: boolean,
  ): Promise<boolean>;
  /** Subjects whose clock follows another selector than `version`. */
  subjectsNotOn(version: SelectorVersion): Promise<string[]>;
  /** Every subject with a clock, sorted (the review page's list; a scan on DynamoDB). */
  listSubjects(): Promise<string[]>;
  /**
   * Subjects that may need a rebuild (see `rebuildReason`), from committed state only: never from
   * the memory of the process that appended. The embedded store answers exactly; DynamoDB answers
   * with the clocks marked since they were last checked (a sparse index), a superset.
   */
  subjectsToCheck(rebuildAfterEvents: number): Promise<string[]>;
  /** Clears the subject's mark when its clock still equals `checked` (nothing new since the check). */
  markChecked(subject: string, checked: Clock): Promise<void>;
}

export type ArtifactStatus =
  | "CANDIDATE"
  | "REJECTED"
  | "SHADOW"
  | "PUBLISHED"
  | "SUPERSEDED"
  /** A candidate whose snapshot died (lost CAS, moved epoch): kept for audit, never live again. */
  | "ABANDONED";

/** The mutable record beside a write-once artifact: its status and what it was made from. */
export interface ArtifactRecord {
  subject: string;
  artifactId: string;
  /** The lifecycle status; STALE is not one of them but a mark beside it (`stale`). */
  status: ArtifactStatus;
  /** Marked when an input it used stopped being valid: never served, whatever the status says. */
  stale: boolean;
  coversThrough: number;
  inputEpoch: number;
  parentArtifactId: string | null;
  inputRoot: string;
  gate: GateReport;
  createdAt: string;
}

/** What one generation writes, each under a new write-once key. */
export interface ArtifactFiles {
  body: unknown;
  manifest: Manifest;
  /** The full gate report (the record keeps a compact copy). */
  report?: GateReport;
  recallIndex?: unknown;
  /** Refused attempts before the last one (gate-guided repair): each answer with its report. */
  attempts?: RefusedAttempts;
}

/** Write-once artifact bodies and manifests, and their status records. */
export interface ArtifactStore {
  /** Writes an artifact's files under new keys; AlreadyWrittenError if any exists. */
  writeArtifact(subject: string, artifactId: string, files: ArtifactFiles): Promise<void>;
  /** The refused attempts written with the artifact; [] when it passed on the first. */
  readAttempts(subject: string, artifactId: string): Promise<RefusedAttempts>;
  /** A segment answer kept under its key (segment input root, rendered-prompt hash, model); undefined when none. */
  readSegment(subject: string, key: string): Promise<string | undefined>;
  /** Keeps a segment answer; the first write of a key wins, a later one is ignored. */
  writeSegment(subject: string, key: string, answer: string): Promise<void>;
  /** The recall index written with the artifact (NotFoundError when it was written without one). */
  readRecallIndex(subject: string, artifactId: string): Promise<unknown>;
  /** The full gate report written with the artifact. */
  readReport(subject: string, artifactId: string): Promise<GateReport>;
  readArtifact(subject: string, artifactId: string): Promise<unknown>;
  readManifest(subject: string, artifactId: string): Promise<Manifest>;
  /** Records a new artifact's status (CANDIDATE, REJECTED or SHADOW); AlreadyWrittenError if recorded. */
  recordArtifact(record: ArtifactRecord): Promise<void>;
  getRecord(subject: string, artifactId: string): Promise<ArtifactRecord | null>;
  listRecords(subject: string): Promise<ArtifactRecord[]>;
  /**
   * Moves the lifecycle status only from one of `from` and only while the record is not marked
   * stale; false otherwise.
   */
  transition(
    subject: string,
    artifactId: string,
    from: readonly ArtifactStatus[],
    to: ArtifactStatus,
  ): Promise<boolean>;
  /**
   * Marks a record STALE when its status is one of `from` and it is not marked yet; false
   * otherwise. The mark sits beside the status, so marking never contends with the switch moving
   * the status (a stale summary later superseded still reads STALE).
   */
  markStale(subject: string, artifactId: string, from: readonly ArtifactStatus[]): Promise<boolean>;
}

export interface PublishRequest {
  subject: string;
  artifactId: string;
  /** The alias the snapshot saw; null when the subject had no summary yet. */
  expectedAlias: ExpectedAlias | null;
  /** The clock epoch the artifact was built at: the publish is fenced on it. */
  inputEpoch: number;
  newCoversThrough: number;
}

/** The read alias: it moves only by a three-part compare-and-set fenced by the source clock. */
export interface AliasPort {
  readAlias(subject: string): Promise<AliasState | null>;
  /**
   * One transaction: the clock's inputEpoch still equals the artifact's, the alias still names the
   * expected parent with the expected epoch and coverage (or is absent for the first publish), and
   * coverage does not decrease; then the alias names the artifact, the artifact becomes PUBLISHED
   * and the parent SUPERSEDED. Otherwise PublishRefusedError, and nothing changed.
   */
  publishIfUnchanged(request: PublishRequest): Promise<AliasState>;
}

export interface QueueMessage {
  body: Snapshot;
  receipt: string;
}

/** Snapshot messages: FIFO per subject, deduplicated by subject:highWater:inputEpoch. */
export interface SnapshotQueue {
  send(snapshot: Snapshot): Promise<void>;
  receive(max: number): Promise<QueueMessage[]>;
  /** Done with the message: it is removed. */
  ack(receipt: string): Promise<void>;
  /**
   * Not done: the message comes back for another try after a delay (SQS: when its visibility
   * timeout ends), and to the dead-letter queue after the queue's maximum receives.
   */
  release(receipt: string): Promise<void>;
}

/** The queue's deduplication id: the same snapshot sent twice is one message. */
export function snapshotDedupId(snapshot: Snapshot): string {
  return `${snapshot.subject}:${snapshot.highWater}:${snapshot.inputEpoch}`;
}

/** Per-tenant switches (embedded: per store): where a gate-passed artifact goes, and recall bypass. */
export interface TenantSettings {
  /** live: publish through the CAS; shadow: record as SHADOW and wait for review. */
  publishMode: "live" | "shadow";
  /** When on, recall serves raw events only (the operator's bypass during an incident). */
  recallBypass: boolean;
  /** A summary whose uncovered tail reaches this many events is rebuilt. */
  rebuildAfterEvents: number;
  /** The model a command or `memgate serve` uses when none is named (CONTRACT §5 model names); default deterministic-v1. */
  model?: string;
}

export const DEFAULT_SETTINGS: TenantSettings = {
  publishMode: "live",
  recallBypass: false,
  rebuildAfterEvents: 50,
};

export interface SettingsPort {
  settings(): Promise<TenantSettings>;
  updateSettings(patch: Partial<TenantSettings>): Promise<TenantSettings>;
}

/** One adapter set, opened: what a composition root (embedded or AWS) hands the use cases. */
export interface Stores {
  events: EventLog;
  alias: AliasPort;
  artifacts: ArtifactStore;
  queue: SnapshotQueue;
  settings: SettingsPort;
  close(): void;
}

/** The snapshot message from one consistent read of a subject's clock and alias. */
/** How listings show a record: STALE when marked, else its lifecycle status (CONTRACT §5). */
export function shownStatus(record: Pick<ArtifactRecord, "status" | "stale">): ArtifactStatus | "STALE" {
  return record.stale ? "STALE" : record.status;
}

export function snapshotOf(subject: string, clock: Clock, alias: AliasState | null): Snapshot {
  return {
    subject,
    highWater: clock.highWater,
    inputEpoch: clock.inputEpoch,
    expectedAlias: alias
      ? {
          parentArtifactId: alias.artifactId,
          sourceEpoch: alias.sourceEpoch,
          coversThrough: alias.coversThrough,
        }
      : null,
  };
}
