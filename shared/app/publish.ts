import { inputRefs, inputRoot } from "#domain/hashing.ts";
import type { Manifest } from "#domain/schemas.ts";
import { selectorNamed } from "#domain/validity.ts";
import type { AliasState } from "#ports/alias.ts";
import { shownStatus } from "#ports/artifact-records.ts";
import { epochAfterCoverage, NotFoundError, PublishRefusedError } from "#ports/errors.ts";
import { subjectOfArtifact } from "./artifact-id.ts";
import type { PublishDeps } from "./deps.ts";
import { readSelection } from "./selection.ts";

/**
 * The publish use case: re-check the inputs, then the one compare-and-set that moves the alias
 * (or, in shadow mode, the SHADOW record that waits for review). Invariant: the alias moves only
 * if the clock is still at the artifact's epoch and the inputs valid now have the manifest's input
 * root; a refused switch changes nothing but marking the dead candidate ABANDONED.
 */

export type PublishOutcome =
  | { status: "PUBLISHED"; alias: AliasState }
  | { status: "SHADOW"; artifactId: string };

/**
 * The switch: re-check the inputs (every one still valid, its hash unchanged, the clock still at
 * the artifact's epoch, which began at or below its coverage), then the single compare-and-set. A
 * lost CAS or a moved epoch is PublishRefusedError and nothing changed; the snapshot is dead, a
 * rebuild takes a new one.
 * In shadow mode a passing candidate becomes SHADOW and waits for review instead.
 */
export async function publish(
  deps: PublishDeps,
  artifactId: string,
  options: { approve?: boolean } = {},
): Promise<PublishOutcome> {
  const subject = subjectOfArtifact(artifactId);
  const record = await deps.artifacts.getRecord(subject, artifactId);
  if (!record) throw new NotFoundError(`no artifact ${artifactId}`);
  const allowed = options.approve ? ["SHADOW", "CANDIDATE"] : ["CANDIDATE"];
  if (record.stale || !allowed.includes(record.status))
    throw new PublishRefusedError(
      "artifact-not-publishable",
      `${artifactId} is ${shownStatus(record)}, not ${allowed.join(" or ")}`,
    );
  const manifest = await deps.artifacts.readManifest(subject, artifactId);
  try {
    return await switchAlias(deps, manifest, options);
  } catch (error) {
    // A dead snapshot: its candidate is never live again, so invalidation stops reading it.
    if (error instanceof PublishRefusedError && error.reason !== "artifact-not-publishable")
      await deps.artifacts.transition(subject, artifactId, ["CANDIDATE", "SHADOW"], "ABANDONED");
    throw error;
  }
}

/** The re-check, then the shadow record or the one compare-and-set. */
async function switchAlias(
  deps: PublishDeps,
  manifest: Manifest,
  options: { approve?: boolean },
): Promise<PublishOutcome> {
  const { subject, artifactId } = manifest;
  await recheckInputs(deps, manifest);
  const settings = await deps.settings.settings();
  if (settings.publishMode === "shadow" && !options.approve) {
    if (!(await deps.artifacts.transition(subject, artifactId, ["CANDIDATE"], "SHADOW")))
      throw new PublishRefusedError("artifact-not-publishable", `${artifactId} stopped being a CANDIDATE`);
    deps.progress(`${artifactId} recorded as SHADOW; review it with memgate review ${subject}`);
    return { status: "SHADOW", artifactId };
  }
  deps.failpoints.hit("before-publish");
  const alias = await deps.alias.publishIfUnchanged({
    subject,
    artifactId,
    expectedAlias: manifest.expectedAlias,
    inputEpoch: manifest.inputEpoch,
    newCoversThrough: manifest.newCoversThrough,
    ...(options.approve ? {} : { whileLive: true }),
  });
  deps.failpoints.hit("after-publish");
  deps.progress(
    `${artifactId} PUBLISHED: the alias covers ${alias.coversThrough} at epoch ${alias.sourceEpoch}`,
  );
  return { status: "PUBLISHED", alias };
}

/**
 * The validity re-check before the switch: same epoch, begun at or below the coverage (so no
 * event after the coverage changed what the inputs mean), same valid inputs, same hashes.
 */
async function recheckInputs(deps: PublishDeps, manifest: Manifest): Promise<void> {
  const snapshot = await deps.events.snapshot(manifest.subject);
  if (snapshot.inputEpoch !== manifest.inputEpoch)
    throw new PublishRefusedError(
      "epoch-moved",
      `the clock is at epoch ${snapshot.inputEpoch}, ${manifest.artifactId} was built at ${manifest.inputEpoch}`,
    );
  // Its inputs were judged without what moved the epoch after its coverage (the switch refuses
  // it too; refused here, it is never recorded SHADOW for a reviewer to approve in vain).
  if (snapshot.epochMovedAt > manifest.newCoversThrough)
    throw new PublishRefusedError("epoch-moved", epochAfterCoverage(snapshot.epochMovedAt, manifest));
  // Re-read every input version and re-derive validity (no gate index is needed here).
  const { selection } = await readSelection(
    deps,
    manifest.subject,
    manifest.newCoversThrough,
    selectorNamed(manifest.selectorVersion),
  );
  const root = inputRoot(inputRefs(selection.validInputs));
  if (root !== manifest.inputRoot)
    throw new PublishRefusedError(
      "epoch-moved",
      `the valid inputs of ${manifest.artifactId} changed (input root ${root} != ${manifest.inputRoot})`,
    );
}
