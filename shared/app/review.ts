import { type ChecklistEntry, gateChecklist } from "#domain/gate/index.ts";
import { CUE_CLASS_NAMES, CUE_CLASSES } from "#domain/mentions.ts";
import type { MustPreserveItem } from "#domain/must-preserve.ts";
import type { ConsolidationOutput, SequencedEvent, ValueData } from "#domain/schemas.ts";
import { ConsolidationOutput as ConsolidationOutputSchema } from "#domain/schemas.ts";
import { rawBeforeRecord, rawForRecord } from "#domain/serving.ts";
import { describeValue } from "#domain/values.ts";
import type { ArtifactRecord } from "#ports/artifact-records.ts";
import { PublishRefusedError } from "#ports/errors.ts";
import type { Deps, PublishDeps } from "./deps.ts";
import { type EvidenceEvent, evidenceOf } from "./explain.ts";
import { type PublishOutcome, publish } from "./publish.ts";
import { type Recall, recall } from "./recall.ts";
import { readInputs } from "./snapshot.ts";

/**
 * Shadow review: what a reviewer reads (each SHADOW artifact's must-preserve checklist, with the
 * events behind every item), approval and rejection, and each subject's serving state for the
 * review page. Invariant: approval publishes through the same re-check and compare-and-set as a
 * live publish, the checklist is the gate's own judgement of what keeps each item, and nothing is
 * deleted (a rejected artifact is kept for audit).
 */

export interface ChecklistLine {
  item: string;
  keptBy: string | null;
  evidence: string | null;
  /** The events behind the item as stored: what a reviewer reads to judge it. */
  evidenceEvents: EvidenceEvent[];
}

export interface ShadowReview {
  artifactId: string;
  coversThrough: number;
  checklist: ChecklistLine[];
  /**
   * Selector v3: the inputs' earlier readings (a later reading on the same key and scope holds):
   * valid, never to be served as current; a candidate may restate them with status "earlier".
   */
  earlierReadings: ReviewedReading[];
}

/** An earlier reading as a reviewer reads it: what was read, when, and which reading holds now. */
export interface ReviewedReading {
  eventId: string;
  key: string;
  scope: string;
  reading: string;
  occurredAt: string | null;
  latest: string;
  holds: string;
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
    for (const reading of shadow.earlierReadings)
      lines.push(
        `  earlier reading ${reading.eventId}${reading.occurredAt ? ` (${reading.occurredAt})` : ""}: ${reading.key} @ ${reading.scope} = ${reading.reading}; ${reading.latest}'s ${reading.holds} holds`,
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
    earlierReadings: context.selection.readings.flatMap((readings) =>
      readings.earlier.flatMap((position) =>
        position.holders.map((eventId) => ({
          eventId,
          key: readings.key,
          scope: readings.scope,
          reading: positionText(position),
          occurredAt: byId.get(eventId)?.occurredAt ?? null,
          latest: readings.latest,
          holds: readings.current.map(positionText).join(", "),
        })),
      ),
    ),
  };
}

function positionText(position: { polarity: string; value: ValueData }): string {
  return `${position.polarity === "negated" ? "not " : ""}${describeValue(position.value)}`;
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
