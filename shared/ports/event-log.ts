import type { ConflictIndexEntry, StoredEvent } from "#domain/append-plan.ts";
import type { RebuildAttempt } from "#domain/rebuild.ts";
import type { MemoryEvent, SequencedEvent, Snapshot, StoredPolicy, TrustPolicy } from "#domain/schemas.ts";
import type { SelectorVersion } from "#domain/validity.ts";
import type { AliasState } from "./alias.ts";

/**
 * The event log with its source clock, per subject. Two adapters implement it (DynamoDB, SQLite);
 * one contract suite runs against both.
 */

/** A subject's source clock: how many events it holds, and how often what is readable changed. */
export interface Clock {
  highWater: number;
  inputEpoch: number;
}

/**
 * The clock as a store reads it, with where its epoch began: `epochMovedAt` is the highWater the
 * write that last moved inputEpoch left (an append, a policy change, a selector adoption; 0 while
 * the epoch never moved). Every write of the clock keeps it or, moving the epoch, sets it; a clock
 * written before it was kept reads as moved at its highWater, the lowest safe answer.
 */
export interface EpochClock extends Clock {
  epochMovedAt: number;
}

/**
 * Where a stored clock's epoch last moved: as kept, else (a clock written before it was kept) its
 * highWater, or 0 when its epoch never moved: the lowest answer that is surely not too low.
 */
export function epochMovedAtOf(clock: Clock, kept: number | null | undefined): number {
  return kept ?? (clock.inputEpoch === 0 ? 0 : clock.highWater);
}

/**
 * A snapshot as the store read it: `epochMovedAt` always set. A snapshot of the epoch covering
 * less than it would judge the events it covers without the event that moved the epoch (a
 * revocation after it, say), so none is built or published (CONTRACT §2).
 */
export type ReadSnapshot = Snapshot & { epochMovedAt: number };

/** What an append wrote, as the engine's write answers it. */
export interface AppendWritten {
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

export interface AppendResult extends AppendWritten {
  /**
   * The clock and alias as this append left them: what a rebuild it makes due is sent. Read in the
   * append's own transaction where the store can (a read after it would wait for every later commit
   * to be durable too), else read right after it.
   */
  snapshot: ReadSnapshot;
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
  /** One consistent read of clock and alias: the snapshot message, with where its epoch began. */
  snapshot(subject: string): Promise<ReadSnapshot>;
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
  /**
   * The policy every selection of the subject uses (`effectivePolicy` of what its clock keeps):
   * its own `latest` rules, or the store's default as last applied to it.
   */
  trustPolicy(subject: string): Promise<TrustPolicy>;
  /**
   * The policy as the subject's clock keeps it: as set, with the store's default rules as last
   * applied (a subject without a clock: the default policy and the store's rules now).
   */
  storedPolicy(subject: string): Promise<StoredPolicy>;
  /**
   * Changes the subject's stored policy, moving inputEpoch when `moveEpoch` (what is readable
   * changes under it), only if the clock and the stored policy still equal `expected`; null when
   * either moved meanwhile (nothing changed then).
   */
  setTrustPolicy(
    subject: string,
    policy: StoredPolicy,
    expected: { clock: Clock; policy: StoredPolicy },
    moveEpoch: boolean,
  ): Promise<Clock | null>;
  /**
   * The conflict index entries of the given (key, scope) pairs (absent when nothing asserted on
   * one): every event that ever held each position there, and when each read it. What recall
   * asks to tell earlier readings from the one that holds without reading the whole log.
   */
  readingIndex(
    subject: string,
    keyScopes: ReadonlyArray<{ key: string; scope: string }>,
  ): Promise<ConflictIndexEntry[]>;
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
  /** Every subject with a clock, sorted (the audit's list; an index's pages on DynamoDB, no Scan). */
  listSubjects(): Promise<string[]>;
  /**
   * At most `limit` subjects with a clock after `after` (exclusive; null: from the first), sorted;
   * `more` when others follow (GET /v1/subjects, the audit's rounds). One index Query on DynamoDB.
   */
  subjectsPage(after: string | null, limit: number): Promise<SubjectPage>;
  /**
   * Lists in the subject index the subjects created before it (DynamoDB's bySubject; the embedded
   * store lists from its clock table and has nothing to do), at most `maxPages` Scan pages a run,
   * resuming where the last run stopped. Until it completes, the listings above fall back to a Scan.
   */
  indexSubjects(options?: { maxPages?: number }): Promise<SubjectIndexing>;
  /**
   * Subjects that may need a rebuild (see `rebuildReason`), from committed state only: never from
   * the memory of the process that appended. The embedded store answers exactly; DynamoDB answers
   * with the clocks marked since they were last checked (a sparse index), a superset.
   */
  subjectsToCheck(rebuildAfterEvents: number): Promise<string[]>;
  /** Clears the subject's mark when its clock still equals `checked` (nothing new since the check). */
  markChecked(subject: string, checked: Clock): Promise<void>;
  /** Marks the subject for the sweep without a clock change (the audit took its summary out of service). */
  markForCheck(subject: string): Promise<void>;
  /** The last rebuild attempt that did not publish, as `recordRebuildAttempt` left it; null if none. */
  rebuildAttempt(subject: string): Promise<RebuildAttempt | null>;
  /**
   * Remembers a rebuild attempt that did not publish on the subject's clock (highWater and epoch
   * untouched), and marks the subject for the sweep, which retries it after its backoff.
   */
  recordRebuildAttempt(subject: string, attempt: RebuildAttempt): Promise<void>;
}

/** One page of subjects, sorted; `more` when subjects after the last one exist. */
export interface SubjectPage {
  subjects: string[];
  more: boolean;
}

/** What a run of `indexSubjects` did: subjects it listed, and whether every subject is listed now. */
export interface SubjectIndexing {
  added: number;
  complete: boolean;
}

/** The snapshot message from one consistent read of a subject's clock and alias. */
export function snapshotOf(subject: string, clock: EpochClock, alias: AliasState | null): ReadSnapshot {
  return {
    subject,
    highWater: clock.highWater,
    inputEpoch: clock.inputEpoch,
    epochMovedAt: clock.epochMovedAt,
    expectedAlias: alias
      ? {
          parentArtifactId: alias.artifactId,
          sourceEpoch: alias.sourceEpoch,
          coversThrough: alias.coversThrough,
        }
      : null,
  };
}
