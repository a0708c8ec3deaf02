import type { ConsolidationOutput, SequencedEvent, TrustPolicy } from "../schemas.ts";
import { ConsolidationOutput as ConsolidationOutputSchema, describeIssue } from "../schemas.ts";
import { checkEventLog, selectInputs } from "../selector.ts";
import { parseStrictJson } from "../strict-json.ts";
import { checkBudget } from "./budget-check.ts";
import { CandidateCheck, type GateOptions } from "./candidate-check.ts";
import { type ChecklistEntry, checklistOf } from "./checklist.ts";
import { buildGateContext, type GateContext } from "./context.ts";
import { type GateReason, type GateReport, reason, report } from "./report.ts";
import type { UndecidedText } from "./text-support-check.ts";

/**
 * The loss gate (CONTRACT §4, §4a, §4b), the only module callers import from this folder.
 * Deterministic: parse the candidate, then check every claim, pending item, cold reference,
 * restatement, must-preserve item, conflict, foreign token and text against the snapshot's context
 * (`buildGateContext`, built once per snapshot), and report every applicable reason with its
 * stable code. Each check family is a module beside this one; `candidate-check.ts` runs them.
 */

export { budgetTokens } from "./budget-check.ts";
export type { GateOptions } from "./candidate-check.ts";
export type { ChecklistEntry } from "./checklist.ts";
export { buildGateContext, type GateContext } from "./context.ts";
export {
  compactReport,
  countReasons,
  GateReason,
  type GateReasonCode,
  GateReport,
  GateWarning,
  RefusedAttempts,
  reason,
} from "./report.ts";
export type { UndecidedText } from "./text-support-check.ts";
export { type OldDates, wholeEventKeeps } from "./whole-event-check.ts";

/**
 * The gate's full answer on one candidate: the report and, from the same check, what it read: the
 * parsed candidate, what keeps each must-preserve item, and the texts a model judge should weigh.
 */
export interface Assessment {
  report: GateReport;
  /** The candidate as the schema parsed it; null when it is not valid JSON or not of the schema. */
  output: ConsolidationOutput | null;
  /** What keeps each must-preserve item, from the same check (null when it never reached the checks). */
  checklist: (() => ChecklistEntry[]) | null;
  /** Texts the deterministic rules passed without full support: for a model judge to weigh. */
  undecided: UndecidedText[];
}

/** Runs the gate on a candidate given as the model's raw text (it may be truncated or not JSON). */
export function gateCandidateText(
  context: GateContext,
  candidateText: string,
  options: GateOptions = {},
): GateReport {
  return assessCandidateText(context, candidateText, options).report;
}

/** gateCandidateText, keeping the parsed candidate and its checklist for the caller (one check). */
export function assessCandidateText(
  context: GateContext,
  candidateText: string,
  options: GateOptions = {},
): Assessment {
  const parsed = parseStrictJson(candidateText);
  if (!parsed.ok)
    return {
      report: report(
        context,
        [reason("schema-invalid", null, null, null, `candidate is ${parsed.problem}`)],
        null,
        options,
      ),
      output: null,
      checklist: null,
      undecided: [],
    };
  return assessCandidate(context, parsed.value, options);
}

/** Runs the gate on a candidate already parsed from JSON (not yet checked against the schema). */
export function gateCandidate(context: GateContext, raw: unknown, options: GateOptions = {}): GateReport {
  return assessCandidate(context, raw, options).report;
}

/** gateCandidate, keeping the parsed candidate, its checklist and the undecided texts (one check). */
export function assessCandidate(context: GateContext, raw: unknown, options: GateOptions = {}): Assessment {
  const parsed = ConsolidationOutputSchema.safeParse(raw);
  if (!parsed.success) {
    const reasons = parsed.error.issues.map((issue) =>
      reason("schema-invalid", null, null, null, describeIssue(issue, "candidate")),
    );
    return { report: report(context, reasons, null, options), output: null, checklist: null, undecided: [] };
  }
  const check = new CandidateCheck(context, parsed.data, options);
  const reasons = check.run();
  const tokens = options.budget === undefined ? null : checkBudget(raw, options.budget, reasons);
  return {
    report: report(context, reasons, parsed.data, options, tokens, check.warnings),
    output: parsed.data,
    checklist: () => checklistOf(check),
    undecided: check.undecided,
  };
}

/** Every reason a schema-valid output fails the gate for (empty when it keeps everything). */
export function checkConsolidationOutput(context: GateContext, output: ConsolidationOutput): GateReason[] {
  return new CandidateCheck(context, output).run();
}

/** The gate's reasons and, from the same check, what keeps each must-preserve item. */
export function gateChecklist(
  context: GateContext,
  output: ConsolidationOutput,
): { reasons: GateReason[]; checklist: ChecklistEntry[] } {
  const check = new CandidateCheck(context, output);
  const reasons = check.run();
  return { reasons, checklist: checklistOf(check) };
}

/**
 * The offline gate in one call: check the log, select its valid inputs up to its last sequence
 * (or `highWater`), index them and check the candidate text. Throws EventLogError on a bad log.
 */
export function gateEventLog(
  events: readonly SequencedEvent[],
  policy: TrustPolicy,
  candidateText: string,
  options: GateOptions & { highWater?: number } = {},
): GateReport {
  const log = checkEventLog(events);
  const highWater = options.highWater ?? log.reduce((max, event) => Math.max(max, event.sequence), 0);
  const context = buildGateContext(selectInputs(log, highWater, policy), log.length);
  return gateCandidateText(context, candidateText, options);
}
