// Embedded end-to-end consolidation (snapshot -> select -> model -> gate -> write -> publish) at
// 1k, 10k and 100k events: time per event should stay flat. Run: npx tsx --import ./scripts/text-imports.mjs bench/consolidation-scaling.ts [sizes...]
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import { appendEvents } from "#app/append.ts";
import { run } from "#app/run.ts";
import { takeSnapshot } from "#app/snapshot.ts";
import { realisticEvent as event } from "#harness/event-mix.ts";
import { depsOverStore } from "#harness/pipeline-builders.ts";
import { record } from "./results.ts";

const sizes = process.argv
  .slice(2)
  .map(Number)
  .filter((n) => n > 0);
const plan = sizes.length > 0 ? sizes : [1_000, 10_000, 100_000];

/** One consolidation of `size` fresh events; returns milliseconds for ingest and consolidation. */
async function measure(size: number): Promise<{ ingest: number; consolidation: number }> {
  const store = new SqliteStore(mkdtempSync(join(tmpdir(), "memgate-scale-")));
  const deps = depsOverStore(store, { generationTimeoutMs: 600_000 });
  const ingestStart = performance.now();
  for (let i = 0; i < size; i += 1000)
    await appendEvents(
      deps,
      "scale",
      Array.from({ length: Math.min(1000, size - i) }, (_, k) => event(i + k)),
    );
  const ingest = performance.now() - ingestStart;
  const start = performance.now();
  const outcome = await run(deps, await takeSnapshot(deps, "scale"));
  const consolidation = performance.now() - start;
  store.close();
  if (outcome.status !== "PUBLISHED")
    throw new Error(`consolidation of ${size} events ended ${outcome.status}`);
  return { ingest, consolidation };
}

await measure(2_000); // warm-up: compile the hot paths before anything is timed
const results: Array<{ size: number; perEvent: number }> = [];
for (const size of plan) {
  const { ingest, consolidation } = await measure(size);
  results.push({ size, perEvent: consolidation / size });
  console.log(
    `${String(size).padStart(6)} events: consolidation ${(consolidation / 1000).toFixed(2)} s (${((consolidation / size) * 1000).toFixed(1)} µs/event); ingest ${(ingest / 1000).toFixed(2)} s`,
  );
}
const base = results[0]?.perEvent ?? 1;
console.log(
  `per-event time relative to ${results[0]?.size}: ${results.map((r) => `${r.size}: ${(r.perEvent / base).toFixed(2)}x`).join(", ")} (goal within 0.75x-1.25x; 100k under 10 s)`,
);
const flatness = results.map((r) => r.perEvent / base);
const largest = results[results.length - 1];
record({
  bench: "consolidation-scaling",
  measures: `embedded consolidation per event at ${results.map((r) => r.size).join(", ")} events, relative to the smallest`,
  figure: `${flatness.map((f) => `${f.toFixed(2)}x`).join(", ")}; ${largest?.size} events in ${(((largest?.perEvent ?? 0) * (largest?.size ?? 0)) / 1000).toFixed(1)} s`,
  goal: "within 0.75x-1.25x; 100k under 10 s",
  met:
    flatness.every((f) => f >= 0.75 && f <= 1.25) &&
    (largest?.size !== 100_000 || (largest.perEvent * largest.size) / 1000 < 10),
});
