import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, inject, it } from "vitest";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import { appendEvents, revokeEvents } from "#app/append.ts";
import { recall } from "#app/recall.ts";
import { run } from "#app/run.ts";
import { takeSnapshot } from "#app/snapshot.ts";
import { openAwsStores } from "#harness/aws-stores.ts";
import { depsOver, depsOverStore, factsBatch } from "#harness/pipeline-builders.ts";

interface Observation {
  startedAt: number;
  mode: string;
  artifactId: string | null;
  sources: string[];
}

/** Once revoke() has returned, no recall that starts later serves anything derived from the event. */
function assertInvisibleAfter(
  observations: Observation[],
  revokedAt: number,
  revoked: string,
  summaryId: string,
): void {
  const later = observations.filter((o) => o.startedAt > revokedAt);
  const earlier = observations.filter((o) => o.startedAt < revokedAt);
  expect(earlier.some((o) => o.mode === "summary" && o.artifactId === summaryId)).toBe(true);
  expect(later.length).toBeGreaterThan(5);
  for (const observation of later) {
    expect(observation.artifactId).not.toBe(summaryId);
    expect(observation.sources).not.toContain(revoked);
  }
}

describe("revocation visibility", () => {
  it("embedded: a reader process looping on recall never sees the revoked event's summary after revoke returns", async () => {
    const home = mkdtempSync(join(tmpdir(), "memgate-visibility-"));
    const store = new SqliteStore(home);
    const deps = depsOverStore(store);
    const subject = "visibility";
    await appendEvents(deps, subject, factsBatch(1, 30));
    const published = await run(deps, await takeSnapshot(deps, subject));
    const summaryId = (published as { artifactId: string }).artifactId;

    const reader = spawn(process.execPath, [
      "--import",
      "tsx",
      "--import",
      join(import.meta.dirname, "../../scripts/text-imports.mjs"),
      join(import.meta.dirname, "../support/recall-worker.ts"),
      home,
      subject,
    ]);
    const lines = createInterface({ input: reader.stdout });
    const observations: Observation[] = [];
    let revokedAt = Number.POSITIVE_INFINITY;
    // Event-driven, not timed: revoke once the reader has served summaries, stop once it has
    // recalled several times after the revoke returned, however loaded the machine is.
    const seen = (count: number, after = 0) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (observations.filter((o) => o.startedAt > after).length >= count) {
            lines.off("line", check);
            resolve();
          }
        };
        lines.on("line", check);
        check();
      });
    lines.on("line", (line) => {
      if (line !== "ready") observations.push(JSON.parse(line) as Observation);
    });
    const finished = new Promise((resolve) => reader.on("exit", resolve));
    await seen(10);
    await revokeEvents(deps, subject, ["m-7"]);
    revokedAt = Date.now();
    await seen(10, revokedAt);
    reader.stdin.end();
    await finished;
    store.close();
    expect(observations.some((o) => o.artifactId === summaryId)).toBe(true);
    assertInvisibleAfter(observations, revokedAt, "m-7", summaryId);
  }, 60_000);

  it("AWS: concurrent recalls never see the revoked event's summary after revoke returns", async () => {
    const aws = await openAwsStores({
      dynamoEndpoint: inject("dynamoEndpoint"),
      motoEndpoint: inject("motoEndpoint"),
    });
    const stores = { events: aws.store, alias: aws.store, artifacts: aws.artifacts, settings: aws.store };
    const deps = depsOver(stores);
    const subject = "visibility";
    await appendEvents(deps, subject, factsBatch(1, 30));
    const summaryId = ((await run(deps, await takeSnapshot(deps, subject))) as { artifactId: string })
      .artifactId;
    const observations: Observation[] = [];
    let revokedAt = Number.POSITIVE_INFINITY;
    let stop = false;
    const readers = Array.from({ length: 3 }, async () => {
      while (!stop) {
        const startedAt = Date.now();
        const answer = await recall(stores, subject);
        const sources =
          answer.mode === "summary"
            ? answer.claims.flatMap((c) => c.derivedFrom)
            : answer.events.map((e) => e.eventId);
        observations.push({ startedAt, mode: answer.mode, artifactId: answer.artifactId, sources });
      }
    });
    // Event-driven: revoke after the readers served summaries; stop after enough recalls began
    // after the revoke returned.
    const until = async (done: () => boolean) => {
      while (!done()) await new Promise((resolve) => setTimeout(resolve, 5));
    };
    const revoker = (async () => {
      await until(() => observations.length >= 10);
      await revokeEvents(deps, subject, ["m-7"]);
      revokedAt = Date.now();
      await until(() => observations.filter((o) => o.startedAt > revokedAt).length >= 10);
      stop = true;
    })();
    await Promise.all([...readers, revoker]);
    expect(observations.some((o) => o.artifactId === summaryId)).toBe(true);
    assertInvisibleAfter(observations, revokedAt, "m-7", summaryId);
  }, 60_000);
});
