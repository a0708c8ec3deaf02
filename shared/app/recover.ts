import { currentSummary } from "./current-summary.ts";
import type { Deps } from "./deps.ts";
import { type RunOutcome, run } from "./run.ts";
import { takeSnapshot } from "./snapshot.ts";

/**
 * The recover use case, an operator's way out of a bad summary (`memgate recover`). Invariant:
 * recovery only rolls forward: nothing is deleted, the bad summary is never an input, and a
 * summary that already is what recovery would build is left as it is.
 */

/**
 * Forward recovery: a new artifact from the current valid inputs (coverage at least the alias's,
 * since a snapshot never goes below it), with the selector, prompt and model the operator chose,
 * rolled forward through the same CAS. Nothing is deleted; the bad summary is never an input.
 */
export async function recover(
  deps: Deps,
  subject: string,
): Promise<RunOutcome | { status: "current"; artifactId: string; reason: string }> {
  const snapshot = await takeSnapshot(deps, subject);
  const current = await currentSummary(deps, snapshot);
  if (current)
    return {
      status: "current",
      artifactId: current.artifactId,
      reason: `${current.reason}; nothing to recover`,
    };
  return run(deps, snapshot, { approve: true });
}
