// Canonical hashing cost: RFC 8785 (canonicalize) + SHA-256 vs. JSON.stringify + SHA-256, same events.
// Prints both and the ratio; run: npx tsx --import ./scripts/text-imports.mjs bench/hashing.ts [events]
import { createHash } from "node:crypto";
import { performance } from "node:perf_hooks";
import { eventHash } from "#domain/hashing.ts";
import type { MemoryEvent } from "#domain/schemas.ts";
import { MemoryEvent as MemoryEventSchema } from "#domain/schemas.ts";
import { record } from "./results.ts";
import { median } from "./stats.ts";

const count = Number(process.argv[2] ?? 10_000);
const events: MemoryEvent[] = Array.from({ length: count }, (_, i) =>
  MemoryEventSchema.parse({
    eventId: `m-${i}`,
    kind: i % 5 === 0 ? "task" : "fact",
    text: `Budget for project ${i % 40} is ${i * 3},500 USD; never use vendor ${i % 7}. 预算不要超过${i}美元。`,
    assertions: [
      {
        key: `project:p${i % 40}/budget`,
        value: { quantity: `${i}.00`, unit: "USD" },
        polarity: "affirmed",
        scope: `project:p${i % 40}`,
      },
      { key: `project:p${i % 40}/vendor`, value: { entity: `vendor:${i % 7}` }, polarity: "negated" },
    ],
    source: "agent:planner",
    occurredAt: "2026-11-20T10:00:00Z",
  }),
);

const plain = (event: MemoryEvent) =>
  createHash("sha256").update(JSON.stringify(event), "utf8").digest("hex");

function run(hash: (event: MemoryEvent) => string): number {
  const samples: number[] = [];
  for (let round = 0; round < 15; round++) {
    const start = performance.now();
    for (const event of events) hash(event);
    samples.push(performance.now() - start);
  }
  return median(samples);
}

for (let i = 0; i < 3; i++) {
  run(eventHash);
  run(plain);
}
const canonical = run(eventHash);
const stringify = run(plain);
console.log(`hashing bench: ${count} events`);
console.log(`  RFC 8785 canonicalize + SHA-256 (median): ${canonical.toFixed(2)} ms`);
console.log(`  JSON.stringify + SHA-256 (median):        ${stringify.toFixed(2)} ms`);
console.log(`  ratio canonical/stringify: ${(canonical / stringify).toFixed(2)}x (goal <= 2x)`);
record({
  bench: "hashing",
  measures: "RFC 8785 canonical JSON + SHA-256 vs JSON.stringify + SHA-256 over the same events",
  figure: `${(canonical / stringify).toFixed(2)}x`,
  goal: "<= 2x",
  met: canonical / stringify <= 2,
});
