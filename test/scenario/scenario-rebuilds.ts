import { describe, expect, it } from "vitest";
import { MemoryQueue } from "#adapters/embedded/memory-queue.ts";
import { MODELS } from "#adapters/models/models.ts";
import { appendEvents, revokeEvents, sweep } from "#app/append.ts";
import type { Deps } from "#app/deps.ts";
import { generate } from "#app/generate.ts";
import { publish } from "#app/publish.ts";
import { reject as rejectArtifact } from "#app/review.ts";
import { run } from "#app/run.ts";
import { takeSnapshot } from "#app/snapshot.ts";
import { workOnMessage } from "#app/worker.ts";
import { DETERMINISTIC_MODEL } from "#domain/consolidator.ts";
import { REBUILD_RETRY } from "#domain/rebuild.ts";
import type { Snapshot } from "#domain/schemas.ts";
import { MemoryEvent as MemoryEventSchema } from "#domain/schemas.ts";
import { depsOver, factsBatch } from "#harness/pipeline-builders.ts";
import { GenerationFailedError, type ModelPort, type ModelRequest } from "#ports/model.ts";
import { freshSubject, type ScenarioStores } from "./scenario-stores.ts";

/** Rebuilds: what they are made from, and rebuilds that stop. */
export function describeRebuildScenarios(name: string, open: () => ScenarioStores): void {
  describe(`${name}: rebuilds come from committed state`, () => {
    /** A queue that remembers what was sent. */
    const countingQueue = () => {
      const sent: Snapshot[] = [];
      const queue = new MemoryQueue();
      return {
        sent,
        queue: {
          send: async (snapshot: Snapshot) => {
            sent.push(snapshot);
            await queue.send(snapshot);
          },
          receive: (max: number) => queue.receive(max),
          ack: (receipt: string) => queue.ack(receipt),
          release: (receipt: string) => queue.release(receipt),
        },
      };
    };

    it("appending past rebuildAfterEvents requests exactly one rebuild", async () => {
      const stores = open();
      const { sent, queue } = countingQueue();
      const deps = depsOver(stores, { queue });
      const subject = freshSubject();
      const { rebuildAfterEvents } = await deps.settings.settings();
      expect(rebuildAfterEvents).toBe(50);
      await appendEvents(deps, subject, factsBatch(1, 5));
      expect(sent.map((s) => s.highWater)).toEqual([5]); // the first events: no summary yet
      expect((await run(deps, await takeSnapshot(deps, subject))).status).toBe("PUBLISHED");
      sent.length = 0;
      for (let from = 6; from <= 5 + 120; from += 10)
        await appendEvents(deps, subject, factsBatch(from, from + 9));
      // The tail reached 50 at highWater 55 (appended in batches of 10): one request, at that batch.
      expect(sent.map((s) => s.highWater)).toEqual([55]);
      expect((await sweep(deps)).requested.map((r) => r.subject)).toContain(subject);
    });

    it("the sweep finds nothing to do for a current subject, and finishes an epoch move nobody followed up", async () => {
      const stores = open();
      const deps = depsOver(stores);
      const subject = freshSubject();
      await appendEvents(deps, subject, factsBatch(1, 4));
      const published = await run(deps, await takeSnapshot(deps, subject));
      expect(published.status).toBe("PUBLISHED");
      expect((await sweep(deps)).requested.map((r) => r.subject)).not.toContain(subject);
      // An append that revokes, whose process "died" before invalidation: the store alone.
      await deps.events.append(subject, [
        MemoryEventSchema.parse({ eventId: "r-1", kind: "revocation", revokes: ["m-1"] }),
      ]);
      const { sent, queue } = countingQueue();
      const { requested } = await sweep({ ...deps, queue });
      expect(requested.find((r) => r.subject === subject)?.reason).toMatch(/the sources changed/);
      expect(sent.map((s) => s.subject)).toContain(subject);
      if (published.status === "PUBLISHED")
        expect((await deps.artifacts.getRecord(subject, published.artifactId))?.stale).toBe(true);
    });

    it("a candidate whose snapshot died becomes ABANDONED, and invalidation no longer reads it", async () => {
      const deps = depsOver(open());
      const subject = freshSubject();
      await appendEvents(deps, subject, factsBatch(1, 3));
      const snapshot = await takeSnapshot(deps, subject);
      const loser = await generate(deps, snapshot);
      expect((await run(deps, snapshot)).status).toBe("PUBLISHED");
      if (loser.status !== "CANDIDATE") throw new Error("expected a candidate");
      await expect(publish(deps, loser.artifactId)).rejects.toMatchObject({ reason: "alias-moved" });
      expect((await deps.artifacts.getRecord(subject, loser.artifactId))?.status).toBe("ABANDONED");
    });
  });

  describe(`${name}: rebuilds that stop`, () => {
    const start = Date.parse("2026-11-29T12:00:00Z");
    const minutes = (n: number) => new Date(start + n * 60_000);

    /**
     * A model that counts its calls for `subject` and answers as `answer` says (the store may hold
     * other tests' subjects, which the sweep finds too).
     */
    const countingModel = (subject: string, answer: () => Promise<{ answer: string; calls: [] }>) => {
      const model = {
        name: "counted",
        calls: 0,
        generate: (request: ModelRequest) => {
          if (request.snapshot.subject === subject) model.calls++;
          return answer();
        },
      };
      return model;
    };
    const forgets = () =>
      Promise.resolve({
        answer: JSON.stringify({ claims: [], pending: [], unresolvedConflicts: [], summary: "" }),
        calls: [] as [],
      });
    const fails = () => Promise.reject(new GenerationFailedError("the model is down"));

    /** The sweep at minute `at`, then the worker on whatever it queued (each message acknowledged). */
    async function sweepAndWork(deps: Deps, clock: { now: Date }, at: number) {
      clock.now = minutes(at);
      const report = await sweep(deps);
      for (const message of await deps.queue.receive(10)) {
        await workOnMessage(deps, message.body);
        await deps.queue.ack(message.receipt);
      }
      return report;
    }

    for (const [kind, answer] of [
      ["always refused by the gate", forgets],
      ["always failing", fails],
    ] as const)
      it(`a sweep every minute for an hour makes a bounded number of model calls for a subject whose model is ${kind}`, async () => {
        const subject = freshSubject();
        const model = countingModel(subject, answer);
        const clock = { now: minutes(0) };
        const deps = depsOver(open(), { model, now: () => clock.now });
        await appendEvents(deps, subject, factsBatch(1, 6));
        await deps.queue.receive(10).then((sent) => Promise.all(sent.map((m) => deps.queue.ack(m.receipt))));
        for (let minute = 0; minute < 60; minute++) await sweepAndWork(deps, clock, minute);
        // Attempts at minutes 0, 15 and 45 (15, then 30 minutes of backoff); the fourth would be at 105.
        expect(model.calls).toBe(3);
        const attempt = await deps.events.rebuildAttempt(subject);
        expect(attempt).toMatchObject({ highWater: 6, count: 3, parentArtifactId: null });
        expect(attempt?.outcome).toBe(kind === "always failing" ? "failed" : "REJECTED");
        // The fourth and last attempt, then the subject is left for a person: no more calls.
        expect((await sweepAndWork(deps, clock, 105)).requested.map((r) => r.subject)).toContain(subject);
        for (const minute of [106, 300, 24 * 60]) {
          const report = await sweepAndWork(deps, clock, minute);
          expect(report.left.map((r) => r.subject)).toContain(subject);
          expect(report.requested.map((r) => r.subject)).not.toContain(subject);
        }
        expect(model.calls).toBe(REBUILD_RETRY.maxAttempts);
      });

    it("an epoch move starts the attempts afresh, and a publish ends them", async () => {
      const stores = open();
      const clock = { now: minutes(0) };
      const subject = freshSubject();
      const refusing = countingModel(subject, forgets);
      const deps = depsOver(stores, { model: refusing, now: () => clock.now });
      await appendEvents(deps, subject, factsBatch(1, 6));
      for (let minute = 0; minute < 300; minute += 5) await sweepAndWork(deps, clock, minute);
      expect(refusing.calls).toBe(REBUILD_RETRY.maxAttempts);
      // A revocation moves the epoch: what was tried before no longer counts.
      await revokeEvents(deps, subject, ["m-2"]);
      const working = depsOver(stores, { now: () => clock.now, queue: deps.queue });
      await sweepAndWork(working, clock, 301);
      expect((await working.events.snapshot(subject)).expectedAlias).not.toBeNull();
      expect(refusing.calls).toBe(REBUILD_RETRY.maxAttempts);
      const after = await sweep(working);
      expect([...after.requested, ...after.waiting, ...after.left].map((r) => r.subject)).not.toContain(
        subject,
      );
    });

    it("a SHADOW waits for review instead of being generated again; a rejection counts as an attempt", async () => {
      const stores = open();
      await stores.settings.updateSettings({ publishMode: "shadow" });
      try {
        const clock = { now: minutes(0) };
        const subject = freshSubject();
        let calls = 0;
        const deterministic = MODELS[DETERMINISTIC_MODEL] as ModelPort;
        const deps = depsOver(stores, {
          model: {
            ...deterministic,
            generate: (request, signal) => {
              if (request.snapshot.subject === subject) calls++;
              return deterministic.generate(request, signal);
            },
          },
          now: () => clock.now,
        });
        await appendEvents(deps, subject, factsBatch(1, 6));
        for (let minute = 0; minute < 60; minute++) {
          const report = await sweepAndWork(deps, clock, minute);
          if (minute > 0) expect(report.waiting.map((r) => r.subject)).toContain(subject);
        }
        expect(calls).toBe(1);
        const shadow = (await deps.artifacts.listRecords(subject)).find((r) => r.status === "SHADOW");
        expect(shadow).toBeDefined();
        await rejectArtifact(deps, subject, shadow?.artifactId ?? "");
        // Rejected by a reviewer: retried after its backoff (15 minutes after the attempt), not at once.
        expect((await sweepAndWork(deps, clock, 61)).requested.map((r) => r.subject)).toContain(subject);
        expect(calls).toBe(2);
      } finally {
        await stores.settings.updateSettings({ publishMode: "live" });
      }
    });
  });
}
