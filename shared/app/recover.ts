import type { Snapshot } from "#domain/schemas.ts";
import { SELECTOR_VERSION, selectorNamed } from "#domain/validity.ts";
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
  if (current) return current;
  return run(deps, snapshot, { approve: true });
}

/**
 * The published summary when recovery would rebuild exactly it: it covers the whole log at the
 * clock's epoch and was made with the selector, prompt and model asked for. Null otherwise.
 */
async function currentSummary(
  deps: Deps,
  snapshot: Snapshot,
): Promise<{ status: "current"; artifactId: string; reason: string } | null> {
  const alias = snapshot.expectedAlias;
  if (!alias || alias.sourceEpoch !== snapshot.inputEpoch || alias.coversThrough !== snapshot.highWater)
    return null;
  const record = await deps.artifacts.getRecord(snapshot.subject, alias.parentArtifactId);
  if (record?.status !== "PUBLISHED" || record.stale) return null;
  const manifest = await deps.artifacts.readManifest(snapshot.subject, alias.parentArtifactId);
  const same =
    selectorNamed(manifest.selectorVersion) === (deps.selectorVersion ?? SELECTOR_VERSION) &&
    manifest.promptVersion === deps.prompt.version &&
    manifest.modelSnapshot === deps.model.name;
  return same
    ? {
        status: "current",
        artifactId: alias.parentArtifactId,
        reason: `${alias.parentArtifactId} already covers the whole log (${snapshot.highWater}) at epoch ${snapshot.inputEpoch} with selector ${manifest.selectorVersion}, prompt ${manifest.promptVersion} and model ${manifest.modelSnapshot}; nothing to recover`,
      }
    : null;
}
