// DynamoDB requests per consolidation, by phase, on DynamoDB Local: snapshot, generate (the epoch
// check, the policy, selection as Query pages of the sequence index) and publish (the validity
// re-check, then the switch). Run: npx tsx --import ./scripts/text-imports.mjs bench/dynamo-requests.ts [events]
import { appendEvents } from "#app/append.ts";
import { generate } from "#app/generate.ts";
import { publish } from "#app/publish.ts";
import { takeSnapshot } from "#app/snapshot.ts";
import { openAwsStores, type RequestCounter } from "#harness/aws-stores.ts";
import { startLocalEngines } from "#harness/local-engines.ts";
import { depsOver, factsBatch } from "#harness/pipeline-builders.ts";
import { record } from "./results.ts";

const size = Number(process.argv[2] ?? 5_000);
const engines = await startLocalEngines();
try {
  const counter: RequestCounter = { count: 0, operations: [] };
  const aws = await openAwsStores(engines, counter);
  const deps = depsOver(
    { events: aws.store, alias: aws.store, artifacts: aws.artifacts, settings: aws.store },
    { generationTimeoutMs: 600_000 },
  );
  const events = factsBatch(1, size).map((event) => ({
    ...event,
    text: `${event.text} ${"padding ".repeat(40)}`,
  }));
  for (let i = 0; i < size; i += 1000) await appendEvents(deps, "requests", events.slice(i, i + 1000));

  const counts: Record<string, Map<string, number>> = {};
  const phase = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
    counter.count = 0;
    counter.operations = [];
    const result = await work();
    const byOperation = new Map<string, number>();
    for (const operation of counter.operations)
      byOperation.set(operation, (byOperation.get(operation) ?? 0) + 1);
    counts[name] = byOperation;
    console.log(
      `  ${name.padEnd(9)} ${String(counter.count).padStart(4)} requests: ${[...byOperation].map(([op, n]) => `${op.replace("Command", "")} ${n}`).join(", ")}`,
    );
    return result;
  };
  console.log(
    `DynamoDB requests for one consolidation of ${size} events (~${Math.round(JSON.stringify(events[0]).length)} bytes each):`,
  );
  const snapshot = await phase("snapshot", () => takeSnapshot(deps, "requests"));
  const generated = await phase("generate", () => generate(deps, snapshot));
  if (generated.status !== "CANDIDATE") throw new Error(`generation ended ${generated.status}`);
  await phase("publish", () => publish(deps, generated.artifactId));
  console.log("  (goal: snapshot 1, selection ceil(n/page) Query pages, the switch 1 TransactWriteItems)");
  const total = (name: string) => [...(counts[name]?.values() ?? [])].reduce((a, b) => a + b, 0);
  record({
    bench: "dynamo-requests",
    measures: `DynamoDB requests per phase of one consolidation of ${size} events on DynamoDB Local`,
    figure: `snapshot ${total("snapshot")}, generate ${total("generate")}, publish ${total("publish")} (${counts.publish?.get("TransactWriteItemsCommand") ?? 0} TransactWriteItems)`,
    goal: "snapshot 1, the switch 1 TransactWriteItems",
    met: total("snapshot") === 1 && counts.publish?.get("TransactWriteItemsCommand") === 1,
  });
} finally {
  engines.stop();
}
