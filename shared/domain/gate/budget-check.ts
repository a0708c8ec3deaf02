import { canonicalJson } from "../hashing.ts";
import { countTokens } from "../tokens.ts";
import { type GateReason, reason } from "./report.ts";

/** Tokens of the candidate as the budget counts them (CONTRACT §4a): canonical JSON without coldRefs. */
export function budgetTokens(raw: unknown): number {
  const { coldRefs: _coldRefs, ...rest } = raw as Record<string, unknown>;
  return countTokens(canonicalJson(rest));
}

/** Counts the candidate's tokens as written, adding over-budget to `reasons` past the budget. */
export function checkBudget(raw: unknown, budget: number, reasons: GateReason[]): number {
  const tokens = budgetTokens(raw);
  if (tokens > budget)
    reasons.push(
      reason(
        "over-budget",
        null,
        null,
        null,
        `candidate is ${tokens} tokens, budget is ${budget}; move low-value inputs to coldRefs`,
      ),
    );
  return tokens;
}
