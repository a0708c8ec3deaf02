// The consolidation worker `memgate serve` and `memgate mcp` run over the store they hold.
import { afterEach, describe, expect, it } from "vitest";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import { appendEvents } from "#app/append.ts";
import { workOnMessage } from "#app/worker.ts";
import { depsOverStore, factsBatch, temporaryStore } from "#harness/pipeline-builders.ts";
import { InProcessWorker } from "#runtime/in-process-worker.ts";

const opened: Array<{ stop(): Promise<void> } | SqliteStore> = [];
afterEach(async () => {
  for (const thing of opened.splice(0).reverse())
    if (thing instanceof SqliteStore) thing.close();
    else await thing.stop();
});

function depsOnFreshStore() {
  const store = temporaryStore("worker");
  opened.push(store);
  return depsOverStore(store);
}

describe("the in-process consolidation worker", () => {
  it("builds and publishes a rebuild an append requests, without being asked", async () => {
    const deps = depsOnFreshStore();
    const lines: string[] = [];
    const worker = await InProcessWorker.start(deps, { log: (line) => lines.push(line) });
    opened.push(worker);
    expect((await appendEvents(deps, "ana", factsBatch(1, 5))).rebuildRequested).toBe(true);
    worker.wake();
    await expect.poll(async () => (await deps.events.snapshot("ana")).expectedAlias?.coversThrough).toBe(5);
    expect(lines).toContainEqual(expect.stringMatching(/^worker: ana at 5: PUBLISHED summary:/));
  });

  it("a message sent to the queue wakes an idle worker at once, not at its next poll", async () => {
    const deps = depsOnFreshStore();
    const worker = await InProcessWorker.start(deps, {
      log: () => undefined,
      sweepEveryMs: 3_600_000,
      pollEveryMs: 3_600_000,
    });
    opened.push(worker);
    // Idle and waiting out an hour's poll: only the queue's call can wake it.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await appendEvents(deps, "cy", factsBatch(1, 5))).rebuildRequested).toBe(true);
    await expect.poll(async () => (await deps.events.snapshot("cy")).expectedAlias?.coversThrough).toBe(5);
  });

  it("a consolidation asked for takes its turn with the queue's: its snapshot sees what the queue published, so nothing is built twice or refused", async () => {
    const deps = depsOnFreshStore();
    // Appended before the worker starts: their rebuild waits in the queue.
    await appendEvents(deps, "bo", factsBatch(1, 8));
    const worker = await InProcessWorker.start(deps, { log: () => undefined });
    opened.push(worker);
    const asked = await Promise.all([worker.consolidate("bo"), worker.consolidate("bo")]);
    const records = await deps.artifacts.listRecords("bo");
    expect(records.map((record) => record.status)).toEqual(["PUBLISHED"]);
    // Whichever turn came first built it; every later one found it covering its snapshot.
    for (const { snapshot, outcome } of asked) {
      expect(snapshot.highWater).toBe(8);
      expect(["PUBLISHED", "dropped"]).toContain(outcome.status);
    }
  });

  it("writes committed while a summary was built ask for the next one when it is done, not at the next sweep", async () => {
    const deps = depsOnFreshStore();
    let first = true;
    const worker = await InProcessWorker.start(deps, {
      log: () => undefined,
      sweepEveryMs: 3_600_000,
      consolidations: {
        work: async (body) => {
          // 55 more events while the first summary is built: each append finds a rebuild needed already.
          if (first) {
            first = false;
            const during = await appendEvents(deps, "eve", factsBatch(6, 60));
            expect(during.rebuildRequested).toBe(false);
          }
          return workOnMessage(deps, body);
        },
        close: async () => undefined,
      },
    });
    opened.push(worker);
    await appendEvents(deps, "eve", factsBatch(1, 5));
    worker.wake();
    await expect.poll(async () => (await deps.events.snapshot("eve")).expectedAlias?.coversThrough).toBe(60);
  });

  it("a snapshot of the same events on an older alias (the sweep's, queued first) is dropped, and the one asked for after the publish is built", async () => {
    const deps = depsOnFreshStore();
    // Queued before the worker starts: a rebuild at 5; the 55 after it ask for none (one is pending).
    await appendEvents(deps, "ida", factsBatch(1, 5));
    await appendEvents(deps, "ida", factsBatch(6, 60));
    const lines: string[] = [];
    // Its start-up sweep queues a snapshot at 60 on no alias. Once 5 is published that one can only
    // be dropped; the request at 60 made then is the same events on the new alias: another message.
    const worker = await InProcessWorker.start(deps, {
      log: (line) => lines.push(line),
      sweepEveryMs: 3_600_000,
    });
    opened.push(worker);
    await expect
      .poll(async () => (await deps.events.snapshot("ida")).expectedAlias?.coversThrough, { timeout: 5_000 })
      .toBe(60);
    expect(lines).toContainEqual(expect.stringMatching(/^worker: ida at 60: dropped: the alias moved/));
  });

  it("stops after the consolidation under way, and takes no message after", async () => {
    const deps = depsOnFreshStore();
    await appendEvents(deps, "cy", factsBatch(1, 3));
    const worker = await InProcessWorker.start(deps, { log: () => undefined, sweepEveryMs: 10 });
    let settled = false;
    const running = worker.consolidate("cy").finally(() => {
      settled = true;
    });
    await worker.stop();
    expect(settled).toBe(true);
    expect(["PUBLISHED", "dropped"]).toContain((await running).outcome.status);
    expect((await deps.artifacts.listRecords("cy")).map((record) => record.status)).toEqual(["PUBLISHED"]);
    await appendEvents(deps, "dee", factsBatch(1, 2));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await deps.artifacts.listRecords("dee")).toEqual([]);
  });
});
