import { type ChecklistEntry, gateChecklist } from "#domain/gate.ts";
import { CUE_CLASS_NAMES, CUE_CLASSES } from "#domain/mentions.ts";
import type { MustPreserveItem } from "#domain/must-preserve.ts";
import type { ConsolidationOutput, SequencedEvent, Snapshot } from "#domain/schemas.ts";
import { ConsolidationOutput as ConsolidationOutputSchema } from "#domain/schemas.ts";
import { rawBeforeRecord, rawForRecord } from "#domain/serving.ts";
import { SELECTOR_VERSION, selectorNamed } from "#domain/validity.ts";
import { describeValue } from "#domain/values.ts";
import { NotFoundError, PublishRefusedError } from "#ports/errors.ts";
import type { ArtifactRecord } from "#ports/store.ts";
import { shownStatus } from "#ports/store.ts";
import type { Deps, PublishDeps, PublishOutcome, Recall, RunOutcome } from "./pipeline.ts";
import { publish, readInputs, recall, run, takeSnapshot } from "./pipeline.ts";

/**
 * Release operations: shadow review and approval, and forward recovery. Each goes through the same
 * compare-and-set as a live publish; none deletes anything.
 */

export interface ChecklistLine {
  item: string;
  keptBy: string | null;
  evidence: string | null;
  /** The events behind the item as stored: what a reviewer reads to judge it. */
  evidenceEvents: EvidenceEvent[];
}

export type EvidenceEvent = Pick<
  SequencedEvent,
  "eventId" | "sequence" | "kind" | "text" | "trust" | "source"
>;

export interface ShadowReview {
  artifactId: string;
  coversThrough: number;
  checklist: ChecklistLine[];
}

export interface Review {
  current: Recall;
  shadows: ShadowReview[];
  text: string;
}

/** The SHADOW artifacts beside the current summary, each with its must-preserve checklist. */
export async function review(
  deps: Pick<Deps, "events" | "artifacts" | "settings">,
  subject: string,
): Promise<Review> {
  const current = await recall(deps, subject);
  const shadows: ShadowReview[] = [];
  for (const record of (await deps.artifacts.listRecords(subject)).filter(
    (r) => r.status === "SHADOW" && !r.stale,
  ))
    shadows.push(await reviewOne(deps, record));
  const lines = [
    `current: ${current.mode === "summary" ? `${current.artifactId} (${current.reason})` : `raw (${current.reason})`}`,
  ];
  if (shadows.length === 0) lines.push("no SHADOW artifacts await review");
  for (const shadow of shadows) {
    lines.push(`SHADOW ${shadow.artifactId} covers ${shadow.coversThrough}:`);
    for (const line of shadow.checklist)
      lines.push(
        `  [${line.keptBy ? "x" : " "}] ${line.item}  kept by ${line.keptBy ?? "NOTHING"}  evidence ${line.evidence ?? "-"}`,
      );
    lines.push(`  approve with: memgate approve ${shadow.artifactId}`);
  }
  return { current, shadows, text: lines.join("\n") };
}

async function reviewOne(
  deps: Pick<Deps, "events" | "artifacts">,
  record: ArtifactRecord,
): Promise<ShadowReview> {
  const { context } = await readInputs(deps, record.subject, record.coversThrough);
  const body = ConsolidationOutputSchema.parse(
    await deps.artifacts.readArtifact(record.subject, record.artifactId),
  );
  // The gate's own judgement of what keeps each item: never a second notion of "kept".
  const { checklist } = gateChecklist(context, body);
  const byId = new Map(context.selection.validInputs.map((event) => [event.eventId, event]));
  return {
    artifactId: record.artifactId,
    coversThrough: record.coversThrough,
    checklist: checklist.map((entry) => checklistLine(entry, body, byId)),
  };
}

function checklistLine(
  { item, keptBy }: ChecklistEntry,
  body: ConsolidationOutput,
  events: ReadonlyMap<string, SequencedEvent>,
): ChecklistLine {
  const ids = item.kind === "conflict" ? item.members : [item.eventId];
  return {
    item: describeItem(item),
    keptBy: keptBy === null ? null : `${keptBy}: ${describeKeeper(keptBy, body)}`,
    evidence: ids.join(", "),
    evidenceEvents: ids.flatMap((id) => {
      const event = events.get(id);
      return event ? [evidenceOf(event)] : [];
    }),
  };
}

function evidenceOf(event: SequencedEvent): EvidenceEvent {
  return {
    eventId: event.eventId,
    sequence: event.sequence,
    kind: event.kind,
    text: event.text,
    trust: event.trust,
    source: event.source,
  };
}

/** A reviewer's no: a SHADOW artifact becomes REJECTED (kept for audit, never published). */
export async function reject(
  deps: Pick<Deps, "artifacts">,
  subject: string,
  artifactId: string,
): Promise<void> {
  if (!(await deps.artifacts.transition(subject, artifactId, ["SHADOW"], "REJECTED")))
    throw new PublishRefusedError(
      "artifact-not-publishable",
      `${artifactId} is not a SHADOW artifact awaiting review`,
      {
        what: "reject",
      },
    );
}

function describeItem(item: MustPreserveItem): string {
  switch (item.kind) {
    case "assertion":
      return `${item.key} = ${describeValue(item.value)} (${item.polarity})`;
    case "pending":
      return `open task: ${item.text}`;
    case "conflict":
      return `conflict on ${item.key} between ${item.members.join(", ")}`;
    case "event":
      return `${item.eventKind} ${item.eventId} (as a whole)`;
    case "text":
      return `free text of ${item.eventId}: ${[
        ...item.mentions.map((m) => m.raw),
        ...CUE_CLASSES.filter((cls) => item.cues[cls] > 0).map(
          (cls) => `${item.cues[cls]} ${CUE_CLASS_NAMES[cls]} cue(s)`,
        ),
      ].join(", ")}`;
  }
}

/** What the candidate says at a location the gate named (`claims[3]`, `pending[0]` …). */
function describeKeeper(location: string, body: ConsolidationOutput): string {
  const match = /^(claims|pending|unresolvedConflicts)\[(\d+)\]$/.exec(location);
  const index = Number(match?.[2]);
  if (match?.[1] === "claims") {
    const claim = body.claims[index];
    return claim ? `${claim.key} = ${describeValue(claim.value)}` : location;
  }
  if (match?.[1] === "pending") return `"${body.pending[index]?.text ?? ""}"`;
  if (match?.[1] === "unresolvedConflicts") return "listed unresolved";
  return location;
}

/** Publishes a reviewed SHADOW artifact through the same compare-and-set. */
export function approve(deps: PublishDeps, artifactId: string): Promise<PublishOutcome> {
  return publish(deps, artifactId, { approve: true });
}

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

export interface SubjectStatus {
  subject: string;
  highWater: number;
  inputEpoch: number;
  /** What recall serves now, and why when raw. */
  serving: "summary" | "raw";
  reason: string | null;
  artifactId: string | null;
  /** SHADOW artifacts awaiting review. */
  shadows: string[];
}

/** Each subject's state for the review page: served summary or raw (and why), shadows waiting. */
export async function subjectStatuses(
  deps: Pick<Deps, "events" | "artifacts" | "settings">,
  subjects: readonly string[],
): Promise<SubjectStatus[]> {
  const settings = await deps.settings.settings();
  return Promise.all(
    subjects.map(async (subject) => {
      const snapshot = await deps.events.snapshot(subject);
      const records = await deps.artifacts.listRecords(subject);
      const alias = snapshot.expectedAlias;
      const reason =
        rawBeforeRecord(settings, snapshot) ??
        (alias
          ? rawForRecord(
              alias.parentArtifactId,
              records.find((r) => r.artifactId === alias.parentArtifactId) ?? null,
            )
          : null);
      return {
        subject,
        highWater: snapshot.highWater,
        inputEpoch: snapshot.inputEpoch,
        serving: reason === null ? "summary" : "raw",
        reason,
        artifactId: alias?.parentArtifactId ?? null,
        shadows: records.filter((r) => r.status === "SHADOW" && !r.stale).map((r) => r.artifactId),
      };
    }),
  );
}
