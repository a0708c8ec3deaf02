import type { MustPreserveItem } from "../domain/must-preserve.ts";
import type { Claim, ConsolidationOutput } from "../domain/schemas.ts";
import { ConsolidationOutput as ConsolidationOutputSchema } from "../domain/schemas.ts";
import { canonicalValue, describeValue } from "../domain/values.ts";
import type { ArtifactRecord } from "../ports/store.ts";
import type { Deps, PublishOutcome, Recall, RunOutcome } from "./pipeline.ts";
import { publish, readInputs, recall, run, takeSnapshot } from "./pipeline.ts";

/**
 * Release operations: shadow review and approval, and forward recovery. Each goes through the same
 * compare-and-set as a live publish; none deletes anything.
 */

export interface ChecklistLine {
  item: string;
  keptBy: string | null;
  evidence: string | null;
}

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
export async function review(deps: Deps, subject: string): Promise<Review> {
  const current = await recall(deps, subject);
  const shadows: ShadowReview[] = [];
  for (const record of (await deps.artifacts.listRecords(subject)).filter((r) => r.status === "SHADOW"))
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

async function reviewOne(deps: Deps, record: ArtifactRecord): Promise<ShadowReview> {
  const { context } = await readInputs(deps, record.subject, record.coversThrough);
  const body = ConsolidationOutputSchema.parse(
    await deps.artifacts.readArtifact(record.subject, record.artifactId),
  );
  return {
    artifactId: record.artifactId,
    coversThrough: record.coversThrough,
    checklist: context.mustPreserve.map((item) => checklistLine(item, body)),
  };
}

function checklistLine(item: MustPreserveItem, body: ConsolidationOutput): ChecklistLine {
  const claimLabel = (claim: Claim) => `${claim.key} = ${describeValue(claim.value)}`;
  switch (item.kind) {
    case "assertion": {
      const claim = body.claims.find(
        (c) =>
          c.derivedFrom.includes(item.eventId) &&
          c.key === item.key &&
          c.scope === item.scope &&
          c.polarity === item.polarity &&
          canonicalValue(c.value) === item.valueKey,
      );
      return {
        item: `${item.key} = ${describeValue(item.value)} (${item.polarity})`,
        keptBy: claim ? claimLabel(claim) : null,
        evidence: item.eventId,
      };
    }
    case "pending": {
      const pending = body.pending.find((p) => p.derivedFrom.includes(item.eventId));
      return {
        item: `open task: ${item.text}`,
        keptBy: pending ? `pending "${pending.text}"` : null,
        evidence: item.eventId,
      };
    }
    case "conflict": {
      const listed = body.unresolvedConflicts.some((c) => c.key === item.key && c.scope === item.scope);
      return {
        item: `conflict on ${item.key} between ${item.members.join(", ")}`,
        keptBy: listed ? "unresolvedConflicts" : null,
        evidence: item.members.join(", "),
      };
    }
    case "text": {
      const claim = body.claims.find((c) => c.derivedFrom.includes(item.eventId));
      return {
        item: `free text of ${item.eventId}: ${item.mentions.map((m) => m.raw).join(", ")}${item.negationCues ? `, ${item.negationCues} negation(s)` : ""}`,
        keptBy: claim ? claimLabel(claim) : null,
        evidence: item.eventId,
      };
    }
  }
}

/** Publishes a reviewed SHADOW artifact through the same compare-and-set. */
export function approve(deps: Deps, artifactId: string): Promise<PublishOutcome> {
  return publish(deps, artifactId, { approve: true });
}

/**
 * Forward recovery: a new artifact from the current valid inputs (coverage at least the alias's,
 * since a snapshot never goes below it), with the selector, prompt and model the operator chose,
 * rolled forward through the same CAS. Nothing is deleted; the bad summary is never an input.
 */
export async function recover(deps: Deps, subject: string): Promise<RunOutcome> {
  return run(deps, await takeSnapshot(deps, subject), { approve: true });
}
