import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import { openAwsStores } from "#harness/aws-stores.ts";
import { runInterleaving } from "#harness/interleavings.ts";
import { depsOver, depsOverStore } from "#harness/pipeline-builders.ts";

const RUNS = { embedded: 200, aws: 200 };

describe("randomized interleavings", () => {
  const store = new SqliteStore(mkdtempSync(join(tmpdir(), "memgate-interleave-")));
  afterAll(() => store.close());
  let aws: Awaited<ReturnType<typeof openAwsStores>>;
  beforeAll(async () => {
    aws = await openAwsStores({
      dynamoEndpoint: inject("dynamoEndpoint"),
      motoEndpoint: inject("motoEndpoint"),
    });
  });

  it(`embedded: ${RUNS.embedded} runs, coverage never decreases and nothing stale or unpublished is served`, async () => {
    let publishes = 0;
    let served = 0;
    for (let seed = 1; seed <= RUNS.embedded; seed++) {
      const result = await runInterleaving(() => depsOverStore(store), seed);
      expect(result.violations, `seed ${seed}`).toEqual([]);
      publishes += result.publishes;
      served += result.served;
    }
    console.log(`embedded interleavings: ${publishes} publishes won, ${served} summaries served`);
    expect(publishes).toBeGreaterThan(RUNS.embedded / 10);
    expect(served).toBeGreaterThan(RUNS.embedded / 20);
  }, 600_000);

  it(`AWS local engines: ${RUNS.aws} runs, coverage never decreases and nothing stale or unpublished is served`, async () => {
    let publishes = 0;
    let served = 0;
    for (let seed = 1; seed <= RUNS.aws; seed++) {
      const result = await runInterleaving(
        () =>
          depsOver({ events: aws.store, alias: aws.store, artifacts: aws.artifacts, settings: aws.store }),
        seed,
      );
      expect(result.violations, `seed ${seed}`).toEqual([]);
      publishes += result.publishes;
      served += result.served;
    }
    console.log(`AWS interleavings: ${publishes} publishes won, ${served} summaries served`);
    expect(publishes).toBeGreaterThan(RUNS.aws / 10);
    expect(served).toBeGreaterThan(RUNS.aws / 20);
  }, 900_000);
});
