import { appendEvents } from "#app/append.ts";
import type { Deps } from "#app/deps.ts";
import { generate } from "#app/generate.ts";
import { readInputs, takeSnapshot } from "#app/snapshot.ts";
import { gateChecklist } from "#domain/gate/index.ts";
import type { Claim, ConsolidationOutput, MemoryEvent, SequencedEvent } from "#domain/schemas.ts";
import { ConsolidationOutput as ConsolidationOutputSchema } from "#domain/schemas.ts";
import { seededRandom } from "#domain/seeded-random.ts";
import { countTokens } from "#domain/tokens.ts";
import { measureCompression } from "./compression.ts";
import { servedFact } from "./gold-words.ts";
import { independentlySupported } from "./independent-check.ts";
import type { GoldFact } from "./synthetic.ts";

export interface EvalSubject {
  subject: string;
  verdict: "pass" | "reject";
  keyFacts: number;
  keyFactsKept: number;
  claims: number;
  unsupportedClaims: number;
  /** Text claims a model judge weighed (0 without a judge), and those it found unsupported. */
  judgedClaims: number;
  judgeUnsupported: number;
  conflicts: number;
  conflictsKept: number;
  rawTokens: number;
  recallTokens: number;
  /** The raw valid events as a raw recall and the answer as its summary recall, both as recall text (cl100k_base). */
  rawTextTokens: number;
  servedTextTokens: number;
  /** Valid inputs no claim or pending item derives from. */
  coldInputs: number;
  /** Attempts the generation took (repair), and whether the first answer passed the gate. */
  attempts: number;
  firstTryPass: boolean;
  /** The gold facts not kept (their sentence, key or mention), with the words that did not survive. */
  missedFacts: string[];
}

export interface EvalReport {
  subjects: number;
  /** Gold facts (or, without gold, must-preserve items) the consolidation keeps; null when none. */
  keyFactRecall: number | null;
  /** Claims the independent checker (or the judge, when configured) finds unsupported by their cited events; null when no claim. */
  falseNewFactRate: number | null;
  /** Of the text claims a model judge weighed, the share it found unsupported; null: not measured (no judge). */
  judgeFalseNewFactRate: number | null;
  /** Conflicts of the inputs listed as unresolved; null when the inputs hold none. */
  conflictRetention: number | null;
  /** 1 − recall tokens / raw valid-event tokens (cl100k_base), over all subjects. */
  tokenReduction: number | null;
  /** Served tokens / raw tokens, both as recall text (CONTRACT §5a: what an agent reads), over all subjects. */
  servedToRawTokens: number | null;
  /** Claims found unsupported by their cited events (the independent checker, and the judge when configured). */
  falseNewFacts: number;
  /** Subjects whose first answer passed the gate, of all subjects. */
  firstTryPassRate: number | null;
  /** Summaries served while their inputs changed: none can be, nothing is published in an eval. */
  staleVisible: number;
  gateRejected: number;
  keyFactSource: "gold" | "must-preserve";
  perSubject: EvalSubject[];
}

const ratio = (part: number, whole: number) => (whole === 0 ? null : part / whole);

/**
 * The evaluation of a dataset on a throwaway store (`deps`, which the caller opens and discards):
 * each sampled subject's events are appended, consolidated by the configured model and gated, but
 * nothing is published. The answer is measured as recall would serve it if published: key facts
 * kept (gold facts, or the must-preserve set as the gate's checklist judges it without gold),
 * claims unsupported by their cited events (an independent checker, not the gate), conflicts kept
 * as unresolved, and tokens saved against the raw valid events.
 */
export async function evaluate(
  deps: Deps,
  dataset: ReadonlyMap<string, readonly MemoryEvent[]>,
  gold: readonly GoldFact[] | null,
  options: { sample?: number; seed?: number } = {},
): Promise<EvalReport> {
  let subjects = [...dataset.keys()].sort();
  if (options.sample !== undefined) {
    const random = seededRandom(options.seed ?? 0);
    subjects = subjects
      .map((subject) => [random(), subject] as const)
      .sort((a, b) => a[0] - b[0])
      .slice(0, options.sample)
      .map(([, subject]) => subject)
      .sort();
  }
  const perSubject: EvalSubject[] = [];
  for (const subject of subjects)
    perSubject.push(await evaluateSubject(deps, subject, dataset.get(subject) ?? [], gold));
  const sum = (pick: (s: EvalSubject) => number) => perSubject.reduce((total, s) => total + pick(s), 0);
  const rawTokens = sum((s) => s.rawTokens);
  return {
    subjects: perSubject.length,
    keyFactRecall: ratio(
      sum((s) => s.keyFactsKept),
      sum((s) => s.keyFacts),
    ),
    falseNewFactRate: ratio(
      sum((s) => s.unsupportedClaims),
      sum((s) => s.claims),
    ),
    judgeFalseNewFactRate: ratio(
      sum((s) => s.judgeUnsupported),
      sum((s) => s.judgedClaims),
    ),
    conflictRetention: ratio(
      sum((s) => s.conflictsKept),
      sum((s) => s.conflicts),
    ),
    tokenReduction: rawTokens === 0 ? null : 1 - sum((s) => s.recallTokens) / rawTokens,
    servedToRawTokens: ratio(
      sum((s) => s.servedTextTokens),
      sum((s) => s.rawTextTokens),
    ),
    falseNewFacts: sum((s) => s.unsupportedClaims),
    firstTryPassRate: ratio(perSubject.filter((s) => s.firstTryPass).length, perSubject.length),
    staleVisible: 0,
    gateRejected: perSubject.filter((s) => s.verdict === "reject").length,
    keyFactSource: gold === null ? "must-preserve" : "gold",
    perSubject,
  };
}

async function evaluateSubject(
  deps: Deps,
  subject: string,
  events: readonly MemoryEvent[],
  gold: readonly GoldFact[] | null,
): Promise<EvalSubject> {
  await appendEvents(deps, subject, events);
  const snapshot = await takeSnapshot(deps, subject);
  const generated = await generate(deps, snapshot);
  if (generated.status === "dropped")
    throw new Error(`${subject}: the snapshot was dropped during the evaluation`);
  const raw = await deps.artifacts.readArtifact(subject, generated.artifactId);
  const parsed = ConsolidationOutputSchema.safeParse(raw);
  const body: ConsolidationOutput = parsed.success
    ? parsed.data
    : { claims: [], pending: [], unresolvedConflicts: [], coldRefs: [], summary: "" };
  const { context } = await readInputs(deps, subject, snapshot.highWater);
  const valid = context.selection.validInputs;
  const byId = new Map<string, SequencedEvent>(valid.map((event) => [event.eventId, event]));

  let keyFacts: number;
  let keyFactsKept: number;
  const missedFacts: string[] = [];
  if (gold !== null) {
    const facts = gold.filter((fact) => fact.subject === subject);
    keyFacts = facts.length;
    const kept = await keptGoldFacts(deps, facts, body);
    keyFactsKept = kept.filter((k) => k.kept).length;
    missedFacts.push(...kept.filter((k) => !k.kept).map((k) => k.why));
  } else {
    const { checklist } = gateChecklist(context, body);
    keyFacts = checklist.length;
    keyFactsKept = checklist.filter((entry) => entry.keptBy !== null).length;
  }
  const sourcesOf = (claim: Claim) => claim.derivedFrom.flatMap((id) => byId.get(id) ?? []);
  const unsupported = new Set(
    body.claims.filter((claim) => !independentlySupported(claim, sourcesOf(claim))),
  );
  // The judge weighs every text claim the independent checker let through (its meaning, not its tokens).
  const textClaims = body.claims.filter((claim) => "text" in claim.value && !unsupported.has(claim));
  let judgeUnsupported = 0;
  if (deps.judge && textClaims.length > 0) {
    const items = textClaims.map((claim, i) => ({
      id: `c-${i + 1}`,
      text: "text" in claim.value ? claim.value.text : "",
      events: sourcesOf(claim),
    }));
    const { verdicts } = await deps.judge.judge(items, AbortSignal.timeout(deps.generationTimeoutMs));
    textClaims.forEach((claim, i) => {
      if (verdicts.get(`c-${i + 1}`)?.verdict === "unsupported") {
        unsupported.add(claim);
        judgeUnsupported++;
      }
    });
  }
  const unsupportedClaims = unsupported.size;
  const listed = new Set(body.unresolvedConflicts.map((c) => `${c.key}\u0000${c.scope}`));
  const conflicts = context.selection.conflicts;
  const { coldRefs: _cold, ...served } = body;
  const text = measureCompression(body, valid, {
    artifactId: generated.artifactId,
    highWater: snapshot.highWater,
  });
  const attempts = generated.manifest.generation?.attempts ?? 1;
  return {
    subject,
    verdict: generated.gate.verdict,
    keyFacts,
    keyFactsKept,
    claims: body.claims.length,
    unsupportedClaims,
    judgedClaims: deps.judge ? textClaims.length : 0,
    judgeUnsupported,
    conflicts: conflicts.length,
    conflictsKept: conflicts.filter((c) => listed.has(`${c.key}\u0000${c.scope}`)).length,
    rawTokens: countTokens(JSON.stringify(valid.map(({ sequence: _s, ...event }) => event))),
    recallTokens: countTokens(JSON.stringify(served)),
    rawTextTokens: text.rawTokens,
    servedTextTokens: text.servedTokens,
    coldInputs: text.coldInputs,
    attempts,
    firstTryPass: attempts === 1 && generated.gate.verdict === "pass",
    missedFacts,
  };
}

/**
 * Which gold facts the answer keeps. A fact in words is kept when it is served hot with its words
 * (`servedFact`) and, with a judge configured, the judge does not find it unsupported by the lines
 * that serve it (one call for the subject); the other facts as `goldKept` reads them.
 */
async function keptGoldFacts(
  deps: Deps,
  facts: readonly GoldFact[],
  body: ConsolidationOutput,
): Promise<Array<{ kept: boolean; why: string }>> {
  const results = facts.map((fact) => {
    const name = fact.fact ?? fact.key ?? fact.mention ?? "";
    if (fact.words === undefined) return { kept: goldKept(fact, body), why: name, lines: [] as string[] };
    const served = servedFact(fact, body);
    const why =
      served.lines.length === 0
        ? `cold: ${fact.evidence.join(", ")}`
        : served.missing.length > 0
          ? `lost: ${served.missing.join(", ")}`
          : "not contested";
    return { kept: served.kept, why: `${name} (${why})`, lines: served.lines };
  });
  const judged = results.flatMap((result, index) => {
    const fact = facts[index];
    return result.kept && fact?.words !== undefined ? [{ result, fact, id: `g-${index + 1}` }] : [];
  });
  if (!deps.judge || judged.length === 0) return results;
  const items = judged.map(({ result, fact, id }) => ({
    id,
    text: fact.fact ?? (fact.words ?? []).flat().join(" "),
    // The lines that serve the fact, as the judge reads cited events.
    events: result.lines.map(
      (line, i): SequencedEvent => ({
        eventId: `served-${i + 1}`,
        sequence: i + 1,
        kind: "fact",
        trust: "user",
        text: line,
      }),
    ),
  }));
  const { verdicts } = await deps.judge.judge(items, AbortSignal.timeout(deps.generationTimeoutMs));
  for (const { result, fact, id } of judged) {
    const verdict = verdicts.get(id);
    if (verdict?.verdict !== "unsupported") continue;
    result.kept = false;
    result.why = `${fact.fact ?? ""} (the judge ${deps.judge.name}: ${verdict.reason})`;
  }
  return results;
}

/** A gold fact is kept when a claim states it (same key, scope, polarity, value) or holds its literal. */
function goldKept(fact: GoldFact, body: ConsolidationOutput): boolean {
  if (fact.mention !== undefined) {
    const literal = fact.mention.toLowerCase();
    return body.claims.some((claim) =>
      [claim.text ?? "", "text" in claim.value ? claim.value.text : ""].some((text) =>
        text.toLowerCase().includes(literal),
      ),
    );
  }
  return body.claims.some(
    (claim) =>
      claim.key === fact.key &&
      (fact.scope === undefined || claim.scope === fact.scope) &&
      (fact.polarity === undefined || claim.polarity === fact.polarity) &&
      (fact.contested ? claim.status === "contested" : true) &&
      JSON.stringify(normalised(claim.value)) === JSON.stringify(normalised(fact.value)),
  );
}

function normalised(value: unknown): unknown {
  if (value && typeof value === "object" && "quantity" in value) {
    const q = value as { quantity: string; unit?: string };
    return { quantity: Number(q.quantity), unit: q.unit ?? null };
  }
  return value;
}
