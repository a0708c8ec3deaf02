import { z } from "zod";
import type { ConsolidationOutput } from "../schemas.ts";
import { compareStrings, isOpenTask } from "../selector.ts";
import type { GateContext } from "./context.ts";

/** The gate's report: its stable reason codes (CONTRACT §4, §4b), reasons, stats, compact form. */

export const GATE_REASON_CODES = [
  "schema-invalid",
  "missing",
  "value-changed",
  "polarity-flipped",
  "provenance-missing",
  "unsupported-claim",
  "unknown-source",
  "conflict-missing",
  "conflict-invented",
  "conflict-settled",
  "pending-missing",
  "summary-foreign-token",
  "summary-unsupported",
  "over-budget",
  "outdated-reading",
] as const;
export type GateReasonCode = (typeof GATE_REASON_CODES)[number];

/** The gate's report, as the contract prints it with --json; a schema, since stores keep it. */
export const GateReason = z.object({
  code: z.enum(GATE_REASON_CODES),
  key: z.string().nullable(),
  scope: z.string().nullable(),
  eventId: z.string().nullable(),
  detail: z.string(),
});
export type GateReason = z.infer<typeof GateReason>;

const count = z.number().int().nonnegative();
export const GateStats = z.object({
  events: count,
  validInputs: count,
  mustPreserve: count,
  conflicts: count,
  openTasks: count,
  claims: count,
  pending: count,
  coldRefs: count,
  tokens: count.nullable(),
  budget: count.nullable(),
});
export type GateStats = z.infer<typeof GateStats>;

/**
 * What the gate points a reader at without refusing: `low-support` summary sentences (CONTRACT
 * §4b), `judge-unclear` texts a model judge could not decide, thin restatements, and summary
 * phrases that may bend a source (a dropped cue, a conflict settled, a task called done, a value
 * moved), and texts that name anew the moment a source's time word pointed back to.
 */
export const GateWarning = z.object({
  code: z.enum([
    "low-support",
    "judge-unclear",
    "thin-restatement",
    "summary-cue-dropped",
    "summary-conflict-settled",
    "summary-task-done",
    "summary-value-moved",
    "time-anchor-renamed",
  ]),
  detail: z.string(),
});
export type GateWarning = z.infer<typeof GateWarning>;

export const GateReport = z.object({
  verdict: z.enum(["pass", "reject"]),
  reasons: z.array(GateReason),
  warnings: z.array(GateWarning).optional(),
  stats: GateStats,
  /** A compact report (an artifact record's copy) lists the first reasons and counts the rest. */
  omittedReasons: count.optional(),
  reasonCounts: z.partialRecord(z.enum(GATE_REASON_CODES), count).optional(),
});
export type GateReport = z.infer<typeof GateReport>;

/** A generation's refused attempts before its last (gate-guided repair), kept for audit. */
export const RefusedAttempts = z.array(z.object({ answer: z.unknown(), report: GateReport }));
export type RefusedAttempts = z.infer<typeof RefusedAttempts>;

/** How many reasons an artifact record keeps; the full report is stored beside the artifact. */
export const RECORD_REASONS = 25;

/**
 * The report as a record keeps it: the verdict, the stats, the first `limit` reasons and a count
 * per code. A rejected answer on a big log can hold thousands of reasons; a DynamoDB item cannot.
 */
export function compactReport(report: GateReport, limit = RECORD_REASONS): GateReport {
  if (report.reasons.length <= limit) return report;
  return {
    ...report,
    reasons: report.reasons.slice(0, limit).map((r) => ({ ...r, detail: r.detail.slice(0, 500) })),
    omittedReasons: report.reasons.length - limit,
    reasonCounts: countReasons(report.reasons),
  };
}

/** How many reasons of each code a report holds. */
export function countReasons(reasons: readonly GateReason[]): Partial<Record<GateReasonCode, number>> {
  const counts: Partial<Record<GateReasonCode, number>> = {};
  for (const reason of reasons) counts[reason.code] = (counts[reason.code] ?? 0) + 1;
  return counts;
}

export function reason(
  code: GateReasonCode,
  key: string | null,
  scope: string | null,
  eventId: string | null,
  detail: string,
): GateReason {
  return { code, key, scope, eventId, detail };
}

/** A text cut to 60 characters for a reason's detail. */
export function shorten(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Reasons deduplicated and in a stable order (code, event, key, scope, detail), with the stats. */
export function report(
  context: GateContext,
  reasons: GateReason[],
  output: ConsolidationOutput | null,
  options: { budget?: number },
  tokens: number | null = null,
  warnings: readonly GateWarning[] = [],
): GateReport {
  const unique = new Map<string, GateReason>();
  for (const item of reasons) {
    const id = `${item.code}\u0000${item.eventId}\u0000${item.key}\u0000${item.scope}\u0000${item.detail}`;
    if (!unique.has(id)) unique.set(id, item);
  }
  const sorted = [...unique.values()].sort(
    (a, b) =>
      GATE_REASON_CODES.indexOf(a.code) - GATE_REASON_CODES.indexOf(b.code) ||
      compareStrings(a.eventId ?? "", b.eventId ?? "") ||
      compareStrings(a.key ?? "", b.key ?? "") ||
      compareStrings(a.scope ?? "", b.scope ?? "") ||
      compareStrings(a.detail, b.detail),
  );
  return {
    verdict: sorted.length === 0 ? "pass" : "reject",
    reasons: sorted,
    ...(warnings.length > 0 ? { warnings: [...warnings] } : {}),
    stats: {
      events: context.eventCount,
      validInputs: context.selection.validInputs.length,
      mustPreserve: context.mustPreserve.length,
      conflicts: context.selection.conflicts.length,
      openTasks: context.selection.validInputs.filter(isOpenTask).length,
      claims: output?.claims.length ?? 0,
      pending: output?.pending.length ?? 0,
      coldRefs: output?.coldRefs.length ?? 0,
      tokens,
      budget: options.budget ?? null,
    },
  };
}
