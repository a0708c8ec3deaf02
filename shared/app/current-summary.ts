import { summaryCoversSnapshot } from "#domain/rebuild.ts";
import type { Snapshot } from "#domain/schemas.ts";
import { SELECTOR_VERSION, selectorNamed } from "#domain/validity.ts";
import type { Deps } from "./deps.ts";

/**
 * The published summary when consolidating `snapshot` would build exactly it again: it covers the
 * snapshot's high-water mark at the snapshot's epoch (so the same inputs), is PUBLISHED and not
 * STALE, and was made with the selector, prompt and model this process would use. Null otherwise.
 * A retried or repeated consolidation of an unchanged subject then generates nothing, while one
 * asked for with another selector, prompt or model (`memgate recover --selector v3`) still runs.
 */
export async function currentSummary(
  deps: Pick<Deps, "artifacts" | "prompt" | "model" | "selectorVersion">,
  snapshot: Snapshot,
): Promise<{ artifactId: string; reason: string } | null> {
  const alias = snapshot.expectedAlias;
  if (!alias || !summaryCoversSnapshot(snapshot, alias)) return null;
  const record = await deps.artifacts.getRecord(snapshot.subject, alias.parentArtifactId);
  if (record?.status !== "PUBLISHED" || record.stale) return null;
  const manifest = await deps.artifacts.readManifest(snapshot.subject, alias.parentArtifactId);
  const same =
    selectorNamed(manifest.selectorVersion) === (deps.selectorVersion ?? SELECTOR_VERSION) &&
    manifest.promptVersion === deps.prompt.version &&
    manifest.modelSnapshot === deps.model.name;
  return same
    ? {
        artifactId: alias.parentArtifactId,
        reason: `${alias.parentArtifactId} already covers ${snapshot.highWater} at epoch ${snapshot.inputEpoch} with selector ${manifest.selectorVersion}, prompt ${manifest.promptVersion} and model ${manifest.modelSnapshot}`,
      }
    : null;
}
