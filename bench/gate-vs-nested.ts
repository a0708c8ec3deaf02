// Gate throughput: our indexed gate vs. the seed's nested `find` loop, same data, same run.
// Prints times and the ratio; run: npx tsx --import ./scripts/text-imports.mjs bench/gate-vs-nested.ts [items]
import { performance } from "node:perf_hooks";
import { consolidate } from "#domain/consolidator.ts";
import { buildGateContext, checkConsolidationOutput, gateCandidate } from "#domain/gate/index.ts";
import type { ConsolidationOutput, SequencedEvent } from "#domain/schemas.ts";
import { DEFAULT_TRUST_POLICY, MemoryEvent } from "#domain/schemas.ts";
import { selectInputs } from "#domain/selector.ts";
import { canonicalValue } from "#domain/values.ts";
import { record } from "./results.ts";
import { median } from "./stats.ts";

const items = Number(process.argv[2] ?? 10_000);
const units = ["USD", "km", "h", "GiB", "kg"];
const events: SequencedEvent[] = Array.from({ length: items }, (_, i) => ({
  ...MemoryEvent.parse({
    eventId: `m-${i + 1}`,
    kind: i % 3 === 0 ? "constraint" : "fact",
    text: `statement ${i + 1}`,
    assertions: [
      {
        key: `project:p${i % 97}/item-${i}`,
        value: { quantity: `${i}.50`, unit: units[i % units.length] },
        polarity: i % 4 === 0 ? "negated" : "affirmed",
        scope: `project:p${i % 97}`,
      },
    ],
  }),
  sequence: i + 1,
}));

const context = buildGateContext(selectInputs(events, items, DEFAULT_TRUST_POLICY), items);
const honest = consolidate(context);
// Claims in reverse order, so a linear search walks half the list on average.
const candidate: ConsolidationOutput = { ...honest, claims: [...honest.claims].reverse() };
const raw = JSON.parse(JSON.stringify(candidate));

/** The seed's loop, as written there: one `find` over all claims per must-preserve item. */
function seedNestedGate(output: ConsolidationOutput): string[] {
  const failures: string[] = [];
  for (const fact of context.mustPreserve) {
    if (fact.kind !== "assertion") continue;
    const hit = output.claims.find((c) => c.key === fact.key);
    if (!hit) {
      failures.push(`missing:${fact.itemId}`);
      continue;
    }
    if (canonicalValue(hit.value) !== canonicalValue(fact.value)) failures.push(`value:${fact.itemId}`);
    if (hit.polarity !== fact.polarity) failures.push(`polarity:${fact.itemId}`);
    if (!hit.derivedFrom.includes(fact.eventId)) failures.push(`provenance:${fact.itemId}`);
  }
  const expected = context.selection.conflicts
    .map((c) => c.key)
    .sort()
    .join();
  if (
    output.unresolvedConflicts
      .map((c) => c.key)
      .sort()
      .join() !== expected
  )
    failures.push("conflicts");
  return failures;
}

function time(fn: () => unknown, rounds: number): number {
  const samples: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const start = performance.now();
    fn();
    samples.push(performance.now() - start);
  }
  return median(samples);
}

console.log(
  `gate bench: ${context.mustPreserve.length} must-preserve items, ${candidate.claims.length} claims`,
);
const oursVerdict = gateCandidate(context, raw).verdict;
const seedFailures = seedNestedGate(candidate).length;
if (oursVerdict !== "pass" || seedFailures !== 0)
  throw new Error(
    `both must accept the honest candidate (ours ${oursVerdict}, seed ${seedFailures} failures)`,
  );
for (let i = 0; i < 10; i++) gateCandidate(context, raw); // let the JIT settle before measuring
const checks = time(() => checkConsolidationOutput(context, candidate), 21);
const full = time(() => gateCandidate(context, raw), 21);
const seed = time(() => seedNestedGate(candidate), 3);
console.log(`  ours, every check on the parsed candidate (median): ${checks.toFixed(2)} ms`);
console.log(`  ours, zod parse + every check (median):             ${full.toFixed(2)} ms`);
console.log(`  seed nested find loop on the parsed candidate:      ${seed.toFixed(2)} ms`);
console.log(
  `  ratio seed/ours checks: ${(seed / checks).toFixed(1)}x, seed/ours with parse: ${(seed / full).toFixed(1)}x (goal >= 100x, ours < 20 ms)`,
);
record({
  bench: "gate-vs-nested",
  measures: "the gate's checks on 10,000 claims against 13,334 must-preserve items vs the seed's nested loop",
  figure: `${(seed / checks).toFixed(1)}x, ${checks.toFixed(2)} ms`,
  goal: ">= 100x, < 20 ms",
  met: seed / checks >= 100 && checks < 20,
});
