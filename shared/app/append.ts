import { canonicalJson } from "#domain/hashing.ts";
import { effectivePolicy } from "#domain/readings.ts";
import {
  type RebuildAttempt,
  type RebuildDecision,
  rebuildDecision,
  rebuildReason,
} from "#domain/rebuild.ts";
import type { LatestRule, MemoryEvent, StoredPolicy, TrustPolicy } from "#domain/schemas.ts";
import { MemoryEvent as MemoryEventSchema } from "#domain/schemas.ts";
import {
  checkEventLogPaced,
  type Selection,
  type SelectorVersion,
  selectInputsPaced,
  selectionDifferences,
} from "#domain/selector.ts";
import { StandingResolver } from "#domain/standing-resolver.ts";
import { selectorNamed } from "#domain/validity.ts";
import { NotFoundError, StoreContentionError } from "#ports/errors.ts";
import type { AppendWritten, SubjectIndexing } from "#ports/event-log.ts";
import { mapWithPauses, neverPause } from "#ports/time.ts";
import type { AppendDeps, Deps, StoreDeps } from "./deps.ts";
import { readSelection } from "./selection.ts";

/**
 * The append use case and what follows an append: revocation, a trust-policy change, invalidation
 * (STALE marks) and rebuild requests, one subject at a time or by the sweep. Invariant: recall
 * stops serving a summary at the epoch move itself, in the append's transaction; everything here
 * after it is bookkeeping a later sweep redoes from committed state, so a process dying between
 * the two loses nothing.
 */

export interface AppendOutcome extends AppendWritten {
  /** Artifacts marked STALE because an input they used stopped being valid. */
  staled: string[];
  rebuildRequested: boolean;
}

/** Parses each event of `batch` (a MemoryEvent, defaults applied), then `appendValidEvents`. */
export async function appendEvents(
  deps: AppendDeps,
  subject: string,
  batch: readonly unknown[],
): Promise<AppendOutcome> {
  const events: MemoryEvent[] = await mapWithPauses(batch, deps.pause ?? neverPause, (raw) =>
    MemoryEventSchema.parse(raw),
  );
  return appendValidEvents(deps, subject, events);
}

/**
 * Appends events a front door has parsed already (it names a bad one's field its own way); when
 * the epoch moved, marks every artifact whose inputs lost validity STALE and requests a rebuild.
 * Recall stopped serving the old summary already, in the append's transaction (alias epoch !=
 * clock epoch): marking is for audit and the artifact listing, not for safety.
 */
export async function appendValidEvents(
  deps: AppendDeps,
  subject: string,
  events: readonly MemoryEvent[],
): Promise<AppendOutcome> {
  const { snapshot, ...result } = await deps.events.append(subject, events);
  // Everything below is bookkeeping a later sweep redoes from committed state if we die here.
  deps.failpoints.hit("after-append");
  if (result.validityChanged) return { ...result, ...(await invalidate(deps, subject)) };
  const { rebuildAfterEvents } = await deps.settings.settings();
  const alias = snapshot.expectedAlias;
  const now = rebuildReason(snapshot, alias, rebuildAfterEvents);
  const before = rebuildReason(
    {
      highWater: snapshot.highWater - result.appended.length,
      inputEpoch: snapshot.inputEpoch - (result.epochMoved ? 1 : 0),
    },
    alias,
    rebuildAfterEvents,
  );
  // Requested once, when this append makes the subject need it (a new conflict, the tail reaching
  // rebuildAfterEvents, the first events); the sweep asks again for anything still not rebuilt.
  if (now === null || before !== null) return { ...result, staled: [], rebuildRequested: false };
  await deps.queue.send(snapshot);
  deps.progress(`rebuild requested for ${subject}: ${now}`);
  return { ...result, staled: [], rebuildRequested: true };
}

/** What the sweep did: the rebuilds it requested, and those it left waiting or for a person. */
export interface SweepReport {
  requested: Array<{ subject: string; reason: string }>;
  /** Waiting: a backoff after an attempt that came to nothing, or a SHADOW awaiting review. */
  waiting: Array<{ subject: string; reason: string }>;
  /** Attempts used up at the subject's epoch and alias: a person decides (metric RebuildsLeft). */
  left: Array<{ subject: string; reason: string }>;
  /** The subject index's backfill in this sweep (DynamoDB tables created before bySubject). */
  indexed: SubjectIndexing;
}

/**
 * Scan pages of the subject index's backfill per sweep: a table written before the index is
 * listed in a few sweeps after the upgrade, each well inside the sweep's five minutes.
 */
export const SUBJECT_INDEX_PAGES_PER_SWEEP = 10;

/**
 * The sweep: every subject that needs a rebuild by committed state (rebuildDecision) gets one
 * requested unless its last attempts wait out their backoff, wait for review or are used up, and
 * what a dead process left undone (STALE marks after an epoch move) is finished: invalidation is
 * idempotent. Subjects found current are unmarked (DynamoDB's sparse index). On a table older
 * than the subject index, each sweep first lists part of its subjects there (indexSubjects).
 */
export async function sweep(deps: RebuildDeps): Promise<SweepReport> {
  const { rebuildAfterEvents } = await deps.settings.settings();
  const indexed = await deps.events.indexSubjects({ maxPages: SUBJECT_INDEX_PAGES_PER_SWEEP });
  const report: SweepReport = { requested: [], waiting: [], left: [], indexed };
  for (const subject of await deps.events.subjectsToCheck(rebuildAfterEvents)) {
    const decision = await requestRebuildIfNeeded(deps, subject, rebuildAfterEvents);
    if (decision.action === "request") report.requested.push({ subject, reason: decision.reason });
    else if (decision.action === "left") report.left.push({ subject, reason: decision.reason });
    else if (decision.action !== "none") report.waiting.push({ subject, reason: decision.reason });
  }
  return report;
}

export type RebuildDeps = StoreDeps & Pick<Deps, "now">;

/**
 * One subject by its committed state and its last rebuild attempt (rebuildDecision): when a
 * rebuild is due the snapshot is sent (after finishing the STALE marks of an epoch move);
 * otherwise nothing is sent, and a subject found current has its check mark cleared. The sweep
 * and the outbox (DynamoDB Streams) both come here, so neither repeats a paid generation before
 * its backoff; repeats within it are harmless, the queue deduplicates on
 * subject:highWater:epoch:alias.
 */
export async function requestRebuildIfNeeded(
  deps: RebuildDeps,
  subject: string,
  rebuildAfterEvents: number,
): Promise<RebuildDecision> {
  const [snapshot, attempt] = await Promise.all([
    deps.events.snapshot(subject),
    lastRebuildAttempt(deps, subject),
  ]);
  const expected = snapshot.expectedAlias;
  const record = expected ? await deps.artifacts.getRecord(subject, expected.parentArtifactId) : null;
  const alias = expected && {
    artifactId: expected.parentArtifactId,
    sourceEpoch: expected.sourceEpoch,
    coversThrough: expected.coversThrough,
    stale: record?.stale === true,
  };
  const decision = rebuildDecision(snapshot, alias, rebuildAfterEvents, attempt, deps.now());
  if (decision.action === "none") {
    await deps.events.markChecked(subject, snapshot);
    return decision;
  }
  if (alias !== null && alias.sourceEpoch !== snapshot.inputEpoch)
    await invalidate(deps, subject, { send: decision.action === "request" });
  else if (decision.action === "request") await deps.queue.send(snapshot);
  return decision;
}

/** The last attempt as it stands: a SHADOW a reviewer rejected since counts as REJECTED. */
async function lastRebuildAttempt(deps: RebuildDeps, subject: string): Promise<RebuildAttempt | null> {
  const attempt = await deps.events.rebuildAttempt(subject);
  if (attempt?.outcome !== "SHADOW" || attempt.artifactId === undefined) return attempt;
  const record = await deps.artifacts.getRecord(subject, attempt.artifactId);
  return record?.status === "SHADOW" ? attempt : { ...attempt, outcome: "REJECTED" };
}

/**
 * Changes the subject's trust policy as set (its `latest` rules included; without them it follows
 * the store's default). The epoch moves only when the change changes what is readable (validity,
 * conflicts, which readings are earlier), and what it invalidated is marked STALE. The subject
 * must exist (have events): a policy alone would make a subject appear that has no clock to read
 * and nothing to recall. NotFoundError otherwise.
 */
export async function changeTrustPolicy(deps: StoreDeps, subject: string, policy: TrustPolicy) {
  // Events are never deleted, so a subject that has one now has one when the policy is written.
  const snapshot = await deps.events.snapshot(subject);
  if (snapshot.highWater === 0 && snapshot.expectedAlias === null)
    throw new NotFoundError(
      `subject: no events for "${subject}"; append its first events, then set its policy`,
      { field: "subject" },
    );
  const { policy: effective, ...outcome } = await restorePolicy(deps, subject, (stored) => ({
    ...policy,
    ...(stored.storeLatest ? { storeLatest: stored.storeLatest } : {}),
  }));
  return { ...outcome, policy, effectivePolicy: effective };
}

/**
 * Sets the store's default `latest` rules and applies them to every subject's clock, one subject
 * at a time: a subject following the default (no rules of its own) whose readings change moves
 * its epoch; the others keep theirs. A subject created meanwhile is created under the new rules
 * (its first write checks them), so after this returns every subject follows them.
 */
export async function changeStoreLatest(
  deps: StoreDeps,
  latest: readonly LatestRule[],
): Promise<{ latest: LatestRule[]; subjects: number; epochMoved: string[] }> {
  const rules = [...latest];
  await deps.settings.updateSettings({ latest: rules });
  const epochMoved: string[] = [];
  const subjects = await deps.events.listSubjects();
  for (const subject of subjects) {
    const outcome = await restorePolicy(deps, subject, (stored) => {
      const { storeLatest: _before, ...asSet } = stored;
      return rules.length > 0 ? { ...asSet, storeLatest: rules } : asSet;
    });
    if (outcome.epochMoved) epochMoved.push(subject);
  }
  deps.progress(
    `store default latest rules set (${rules.length}); ${subjects.length} subjects checked, epoch moved for ${epochMoved.length}${epochMoved.length > 0 ? `: ${epochMoved.join(", ")}` : ""}`,
  );
  return { latest: rules, subjects: subjects.length, epochMoved };
}

/**
 * Replaces the subject's stored policy by `next(stored)`, conditioned on the clock and the stored
 * policy read: the epoch moves only when the selection differs under the new policy (a change
 * that changes nothing moves nothing), and what it invalidated is marked STALE.
 */
async function restorePolicy(deps: StoreDeps, subject: string, next: (stored: StoredPolicy) => StoredPolicy) {
  for (let attempt = 0; attempt < 5; attempt++) {
    const snapshot = await deps.events.snapshot(subject);
    const stored = await deps.events.storedPolicy(subject);
    const policy = next(stored);
    const pause = deps.pause ?? neverPause;
    const events = await checkEventLogPaced(
      await deps.events.eventsThrough(subject, snapshot.highWater),
      pause,
    );
    const differences = selectionDifferences(
      await selectInputsPaced(events, snapshot.highWater, effectivePolicy(stored), pause),
      await selectInputsPaced(events, snapshot.highWater, effectivePolicy(policy), pause),
    );
    await pause();
    const unchanged = canonicalJson(policy) === canonicalJson(stored);
    const clock = unchanged
      ? { highWater: snapshot.highWater, inputEpoch: snapshot.inputEpoch }
      : await deps.events.setTrustPolicy(
          subject,
          policy,
          { clock: snapshot, policy: stored },
          differences.length > 0,
        );
    if (clock === null) continue; // an append or another policy change came between: judge again
    if (differences.length === 0)
      return {
        ...clock,
        policy: effectivePolicy(policy),
        epochMoved: false,
        staled: [],
        rebuildRequested: false,
      };
    await pause();
    deps.progress(`${subject}: ${differences.join("; ")}`);
    await pause();
    return {
      ...clock,
      policy: effectivePolicy(policy),
      epochMoved: true,
      ...(await invalidate(deps, subject)),
    };
  }
  throw new StoreContentionError(`the log of ${subject} kept changing while its policy was being set`);
}

/** Marks STALE every live artifact that used an input which is no longer valid; requests a rebuild. */
export async function invalidate(
  deps: Pick<Deps, "events" | "artifacts" | "queue" | "progress" | "pause">,
  subject: string,
  options: { send?: boolean } = {},
): Promise<{ staled: string[]; rebuildRequested: boolean }> {
  const snapshot = await deps.events.snapshot(subject);
  // Each artifact's inputs are judged by the selector that chose them (recovery may use v1).
  const selections = new Map<SelectorVersion, Selection>();
  const selectionFor = async (version: SelectorVersion) => {
    let selection = selections.get(version);
    if (!selection) {
      selection = (await readSelection(deps, subject, snapshot.highWater, version)).selection;
      selections.set(version, selection);
    }
    return selection;
  };
  const staled: string[] = [];
  for (const record of await deps.artifacts.listRecords(subject)) {
    if (record.stale || !["PUBLISHED", "CANDIDATE", "SHADOW"].includes(record.status)) continue;
    // The input list lives in the manifest: one read per live artifact, never an item per input.
    const manifest = await deps.artifacts.readManifest(subject, record.artifactId, deps.pause);
    const selection = await selectionFor(selectorNamed(manifest.selectorVersion));
    const lost = manifest.inputIds.filter((id) => !selection.validIds.has(id));
    if (lost.length === 0) continue;
    if (await deps.artifacts.markStale(subject, record.artifactId, ["PUBLISHED", "CANDIDATE", "SHADOW"])) {
      staled.push(record.artifactId);
      deps.progress(
        `${record.artifactId} is STALE: ${lost.slice(0, 5).join(", ")}${lost.length > 5 ? " ..." : ""} no longer valid`,
      );
    }
  }
  // The sweep sends only when the rebuild is due (not waiting out an attempt's backoff).
  if (options.send === false) return { staled, rebuildRequested: false };
  await deps.queue.send(snapshot);
  return { staled, rebuildRequested: true };
}

/**
 * Revokes events (one revocation event naming them all); the epoch moves, what used them goes
 * STALE. Events a valid revocation already revokes are left out, and when that is all of them
 * nothing is appended (highWater stays): a retried revocation changes nothing and says so in
 * `alreadyRevoked`. (Two revocations racing may both append; the second still moves no epoch.)
 */
export async function revokeEvents(
  deps: AppendDeps,
  subject: string,
  eventIds: readonly string[],
  reason?: string,
): Promise<AppendOutcome & { alreadyRevoked: string[] }> {
  const snapshot = await deps.events.snapshot(subject);
  const resolver = new StandingResolver(
    (ids) => deps.events.eventsById(subject, ids),
    await deps.events.trustPolicy(subject),
    snapshot.highWater,
  );
  const unique = [...new Set(eventIds)];
  await resolver.prefetch(unique);
  const alreadyRevoked: string[] = [];
  const toRevoke: string[] = [];
  for (const id of unique)
    ((await resolver.standing(id)).reason === "revoked" ? alreadyRevoked : toRevoke).push(id);
  if (toRevoke.length === 0)
    return {
      appended: [],
      duplicates: [],
      highWater: snapshot.highWater,
      inputEpoch: snapshot.inputEpoch,
      epochMoved: false,
      validityChanged: false,
      chunks: 0,
      staled: [],
      rebuildRequested: false,
      alreadyRevoked,
    };
  const outcome = await appendEvents(deps, subject, [
    {
      eventId: `rev-${deps.newId()}`,
      kind: "revocation",
      revokes: toRevoke,
      ...(reason ? { text: reason } : {}),
    },
  ]);
  return { ...outcome, alreadyRevoked };
}
