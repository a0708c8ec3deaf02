import type { ConsolidationOutput, SequencedEvent } from "#domain/schemas.ts";
import { ConsolidationOutput as ConsolidationOutputSchema } from "#domain/schemas.ts";
import { shownStatus } from "#ports/artifact-records.ts";
import { NotFoundError } from "#ports/errors.ts";
import type { Deps } from "./deps.ts";

/**
 * Explaining a summary's claims by their evidence: the manifest that built the artifact and the
 * stored events each claim was derived from. Invariant: read only, and the evidence is the events
 * as stored, never a summary's restatement of them.
 */

/** An event as a reader judges a claim or a checklist item by it: id, place, kind, words, trust. */
export type EvidenceEvent = Pick<
  SequencedEvent,
  "eventId" | "sequence" | "kind" | "text" | "trust" | "source"
>;

/** The evidence fields of a stored event. */
export function evidenceOf(event: SequencedEvent): EvidenceEvent {
  return {
    eventId: event.eventId,
    sequence: event.sequence,
    kind: event.kind,
    text: event.text,
    trust: event.trust,
    source: event.source,
  };
}

export interface ClaimExplanation {
  artifactId: string;
  status: string;
  inputRoot: string;
  model: string;
  prompt: string;
  claims: Array<{
    index: number;
    claim: ConsolidationOutput["claims"][number];
    evidence: EvidenceEvent[];
  }>;
}

/**
 * A claim's lineage in words an agent can use: the artifact (the one recall serves unless named),
 * its manifest's input root, model and prompt, and each claim (all, or those of one key) with the
 * events it was derived from, as they are stored.
 */
export async function explainClaims(
  deps: Pick<Deps, "events" | "artifacts">,
  subject: string,
  options: { artifactId?: string | undefined; key?: string | undefined } = {},
): Promise<ClaimExplanation> {
  const artifactId =
    options.artifactId ?? (await deps.events.snapshot(subject)).expectedAlias?.parentArtifactId;
  if (!artifactId) throw new NotFoundError(`${subject} has no published summary yet: name an artifactId`);
  const record = await deps.artifacts.getRecord(subject, artifactId);
  if (!record) throw new NotFoundError(`no artifact ${artifactId} for ${subject}`);
  const [manifest, raw] = await Promise.all([
    deps.artifacts.readManifest(subject, artifactId),
    deps.artifacts.readArtifact(subject, artifactId),
  ]);
  const body = ConsolidationOutputSchema.parse(raw);
  const claims = body.claims
    .map((claim, index) => ({ claim, index }))
    .filter(({ claim }) => options.key === undefined || claim.key === options.key);
  const stored = await deps.events.eventsById(subject, [
    ...new Set(claims.flatMap((c) => c.claim.derivedFrom)),
  ]);
  return {
    artifactId,
    status: shownStatus(record),
    inputRoot: manifest.inputRoot,
    model: manifest.modelSnapshot,
    prompt: manifest.promptVersion,
    claims: claims.map(({ claim, index }) => ({
      index,
      claim,
      evidence: claim.derivedFrom.flatMap((id) => {
        const event = stored.get(id)?.event;
        return event ? [evidenceOf(event)] : [];
      }),
    })),
  };
}
