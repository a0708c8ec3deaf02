import { uncitedInputs } from "./cold-layer.ts";
import { positionKey } from "./conflicts.ts";
import { budgetTokens, type GateContext } from "./gate/index.ts";
import { isMustPreserveAssertion, isWholeEvent, mustRestateText } from "./must-preserve.ts";
import type { Claim, ConsolidationOutput, Polarity, SequencedEvent, ValueData } from "./schemas.ts";
import { compareStrings, isOpenTask, isTextOnly, keyScope } from "./selector.ts";
import { canonicalValue } from "./values.ts";

/**
 * The deterministic consolidator: the embedded default model. It restates every assertion as a
 * claim (identical statements merged, each naming all its sources; an earlier reading as one, with
 * its date), every contributing free-text event verbatim, every open task as a pending item, and
 * every conflict as contested claims plus the conflict itself. It never picks a winner and never truncates: when the token budget is
 * tight, it leaves the lowest-value inputs (notes, done tasks, statements with nothing
 * must-preserve) in the cold layer, whole.
 */
export const DETERMINISTIC_MODEL = "deterministic-v1";

interface ClaimDraft {
  claim: Claim;
  /** Whether a must-preserve item depends on this claim (then it is never left out). */
  required: boolean;
  /** Lower is dropped first when over budget. */
  value: number;
  /** A restatement of a free-text event (a language model may word it); otherwise an assertion's. */
  fromText: boolean;
}

export function consolidate(context: GateContext, options: { budget?: number } = {}): ConsolidationOutput {
  const { selection } = context;
  const drafts = claimDrafts(context);
  const pending = selection.validInputs
    .filter(isOpenTask)
    .map((task) => ({ text: task.text ?? "", derivedFrom: [task.eventId] }));
  const unresolvedConflicts = selection.conflicts.map((conflict) => ({
    key: conflict.key,
    scope: conflict.scope,
    members: conflict.members,
  }));
  const required = drafts.filter((draft) => draft.required);
  const optional = drafts.filter((draft) => !draft.required).sort((a, b) => b.value - a.value);

  const build = (keptOptional: number): ConsolidationOutput => {
    const claims = [...required, ...optional.slice(0, keptOptional)].map((draft) => draft.claim);
    return {
      claims,
      pending,
      unresolvedConflicts,
      coldRefs: uncitedInputs({ claims, pending }, selection.validInputs).map((event) => event.eventId),
      summary: summaryText(claims, pending.length > 0, unresolvedConflicts.length > 0),
    };
  };
  if (options.budget === undefined || budgetTokens(build(optional.length)) <= options.budget)
    return build(optional.length);
  // Keep as many of the most valuable optional claims as fit: tokens grow with each claim kept.
  let low = 0;
  let high = optional.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (budgetTokens(build(middle)) <= options.budget) low = middle;
    else high = middle - 1;
  }
  return build(low);
}

/**
 * Every assertion restated exactly, identical statements merged and contested positions marked:
 * the part of a consolidation that needs no wording (segmented generation writes it this way and
 * asks a model only for the free-text events).
 */
export function assertionClaims(context: GateContext): Claim[] {
  return claimDrafts(context)
    .filter((draft) => !draft.fromText)
    .map((draft) => draft.claim);
}

function claimDrafts(context: GateContext): ClaimDraft[] {
  const byTuple = new Map<string, ClaimDraft>();
  const drafts: ClaimDraft[] = [];
  for (const event of context.selection.validInputs) {
    const eventDrafts: ClaimDraft[] = [];
    for (const assertion of event.assertions ?? []) {
      const valueKey = canonicalValue(assertion.value);
      // An earlier reading (selector v3) is restated as one, with the date it was read: never as
      // current, and one claim per reading (each has its own date).
      const earlier =
        context.readingsByKeyScope
          .get(assertion.key, assertion.scope)
          ?.earlier.has(positionKey(assertion.polarity, valueKey)) ?? false;
      const tuple = `${keyScope(assertion.key, assertion.scope)}\u0000${assertion.polarity}\u0000${valueKey}${earlier ? `\u0000${event.eventId}` : ""}`;
      // An earlier reading is never must-preserve, but a whole event holding one is still restated.
      const required = earlier ? isWholeEvent(event) : isMustPreserveAssertion(event, assertion);
      const existing = byTuple.get(tuple);
      if (existing) {
        eventDrafts.push(existing);
        existing.claim.derivedFrom.push(event.eventId);
        existing.required ||= required;
        existing.value = Math.max(existing.value, eventValue(event, required));
        continue;
      }
      // Only a contradicting position is contested; one that contradicts nothing is settled.
      const contested =
        context.conflictsByKeyScope
          .get(assertion.key, assertion.scope)
          ?.contradicting.has(positionKey(assertion.polarity, valueKey)) ?? false;
      const draft: ClaimDraft = {
        claim: earlier
          ? earlierReadingClaim(assertion, event)
          : structuredClaim(
              assertion.key,
              assertion.scope,
              assertion.value,
              assertion.polarity,
              contested,
              event.eventId,
            ),
        required: required || contested,
        value: eventValue(event, required),
        fromText: false,
      };
      byTuple.set(tuple, draft);
      drafts.push(draft);
      eventDrafts.push(draft);
    }
    keepWholeEventText(event, eventDrafts);
    if (isTextOnly(event) && !isOpenTask(event) && event.kind !== "note" && event.kind !== "task") {
      drafts.push({
        claim: {
          key: `memory:${event.eventId}`,
          scope: "global",
          value: { text: event.text ?? "" },
          polarity: "affirmed",
          status: "settled",
          derivedFrom: [event.eventId],
        },
        required: isWholeEvent(event) || mustRestateText(event),
        value: eventValue(event, false),
        fromText: true,
      });
    }
  }
  return drafts;
}

/**
 * A constraint, permission, decision or open task with assertions keeps what its text says beyond
 * them (CONTRACT §4b "Whole-event text"): its text rides, verbatim, on the first of its claims that
 * has none. When every claim it makes already carries an earlier event's text (they assert the
 * same), its text follows that on the first of them, which names both events.
 */
function keepWholeEventText(event: SequencedEvent, eventDrafts: readonly ClaimDraft[]): void {
  if (!(isWholeEvent(event) || isOpenTask(event)) || !event.text) return;
  const bare = eventDrafts.find((draft) => draft.claim.text === undefined);
  if (bare) bare.claim.text = event.text;
  else if (eventDrafts[0]) eventDrafts[0].claim.text = `${eventDrafts[0].claim.text} ${event.text}`;
}

function structuredClaim(
  key: string,
  scope: string,
  value: ValueData,
  polarity: Polarity,
  contested: boolean,
  eventId: string,
): Claim {
  return { key, scope, value, polarity, status: contested ? "contested" : "settled", derivedFrom: [eventId] };
}

/** An earlier reading restated as one: status earlier, dated by the day its event occurred. */
function earlierReadingClaim(
  assertion: { key: string; scope: string; value: ValueData; polarity: Polarity },
  event: SequencedEvent,
): Claim {
  return {
    key: assertion.key,
    scope: assertion.scope,
    value: assertion.value,
    polarity: assertion.polarity,
    status: "earlier",
    ...(event.occurredAt === undefined ? {} : { asOf: event.occurredAt.slice(0, 10) }),
    derivedFrom: [event.eventId],
  };
}

/** How much an input is worth keeping in the summary; notes and tool-level facts go cold first. */
function eventValue(event: SequencedEvent, required: boolean): number {
  if (required) return 100;
  const byKind: Record<string, number> = {
    decision: 60,
    constraint: 60,
    permission: 60,
    preference: 50,
    fact: 40,
    task: 30,
    note: 10,
  };
  const trust: Record<string, number> = { verified: 3, user: 2, tool: 1, untrusted: 0 };
  return (byKind[event.kind] ?? 20) + (trust[event.trust] ?? 0);
}

/**
 * A short natural-language summary that names what the claims cover. It quotes keys only, never
 * invents numbers (a count would be a number no input holds), and says the rest in framing words
 * only, so every sentence is supported by the inputs (no low-support warning).
 */
function summaryText(claims: readonly Claim[], hasPending: boolean, hasConflicts: boolean): string {
  const settled = uniqueSorted(
    claims.filter((c) => c.status === "settled" && !c.key.startsWith("memory:")).map((c) => c.key),
  );
  const contested = uniqueSorted(claims.filter((c) => c.status === "contested").map((c) => c.key));
  const earlier = uniqueSorted(claims.filter((c) => c.status === "earlier").map((c) => c.key));
  const parts: string[] = [];
  if (settled.length > 0) parts.push(`Settled: ${settled.join(", ")}.`);
  if (contested.length > 0) parts.push(`Contested, not decided here: ${contested.join(", ")}.`);
  if (earlier.length > 0) parts.push(`Earlier, not current: ${earlier.join(", ")}.`);
  if (claims.some((c) => c.key.startsWith("memory:"))) parts.push("Memory notes are kept as stated.");
  if (hasPending) parts.push("Open tasks remain pending.");
  if (!hasConflicts && contested.length === 0 && settled.length === 0 && !hasPending)
    parts.push("Nothing to keep yet.");
  return parts.join(" ");
}

/** At most this many keys are named per list: the summary stays a summary at any size. */
const KEYS_NAMED = 12;

function uniqueSorted(values: readonly string[]): string[] {
  const unique = [...new Set(values)].sort(compareStrings);
  return unique.length <= KEYS_NAMED ? unique : [...unique.slice(0, KEYS_NAMED), "and others"];
}
