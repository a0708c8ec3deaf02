import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { consolidate } from "#domain/consolidator.ts";
import type { GateReport } from "#domain/gate/index.ts";
import { mustPreserveFingerprint } from "#domain/must-preserve.ts";
import type { ConsolidationOutput, SequencedEvent } from "#domain/schemas.ts";
import { eventLog, irrelevantNote } from "../support/arbitraries.ts";
import { contextOf, gate, log } from "../support/builders.ts";

/** What a verdict says, independent of where in the candidate a reason was found. */
const outcome = (report: GateReport) => ({
  verdict: report.verdict,
  reasons: [...new Set(report.reasons.map((r) => `${r.code}|${r.eventId}|${r.key}|${r.scope}`))].sort(),
});

const meaning = (events: SequencedEvent[]) => {
  const context = contextOf(events);
  return {
    mustPreserve: mustPreserveFingerprint(context.mustPreserve),
    conflicts: context.selection.conflicts,
  };
};

/** Meaning-changing edits a bad model makes; each returns null when it does not apply. */
const MUTATIONS: Record<string, (output: ConsolidationOutput) => ConsolidationOutput | null> = {
  "flip a polarity": (o) => {
    const i = o.claims.findIndex((c) => !c.key.startsWith("memory:"));
    if (i < 0) return null;
    return {
      ...o,
      claims: o.claims.map((c, j) =>
        j === i ? { ...c, polarity: c.polarity === "affirmed" ? "negated" : "affirmed" } : c,
      ),
    };
  },
  "nudge a number": (o) => {
    const i = o.claims.findIndex((c) => "quantity" in c.value);
    if (i < 0) return null;
    return {
      ...o,
      claims: o.claims.map((c, j) =>
        j === i && "quantity" in c.value
          ? { ...c, value: { ...c.value, quantity: `${c.value.quantity}1` } }
          : c,
      ),
    };
  },
  "drop the first claim": (o) => (o.claims.length === 0 ? null : { ...o, claims: o.claims.slice(1) }),
  "drop a pending item": (o) => (o.pending.length === 0 ? null : { ...o, pending: o.pending.slice(1) }),
  "settle a contested claim": (o) => {
    const i = o.claims.findIndex((c) => c.status === "contested");
    if (i < 0) return null;
    return { ...o, claims: o.claims.map((c, j) => (j === i ? { ...c, status: "settled" } : c)) };
  },
  "widen a scope": (o) => {
    const i = o.claims.findIndex((c) => !c.key.startsWith("memory:"));
    if (i < 0) return null;
    return { ...o, claims: o.claims.map((c, j) => (j === i ? { ...c, scope: "project:gamma" } : c)) };
  },
  "drop a conflict": (o) =>
    o.unresolvedConflicts.length === 0 ? null : { ...o, unresolvedConflicts: o.unresolvedConflicts.slice(1) },
  // A structured claim under a key no source asserts (a free-text claim's key is free by contract).
  "hallucinate a claim": (o) => {
    const model = o.claims.find((c) => !c.key.startsWith("memory:"));
    return model ? { ...o, claims: [...o.claims, { ...model, key: "invented/fact" }] } : null;
  },
  "add a foreign number": (o) => ({ ...o, summary: `${o.summary} Total: 987654.` }),
};

function shuffled<T>(items: readonly T[], seed: number): T[] {
  const copy = [...items];
  let state = seed + 1;
  for (let i = copy.length - 1; i > 0; i--) {
    state = (state * 1103515245 + 12345) % 2147483648;
    const j = state % (i + 1);
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

/** Same JSON, keys in another order at every level. */
function reorderKeys(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((item, i) => reorderKeys(item, seed + i));
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    shuffled(Object.entries(value), seed).map(([k, v]) => [k, reorderKeys(v, seed + 7)]),
  );
}

describe("metamorphic properties of selection, extraction and the gate", () => {
  it("the deterministic consolidator's output always passes: honest summaries are never refused", () => {
    fc.assert(
      fc.property(eventLog, (inputs) => {
        const events = log(...inputs);
        expect(gate(events, consolidate(contextOf(events))).reasons).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it("every meaning-changing edit of an honest summary is refused", () => {
    fc.assert(
      fc.property(eventLog, fc.constantFrom(...Object.keys(MUTATIONS)), (inputs, name) => {
        const events = log(...inputs);
        const honest = consolidate(contextOf(events));
        const bent = MUTATIONS[name]?.(honest) ?? null;
        fc.pre(bent !== null && JSON.stringify(bent) !== JSON.stringify(honest));
        // Dropping or hallucinating a merely optional claim (a note's, a plain preference's) changes no must-preserve meaning.
        const optionalOnly = name === "drop the first claim" && !isRequired(events, honest);
        fc.pre(!optionalOnly);
        expect(gate(events, bent).verdict).toBe("reject");
      }),
      { numRuns: 400 },
    );
  });

  it("irrelevant notes inserted anywhere change neither the must-preserve set, the conflicts nor the verdict", () => {
    fc.assert(
      fc.property(
        eventLog,
        fc.array(fc.tuple(fc.nat(), irrelevantNote), { minLength: 1, maxLength: 5 }),
        fc.constantFrom(...Object.keys(MUTATIONS)),
        (inputs, notes, name) => {
          const events = log(...inputs);
          const padded = [...inputs];
          for (const [i, [at, text]] of notes.entries())
            padded.splice(at % (padded.length + 1), 0, { eventId: `noise-${i}`, kind: "note", text });
          const paddedEvents = log(...padded);
          expect(meaning(paddedEvents)).toEqual(meaning(events));
          const honest = consolidate(contextOf(events));
          const bent = MUTATIONS[name]?.(honest) ?? honest;
          expect(outcome(gate(paddedEvents, honest))).toEqual(outcome(gate(events, honest)));
          expect(outcome(gate(paddedEvents, bent))).toEqual(outcome(gate(events, bent)));
        },
      ),
      { numRuns: 200 },
    );
  });

  it("shuffling array order and key order changes neither the sets nor the verdict", () => {
    fc.assert(
      fc.property(eventLog, fc.nat(), fc.constantFrom(...Object.keys(MUTATIONS)), (inputs, seed, name) => {
        const events = log(...inputs);
        const reordered = log(
          ...(shuffled(events, seed).map((e) =>
            reorderKeys(JSON.parse(JSON.stringify(e)), seed),
          ) as typeof inputs),
        );
        expect(meaning(reordered)).toEqual(meaning(events));
        const honest = consolidate(contextOf(events));
        const bent = MUTATIONS[name]?.(honest) ?? honest;
        for (const output of [honest, bent]) {
          const reshuffled = {
            ...output,
            claims: shuffled(output.claims, seed).map((c) => ({
              ...c,
              derivedFrom: shuffled(c.derivedFrom, seed),
            })),
            pending: shuffled(output.pending, seed + 1),
            unresolvedConflicts: shuffled(output.unresolvedConflicts, seed + 2).map((c) => ({
              ...c,
              members: shuffled(c.members, seed),
            })),
          };
          expect(outcome(gate(reordered, reorderKeys(reshuffled, seed)))).toEqual(
            outcome(gate(events, output)),
          );
        }
      }),
      { numRuns: 150 },
    );
  });
});

/** Whether the first claim of the honest output keeps a must-preserve item. */
function isRequired(events: SequencedEvent[], honest: ConsolidationOutput): boolean {
  const first = honest.claims[0];
  if (!first) return false;
  const report = gate(events, { ...honest, claims: honest.claims.slice(1) });
  return report.verdict === "reject";
}
