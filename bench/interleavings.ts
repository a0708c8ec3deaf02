// Randomized interleavings of append, revoke, supersede, snapshot, generate, publish and recall by
// concurrent workers, each run checked against its whole history (see harness/interleavings.ts).
// Run: npx tsx --import ./scripts/text-imports.mjs bench/interleavings.ts [embeddedRuns=10000] [awsRuns=0]
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import type { Deps } from "#app/deps.ts";
import { openAwsStores } from "#harness/aws-stores.ts";
import { runInterleaving } from "#harness/interleavings.ts";
import { startLocalEngines } from "#harness/local-engines.ts";
import { depsOver, depsOverStore } from "#harness/pipeline-builders.ts";
import { record } from "./results.ts";

const embeddedRuns = Number(process.argv[2] ?? 10_000);
const awsRuns = Number(process.argv[3] ?? 0);

async function campaign(name: string, runs: number, makeDeps: () => Deps): Promise<void> {
  let violations = 0;
  let publishes = 0;
  let served = 0;
  const start = performance.now();
  for (let seed = 1; seed <= runs; seed++) {
    const result = await runInterleaving(makeDeps, seed);
    violations += result.violations.length;
    publishes += result.publishes;
    served += result.served;
    for (const violation of result.violations) console.log(`  seed ${seed}: ${violation}`);
    if (seed % 1000 === 0) console.log(`  ${name}: ${seed}/${runs} runs, ${violations} violations so far`);
  }
  record({
    bench: `interleavings-${name}`,
    measures: `${runs} randomized interleavings of appends, revocations, publishes and recalls on the ${name} store`,
    figure: `${violations} violations (${publishes} publishes, ${served} summaries served)`,
    goal: "0 violations",
    met: violations === 0,
  });
  console.log(
    `${name}: ${runs} interleavings in ${((performance.now() - start) / 1000).toFixed(0)} s: ${publishes} publishes won, ${served} summaries served, ${violations} violations (goal 0)`,
  );
}

const store = new SqliteStore(mkdtempSync(join(tmpdir(), "memgate-interleave-bench-")));
await campaign("embedded", embeddedRuns, () => depsOverStore(store));
store.close();
if (awsRuns > 0) {
  const engines = await startLocalEngines();
  try {
    const aws = await openAwsStores(engines);
    await campaign("dynamodb-local", awsRuns, () =>
      depsOver({ events: aws.store, alias: aws.store, artifacts: aws.artifacts, settings: aws.store }),
    );
  } finally {
    engines.stop();
  }
}
