// The consolidation worker `memgate serve` and `memgate mcp` run over the store they hold.
import { cpus } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import { appendEvents } from "#app/append.ts";
import { workOnMessage } from "#app/worker.ts";
import type { Snapshot } from "#domain/schemas.ts";
import { depsOverStore, factsBatch, temporaryStore } from "#harness/pipeline-builders.ts";
import {
  type Consolidations,
  InProcessWorker,
  MAX_REST_MS,
  restAfterConsolidation,
} from "#runtime/in-process-worker.ts";
import { type LoadReading, measureLoad } from "#runtime/machine-load.ts";

const opened: Array<{ stop(): Promise<void> } | SqliteStore> = [];
afterEach(async () => {
  for (const thing of opened.splice(0).reverse())
    if (thing instanceof SqliteStore) thing.close();
    else await thing.stop();
});

/** Reads what the subject's summary covers (for `expect.poll`). */
const coverage = (deps: ReturnType<typeof depsOnFreshStore>, subject: string) => async () =>
  (await deps.events.snapshot(subject)).expectedAlias?.coversThrough;

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
    await expect.poll(coverage(deps, "ana")).toBe(5);
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
    await expect.poll(coverage(deps, "cy")).toBe(5);
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
    await expect.poll(coverage(deps, "eve")).toBe(60);
  });

  it("a queued snapshot that appends overtook before its turn is built at the newest high water: one build, not two", async () => {
    const deps = depsOnFreshStore();
    // Queued at 5; the 55 after it ask for nothing more (one is pending).
    await appendEvents(deps, "jo", factsBatch(1, 5));
    expect((await appendEvents(deps, "jo", factsBatch(6, 60))).rebuildRequested).toBe(false);
    const built: number[] = [];
    const lines: string[] = [];
    const worker = await InProcessWorker.start(deps, {
      log: (line) => lines.push(line),
      sweepEveryMs: 3_600_000,
      consolidations: {
        work: async (body) => {
          built.push((body as Snapshot).highWater);
          return workOnMessage(deps, body);
        },
        close: async () => undefined,
      },
    });
    opened.push(worker);
    await expect.poll(coverage(deps, "jo")).toBe(60);
    await new Promise((resolve) => setTimeout(resolve, 100));
    // The start-up sweep's snapshot at 60 on no alias comes next, and is dropped: the alias moved.
    expect(built[0]).toBe(60);
    expect(lines.filter((line) => line.includes(": PUBLISHED "))).toEqual([
      expect.stringMatching(/^worker: jo at 60: PUBLISHED summary:jo:000060:/),
    ]);
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
    await expect.poll(coverage(deps, "ida"), { timeout: 5_000 }).toBe(60);
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

  describe("while requests and consolidations compete for the CPU", () => {
    const loaded: LoadReading = { servingBusy: 0.9, idleCores: 0.2 };

    it("rests three times as long as a consolidation took (a quarter of the time), at most a second", () => {
      expect(restAfterConsolidation(40, loaded)).toBe(120);
      expect(restAfterConsolidation(5_000, loaded)).toBe(MAX_REST_MS);
      // An idle core: the consolidation took nothing the requests needed.
      expect(restAfterConsolidation(40, { servingBusy: 0.9, idleCores: 1.2 })).toBe(0);
      // A quiet server (a backlog after a burst is caught up at once).
      expect(restAfterConsolidation(40, { servingBusy: 0.3, idleCores: 0 })).toBe(0);
    });

    /**
     * A worker whose consolidations take `tookMs` at least and run "off thread" (as `memgate
     * serve`'s do) unless `here`, over a load meter that answers `load`; two subjects wait in the
     * queue when it starts, and with `writes` 55 events come to the first one's subject while it
     * is built. Answers the first two consolidations' spans once both subjects are covered.
     */
    async function twoConsolidations(
      load: LoadReading,
      tookMs: number,
      { here = false, writes = true }: { here?: boolean; writes?: boolean } = {},
    ) {
      const deps = depsOnFreshStore();
      await appendEvents(deps, "fay", factsBatch(1, 5));
      await appendEvents(deps, "gus", factsBatch(1, 5));
      const spans: Array<{ start: number; end: number }> = [];
      let measured = 0;
      const consolidations: Consolidations = {
        ...(here ? {} : { offThread: true }),
        work: async (body) => {
          const span = { start: performance.now(), end: 0 };
          spans.push(span);
          if (spans.length === 1 && writes)
            await appendEvents(deps, (body as Snapshot).subject, factsBatch(6, 60));
          await new Promise((resolve) => setTimeout(resolve, tookMs));
          const outcome = await workOnMessage(deps, body);
          span.end = performance.now();
          return outcome;
        },
        close: async () => undefined,
      };
      const worker = await InProcessWorker.start(deps, {
        log: () => undefined,
        sweepEveryMs: 3_600_000,
        consolidations,
        load: () => {
          measured++;
          return () => load;
        },
      });
      opened.push(worker);
      for (const subject of ["fay", "gus"])
        await expect.poll(coverage(deps, subject), { timeout: 5_000 }).toBeGreaterThanOrEqual(5);
      const [first, second] = spans;
      if (!first || !second) throw new Error("two consolidations expected");
      return { gap: second.start - first.end, took: first.end - first.start, measured };
    }

    it("writes came while a consolidation was built under load: the next starts only after the rest", async () => {
      const { gap, took } = await twoConsolidations(loaded, 150);
      expect(took).toBeGreaterThanOrEqual(150);
      expect(gap).toBeGreaterThanOrEqual(3 * took - 20);
    });

    it("no write came while it was built (what a burst left is caught up): the next starts at once", async () => {
      const { gap } = await twoConsolidations(loaded, 150, { writes: false });
      expect(gap).toBeLessThan(200);
    });

    it("with an idle core, the next starts at once", async () => {
      const { gap } = await twoConsolidations({ servingBusy: 0.9, idleCores: 1.5 }, 150);
      expect(gap).toBeLessThan(200);
    });

    it("consolidations on the serving thread itself are never measured as the requests' load", async () => {
      const { gap, measured } = await twoConsolidations(loaded, 150, { here: true });
      expect(measured).toBe(0);
      expect(gap).toBeLessThan(200);
    });

    it("stopping ends a rest at once", async () => {
      const deps = depsOnFreshStore();
      await appendEvents(deps, "hal", factsBatch(1, 5));
      let consolidations = 0;
      const worker = await InProcessWorker.start(deps, {
        log: () => undefined,
        sweepEveryMs: 3_600_000,
        load: () => () => loaded,
        consolidations: {
          offThread: true,
          // Writes while it is built, and a long consolidation: a rest of a second follows it.
          work: async (body) => {
            consolidations++;
            await appendEvents(deps, "hal", factsBatch(6, 7));
            await new Promise((resolve) => setTimeout(resolve, 400));
            return workOnMessage(deps, body);
          },
          close: async () => undefined,
        },
      });
      await expect.poll(coverage(deps, "hal"), { timeout: 5_000 }).toBe(5);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const stopping = performance.now();
      await worker.stop();
      expect(performance.now() - stopping).toBeLessThan(500);
      expect(consolidations).toBe(1);
    });

    it("the default meter reads this thread's event loop and the machine's idle cores", async () => {
      const busy = measureLoad();
      const until = performance.now() + 200;
      while (performance.now() < until);
      const whileBusy = busy();
      expect(whileBusy.servingBusy).toBeGreaterThan(0.8);
      const quiet = measureLoad();
      await new Promise((resolve) => setTimeout(resolve, 200));
      const whileQuiet = quiet();
      expect(whileQuiet.servingBusy).toBeLessThan(0.5);
      for (const reading of [whileBusy, whileQuiet]) {
        expect(reading.idleCores).toBeGreaterThanOrEqual(0);
        expect(reading.idleCores).toBeLessThanOrEqual(cpus().length + 0.1);
      }
    });
  });
});
