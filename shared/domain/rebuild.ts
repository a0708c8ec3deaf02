import { z } from "zod";
import { sourcesChanged } from "./serving.ts";

/**
 * When a subject needs a rebuild (a fact of committed state, never of the process that appended):
 * it has events but no summary, its summary's epoch is not the clock's (a revocation,
 * supersession, new conflict or trust change since), its summary was taken out of service (the
 * audit marked it STALE), or the tail its summary does not cover has reached
 * `rebuildAfterEvents`. Null when the summary is current enough.
 */
export function rebuildReason(
  clock: { highWater: number; inputEpoch: number },
  alias: { sourceEpoch: number; coversThrough: number; stale?: boolean } | null,
  rebuildAfterEvents: number,
): string | null {
  if (alias === null) return clock.highWater > 0 ? "events but no summary yet" : null;
  if (alias.sourceEpoch !== clock.inputEpoch) return sourcesChanged(alias.sourceEpoch, clock.inputEpoch);
  if (alias.stale === true) return "the summary was taken out of service (STALE)";
  const tail = clock.highWater - alias.coversThrough;
  if (tail >= rebuildAfterEvents)
    return `${tail} events since the summary (rebuild after ${rebuildAfterEvents})`;
  return null;
}

/**
 * Whether the published summary already is what consolidating this snapshot would make: it covers
 * exactly the snapshot's high-water mark at the snapshot's epoch, so its inputs (the valid events
 * through that mark under that epoch's policy and selector) are the snapshot's. A retried or
 * repeated consolidation of an unchanged subject then publishes nothing new.
 */
export function summaryCoversSnapshot(
  snapshot: { highWater: number; inputEpoch: number },
  alias: { sourceEpoch: number; coversThrough: number } | null,
): boolean {
  return (
    alias !== null && alias.coversThrough === snapshot.highWater && alias.sourceEpoch === snapshot.inputEpoch
  );
}

/**
 * What the last rebuild of a subject that did not publish came to, kept on its clock: the
 * snapshot it was made from (highWater, epoch and the alias it expected), the outcome (REJECTED:
 * the gate refused every answer; SHADOW: it passed and waits for review; failed: no answer), the
 * artifact it wrote if any, and how many attempts in a row came to nothing against that epoch and
 * alias, this one included.
 */
export const RebuildAttempt = z.object({
  highWater: z.number().int().nonnegative(),
  inputEpoch: z.number().int().nonnegative(),
  parentArtifactId: z.string().nullable(),
  outcome: z.enum(["REJECTED", "SHADOW", "failed"]),
  artifactId: z.string().optional(),
  count: z.number().int().positive(),
  at: z.iso.datetime(),
});
export type RebuildAttempt = z.infer<typeof RebuildAttempt>;

/**
 * How often an unpublished rebuild is tried again: after 15 minutes, then 30, 60 (doubling); after
 * the fourth attempt at one epoch and parent it is left for a person (`memgate recover`, a review,
 * a policy change). Paid generations for a subject whose answers are always refused are thereby
 * bounded by four per epoch, whatever the sweep's rate.
 */
export const REBUILD_RETRY = { maxAttempts: 4, firstDelayMinutes: 15 } as const;

export type RebuildDecision =
  | { action: "none" }
  /** Send the snapshot: nothing tried yet at this epoch and parent, or the backoff has passed. */
  | { action: "request"; reason: string }
  /** The last attempt came to nothing; the next waits until `until`. */
  | { action: "wait"; reason: string; until: string }
  /** A SHADOW candidate waits for a reviewer: another generation would only add one more. */
  | { action: "review"; reason: string; artifactId: string }
  /** The attempts are used up at this epoch and parent: a person decides (counted and alarmed). */
  | { action: "left"; reason: string };

/**
 * Whether to request a rebuild now, from the committed clock and alias and the last attempt. An
 * attempt counts only while the clock's epoch and the alias are the ones it was made against: a
 * revocation, a trust change, a publish (an approved SHADOW included) or recovery starts afresh.
 */
export function rebuildDecision(
  clock: { highWater: number; inputEpoch: number },
  alias: { artifactId: string; sourceEpoch: number; coversThrough: number; stale?: boolean } | null,
  rebuildAfterEvents: number,
  attempt: RebuildAttempt | null,
  now: Date,
): RebuildDecision {
  const reason = rebuildReason(clock, alias, rebuildAfterEvents);
  if (reason === null) return { action: "none" };
  if (!attemptApplies(clock, alias, attempt)) return { action: "request", reason };
  const tried = `${attempt.outcome} at highWater ${attempt.highWater}, epoch ${attempt.inputEpoch}`;
  if (attempt.outcome === "SHADOW" && attempt.artifactId !== undefined)
    return {
      action: "review",
      reason: `${reason}; ${attempt.artifactId} (SHADOW) waits for review`,
      artifactId: attempt.artifactId,
    };
  if (attempt.count >= REBUILD_RETRY.maxAttempts)
    return {
      action: "left",
      reason: `${reason}; ${attempt.count} attempts came to nothing (last ${tried}): left for a person`,
    };
  const until = new Date(Date.parse(attempt.at) + rebuildBackoffMs(attempt.count));
  if (now.getTime() < until.getTime())
    return {
      action: "wait",
      reason: `${reason}; attempt ${attempt.count} came to nothing (${tried}), next after ${until.toISOString()}`,
      until: until.toISOString(),
    };
  return {
    action: "request",
    reason: `${reason}; attempt ${attempt.count + 1} of ${REBUILD_RETRY.maxAttempts}`,
  };
}

/** The wait after `count` attempts that came to nothing: 15 minutes, doubling. */
export function rebuildBackoffMs(count: number): number {
  return REBUILD_RETRY.firstDelayMinutes * 60_000 * 2 ** Math.max(0, count - 1);
}

/** The attempt to remember after one that did not publish: counted on from `previous` when it applies. */
export function nextRebuildAttempt(
  previous: RebuildAttempt | null,
  attempt: Omit<RebuildAttempt, "count">,
): RebuildAttempt {
  const continues =
    previous !== null &&
    previous.inputEpoch === attempt.inputEpoch &&
    previous.parentArtifactId === attempt.parentArtifactId;
  return { ...attempt, count: continues ? previous.count + 1 : 1 };
}

function attemptApplies(
  clock: { inputEpoch: number },
  alias: { artifactId: string } | null,
  attempt: RebuildAttempt | null,
): attempt is RebuildAttempt {
  return (
    attempt !== null &&
    attempt.inputEpoch === clock.inputEpoch &&
    attempt.parentArtifactId === (alias?.artifactId ?? null)
  );
}
