// Ingest: 10,000 events appended in batches vs. one event per call, on DynamoDB Local and on the
// embedded SQLite store; and the median latency of a publish (the switch transaction) on both.
// Starts its own local engines. One-per-call on DynamoDB Local is timed on a sample (default 1,000
// events: each call is a full fenced transaction, ~20 ms on the local engine); per-event times are
// what the ratio compares. Run: npx tsx --import ./scripts/text-imports.mjs bench/ingest-and-publish.ts [events] [dynamoSingleCalls]
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import type { MemoryEvent } from "#domain/schemas.ts";
import { MemoryEvent as MemoryEventSchema } from "#domain/schemas.ts";
import { openAwsStores } from "#harness/aws-stores.ts";
import { candidateRecord } from "#harness/candidate-record.ts";
import { startLocalEngines } from "#harness/local-engines.ts";
import type { AliasPort } from "#ports/alias.ts";
import type { ArtifactStore } from "#ports/artifacts.ts";
import type { EventLog } from "#ports/event-log.ts";
import { record } from "./results.ts";
import { median } from "./stats.ts";

const total = Number(process.argv[2] ?? 10_000);
const dynamoSingles = Number(process.argv[3] ?? 1_000);
const BATCH = 500;

const events: MemoryEvent[] = Array.from({ length: total }, (_, i) =>
  MemoryEventSchema.parse({
    eventId: `m-${i}`,
    kind: i % 10 === 0 ? "decision" : "fact",
    text: `Fact ${i}: budget of project ${i % 50} is ${i} USD.`,
    assertions: [
      {
        key: `project:p${i % 50}/item-${i}`,
        value: { quantity: String(i), unit: "USD" },
        polarity: "affirmed",
      },
    ],
  }),
);

async function ingest(log: EventLog, subject: string, batchSize: number, count: number): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < count; i += batchSize)
    await log.append(subject, events.slice(i, Math.min(count, i + batchSize)));
  return (performance.now() - start) / count;
}

async function publishLatency(
  store: EventLog & AliasPort,
  artifacts: ArtifactStore,
  subject: string,
  rounds: number,
): Promise<number> {
  await store.append(subject, events.slice(0, 1));
  const samples: number[] = [];
  let expected = null as null | { parentArtifactId: string; sourceEpoch: number; coversThrough: number };
  for (let round = 0; round < rounds; round++) {
    const artifactId = `s-${round}`;
    await artifacts.recordArtifact(
      candidateRecord(subject, artifactId, 1, 0, expected?.parentArtifactId ?? null),
    );
    const start = performance.now();
    const alias = await store.publishIfUnchanged({
      subject,
      artifactId,
      expectedAlias: expected,
      inputEpoch: 0,
      newCoversThrough: 1,
    });
    samples.push(performance.now() - start);
    expected = {
      parentArtifactId: alias.artifactId,
      sourceEpoch: alias.sourceEpoch,
      coversThrough: alias.coversThrough,
    };
  }
  return median(samples);
}

async function measure(
  name: string,
  store: EventLog & AliasPort,
  artifacts: ArtifactStore,
  singles: number,
): Promise<void> {
  const batched = await ingest(store, `${name}-batched`, BATCH, total);
  const single = await ingest(store, `${name}-single`, 1, singles);
  const publish = await publishLatency(store, artifacts, `${name}-publish`, 100);
  console.log(
    `${name}: ${total} events in batches of ${BATCH}: ${(batched * 1000).toFixed(0)} µs/event; one per call (${singles} events): ${(single * 1000).toFixed(0)} µs/event`,
  );
  record({
    bench: `ingest-${name}`,
    measures: `append cost per event on ${name}: one event per call vs batches of ${BATCH}; publish latency`,
    figure: `${(single / batched).toFixed(1)}x (${(batched * 1000).toFixed(0)} vs ${(single * 1000).toFixed(0)} µs/event), publish ${publish.toFixed(2)} ms`,
    goal: ">= 10x",
    met: single / batched >= 10,
  });
  console.log(
    `  ratio one-per-call / batched: ${(single / batched).toFixed(1)}x (goal >= 10x); publish median: ${publish.toFixed(2)} ms`,
  );
}

const sqlite = new SqliteStore(mkdtempSync(join(tmpdir(), "memgate-bench-")));
await measure("sqlite", sqlite, sqlite, total);
sqlite.close();

const engines = await startLocalEngines();
try {
  const aws = await openAwsStores(engines);
  await measure("dynamodb-local", aws.store, aws.artifacts, dynamoSingles);
} finally {
  engines.stop();
}
