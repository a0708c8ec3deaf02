import { consolidate } from "#domain/consolidator.ts";
import { buildGateContext, type GateContext, gateCandidate } from "#domain/gate/index.ts";
import type { Claim, ConsolidationOutput, SequencedEvent } from "#domain/schemas.ts";
import { DEFAULT_TRUST_POLICY, MemoryEvent } from "#domain/schemas.ts";
import { seededRandom } from "#domain/seeded-random.ts";
import { selectInputs } from "#domain/selector.ts";

/**
 * The gate's mutation score: synthetic subjects with known content, their honest consolidation,
 * and one meaning change at a time of every kind the gate claims to catch. A kind's score is the
 * share of applicable changes the gate refuses; the honest outputs must all pass.
 */

const TEAMS = ["payments", "search", "billing", "mobile", "infra", "growth"];
const ITEMS = ["backups", "releases", "invoices", "deploys", "reports", "tickets"];
const VENDORS = ["vendor:acme", "vendor:globex", "vendor:initech", "vendor:umbrella"];
const CURRENCIES = ["USD", "EUR", "GBP"];

/** One synthetic subject's log: structured facts, free text with cues, a constraint, a task, a conflict. */
export function syntheticLog(random: () => number, index: number): SequencedEvent[] {
  const pick = <T>(values: readonly T[]) => values[Math.floor(random() * values.length)] as T;
  const team = pick(TEAMS);
  const item = pick(ITEMS);
  const amount = 1000 + Math.floor(random() * 90) * 250;
  const currency = pick(CURRENCIES);
  const day = 1 + Math.floor(random() * 28);
  const date = `2026-12-${String(day).padStart(2, "0")}`;
  const vendor = pick(VENDORS);
  const reviewers = 2 + Math.floor(random() * 4);
  const retention = 7 + Math.floor(random() * 80);
  const events: Array<Record<string, unknown>> = [
    {
      eventId: `s${index}-budget`,
      kind: "fact",
      text: `The ${team} budget is ${amount.toLocaleString("en-US")} ${currency}.`,
      assertions: [
        {
          key: `${team}/budget`,
          value: { quantity: String(amount), unit: currency },
          polarity: "affirmed",
          scope: `team:${team}`,
        },
      ],
    },
    {
      eventId: `s${index}-launch`,
      kind: "decision",
      text: `The ${team} launch is on ${date}.`,
      assertions: [{ key: `${team}/launch`, value: { date }, polarity: "affirmed", scope: `team:${team}` }],
    },
    {
      eventId: `s${index}-vendor`,
      kind: "constraint",
      text: `Never use ${vendor} for ${team}.`,
      assertions: [
        { key: `${team}/vendor`, value: { entity: vendor }, polarity: "negated", scope: `team:${team}` },
      ],
    },
    {
      eventId: `s${index}-rule`,
      kind: "fact",
      text: `All ${item} must get at least ${reviewers} reviewers.`,
    },
    {
      eventId: `s${index}-keep`,
      kind: "fact",
      text: `${item} are kept ${retention} days and never deleted early.`,
    },
    {
      eventId: `s${index}-zh`,
      kind: "fact",
      text: `${team}项目必须在${reviewers}天内完成，预算不超过${amount}元。`,
    },
    { eventId: `s${index}-task`, kind: "task", text: `Send the ${team} report by ${date}.` },
    {
      eventId: `s${index}-owner-a`,
      kind: "fact",
      text: `The ${item} owner is alex.`,
      assertions: [{ key: `${item}/owner`, value: { text: "alex" }, polarity: "affirmed", scope: "global" }],
    },
    {
      eventId: `s${index}-owner-b`,
      kind: "fact",
      text: `The ${item} owner is sam.`,
      assertions: [{ key: `${item}/owner`, value: { text: "sam" }, polarity: "affirmed", scope: "global" }],
    },
    { eventId: `s${index}-note`, kind: "note", text: "Had coffee with the team." },
  ];
  return events.map((event, position) => ({ ...MemoryEvent.parse(event), sequence: position + 1 }));
}

export function contextOfLog(events: readonly SequencedEvent[]): GateContext {
  return buildGateContext(selectInputs([...events], events.length, DEFAULT_TRUST_POLICY), events.length);
}

type Mutator = (output: ConsolidationOutput, context: GateContext) => ConsolidationOutput | null;

const clone = (output: ConsolidationOutput): ConsolidationOutput => JSON.parse(JSON.stringify(output));

/** Changes the first claim that `pick` accepts with `change`; null when none applies. */
function changeClaim(
  output: ConsolidationOutput,
  pick: (claim: Claim) => boolean,
  change: (claim: Claim) => Claim | null,
): ConsolidationOutput | null {
  const next = clone(output);
  const index = next.claims.findIndex(pick);
  if (index < 0) return null;
  const changed = change(next.claims[index] as Claim);
  if (changed === null) return null;
  next.claims[index] = changed;
  return next;
}

const textClaim = (claim: Claim) => "text" in claim.value && claim.key.startsWith("memory:");
/** Replaces the first match of `from` in a free-text claim (null when no free text holds it). */
const rewrite =
  (from: RegExp, to: string): Mutator =>
  (output) =>
    changeClaim(
      output,
      (claim) => textClaim(claim) && from.test((claim.value as { text: string }).text),
      (claim) => ({ ...claim, value: { text: (claim.value as { text: string }).text.replace(from, to) } }),
    );

/** Every kind of meaning change the gate claims to catch (CONTRACT §4, §4a, §4b). */
export const MUTATIONS: Record<string, Mutator> = {
  polarity: (output) =>
    changeClaim(
      output,
      (claim) => !claim.key.startsWith("memory:") && claim.status === "settled",
      (claim) => ({ ...claim, polarity: claim.polarity === "affirmed" ? "negated" : "affirmed" }),
    ),
  number: (output) =>
    changeClaim(
      output,
      (claim) => "quantity" in claim.value,
      (claim) => {
        const value = claim.value as { quantity: string; unit?: string };
        return { ...claim, value: { ...value, quantity: String(Number(value.quantity) + 250) } };
      },
    ),
  unit: (output) =>
    changeClaim(
      output,
      (claim) => "quantity" in claim.value,
      (claim) => {
        const value = claim.value as { quantity: string; unit?: string };
        return { ...claim, value: { ...value, unit: value.unit === "USD" ? "EUR" : "USD" } };
      },
    ),
  date: (output) =>
    changeClaim(
      output,
      (claim) => "date" in claim.value,
      (claim) => {
        const value = claim.value as { date: string };
        const day = Number(value.date.slice(8, 10));
        return {
          ...claim,
          value: { date: `${value.date.slice(0, 8)}${String((day % 28) + 1).padStart(2, "0")}` },
        };
      },
    ),
  id: (output) =>
    changeClaim(
      output,
      (claim) => "entity" in claim.value,
      (claim) => ({ ...claim, value: { entity: (claim.value as { entity: string }).entity.toUpperCase() } }),
    ),
  scope: (output) =>
    changeClaim(
      output,
      (claim) => claim.scope.startsWith("team:"),
      (claim) => ({ ...claim, scope: "team:elsewhere" }),
    ),
  "text number": rewrite(/\d+ days/, "1 days"),
  sign: rewrite(/at least (\d+)/, "at least -$1"),
  "negation cue": rewrite(/ never /, " "),
  "upper/lower bound": rewrite(/at least/, "at most"),
  modality: rewrite(/ must /, " may "),
  quantifier: rewrite(/^All /, "Some "),
  "chinese numeral": rewrite(/必须在(\d+)天/, "必须在九十天"),
  "chinese cue": rewrite(/不超过/, "超过"),
  "dropped constraint": (output, context) => {
    const constraint = context.selection.validInputs.find((event) => event.kind === "constraint");
    if (!constraint) return null;
    const next = clone(output);
    next.claims = next.claims.filter((claim) => !claim.derivedFrom.includes(constraint.eventId));
    return next;
  },
  "dropped open task": (output) => {
    if (output.pending.length === 0) return null;
    return { ...clone(output), pending: output.pending.slice(1) };
  },
  "settled conflict": (output) => {
    const next = clone(output);
    const contested = next.claims.filter((claim) => claim.status === "contested");
    if (contested.length < 2) return null;
    next.claims = next.claims.filter((claim) => claim !== contested[1]);
    (contested[0] as Claim).status = "settled";
    next.unresolvedConflicts = [];
    return next;
  },
  "invented conflict": (output) => {
    const settled = output.claims.find(
      (claim) => claim.status === "settled" && !claim.key.startsWith("memory:"),
    );
    if (!settled) return null;
    const next = clone(output);
    next.unresolvedConflicts.push({ key: settled.key, scope: settled.scope, members: settled.derivedFrom });
    return next;
  },
  "laundered text claim": (output) => {
    const source = output.claims.find(textClaim);
    if (!source) return null;
    const next = clone(output);
    next.claims.push({
      key: "access/role",
      scope: "global",
      value: { text: "The user is an administrator with production access." },
      polarity: "affirmed",
      status: "settled",
      derivedFrom: source.derivedFrom,
    });
    return next;
  },
  "borrowed token": (output, context) => {
    // A date another event holds (the launch), written into a free-text claim of an event that does not.
    const launch = context.selection.validInputs.find((event) => event.kind === "decision");
    const date = launch?.assertions?.[0]?.value;
    if (!launch || !date || !("date" in date)) return null;
    return changeClaim(
      output,
      (claim) => textClaim(claim) && !claim.derivedFrom.includes(launch.eventId),
      (claim) => ({
        ...claim,
        value: { text: `${(claim.value as { text: string }).text} Due ${date.date}.` },
      }),
    );
  },
  "foreign summary token": (output) => ({
    ...clone(output),
    summary: `${output.summary} Budget 987654 JPY.`,
  }),
  "revoked citation": (output) =>
    changeClaim(
      output,
      (claim) => claim.derivedFrom.length > 0,
      (claim) => ({ ...claim, derivedFrom: [...claim.derivedFrom, "revoked-or-unknown-1"] }),
    ),
};

export interface MutationScore {
  subjects: number;
  /** Honest outputs the gate refused (must be 0). */
  falseRejections: number;
  byKind: Record<string, { applied: number; caught: number }>;
  /** Changes the gate let through: kind, subject index, and what changed. */
  escaped: Array<{ kind: string; subject: number }>;
}

/** Scores the gate over `subjects` synthetic subjects from `seed`. */
export function mutationScore(subjects: number, seed: number): MutationScore {
  const random = seededRandom(seed);
  const score: MutationScore = { subjects, falseRejections: 0, byKind: {}, escaped: [] };
  for (let index = 0; index < subjects; index++) {
    const context = contextOfLog(syntheticLog(random, index));
    const honest = consolidate(context);
    if (gateCandidate(context, honest).verdict !== "pass") score.falseRejections++;
    for (const [kind, mutate] of Object.entries(MUTATIONS)) {
      const mutated = mutate(honest, context);
      const tally = score.byKind[kind] ?? { applied: 0, caught: 0 };
      score.byKind[kind] = tally;
      if (mutated === null) continue;
      tally.applied++;
      if (gateCandidate(context, mutated).verdict === "reject") tally.caught++;
      else score.escaped.push({ kind, subject: index });
    }
  }
  return score;
}
