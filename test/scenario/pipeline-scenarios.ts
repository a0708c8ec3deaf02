import { describe, expect, it } from "vitest";
import { MemoryQueue } from "#adapters/embedded/memory-queue.ts";
import { MODELS } from "#adapters/models/models.ts";
import { appendEvents, changeTrustPolicy, revokeEvents, sweep } from "#app/append.ts";
import type { Deps } from "#app/deps.ts";
import { generate } from "#app/generate.ts";
import { publish } from "#app/publish.ts";
import { recall } from "#app/recall.ts";
import { renderServedRecallText } from "#app/recall-text.ts";
import { recover } from "#app/recover.ts";
import { approve, reject as rejectArtifact, review } from "#app/review.ts";
import { run } from "#app/run.ts";
import { adoptCurrentSelector, migrateSelectors } from "#app/selector-migration.ts";
import { readInputs, takeSnapshot } from "#app/snapshot.ts";
import { workOnMessage } from "#app/worker.ts";
import { DETERMINISTIC_MODEL } from "#domain/consolidator.ts";
import { mustPreserveFingerprint } from "#domain/must-preserve.ts";
import { REBUILD_RETRY } from "#domain/rebuild.ts";
import type { ConsolidationOutput, Snapshot } from "#domain/schemas.ts";
import { MemoryEvent as MemoryEventSchema } from "#domain/schemas.ts";
import { countTokens } from "#domain/tokens.ts";
import { depsOver, factsBatch, type PipelineStores } from "#harness/pipeline-builders.ts";
import type { ArtifactStore } from "#ports/artifacts.ts";
import { PublishRefusedError } from "#ports/errors.ts";
import { GenerationFailedError, type ModelPort, type ModelRequest } from "#ports/model.ts";
import { bucketReading as reading } from "../support/builders.ts";

/** A store set under test: the pipeline's stores and a way to make a subject look older. */
export interface ScenarioStores extends PipelineStores {
  /**
   * Makes a subject's clock look as an older store left it, written through the engine directly
   * (the pipeline itself never produces it): no selector mark (before v2), or "v2" (before v3).
   */
  forgetSelector(subject: string, mark?: "v2"): Promise<void>;
}

let subjects = 0;
const freshSubject = () => `scenario-${process.pid}-${++subjects}`;

export function describePipelineScenarios(name: string, open: () => ScenarioStores): void {
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

  describe(`${name}: recall in pages`, () => {
    it("raw recall pages through the valid events: every page bounded, together exactly the selection", async () => {
      const deps = depsOver(open());
      const subject = freshSubject();
      await appendEvents(deps, subject, factsBatch(1, 1500));
      await appendEvents(
        deps,
        subject,
        Array.from({ length: 40 }, (_, i) => ({
          eventId: `r-${i}`,
          kind: "revocation",
          revokes: [`m-${i * 37 + 1}`],
        })),
      );
      await appendEvents(deps, subject, factsBatch(1501, 2200));
      const clock = await deps.events.snapshot(subject);
      const { context } = await readInputs(deps, subject, clock.highWater);
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await recall(deps, subject, { cursor });
        expect(page.mode).toBe("raw");
        expect(page.events.length).toBeLessThanOrEqual(1000);
        seen.push(...page.events.map((e) => e.eventId));
        cursor = page.nextCursor ?? undefined;
        pages++;
      } while (cursor);
      expect(pages).toBe(3);
      expect(seen).toEqual(context.selection.validInputs.map((e) => e.eventId));
    });

    it("a token budget bounds each page; the summary's tail pages the same way", async () => {
      const deps = depsOver(open());
      const subject = freshSubject();
      await appendEvents(deps, subject, factsBatch(1, 30));
      const small = await recall(deps, subject, { budget: 200 });
      expect(small.events.length).toBeGreaterThan(0);
      expect(small.events.length).toBeLessThan(30);
      expect(small.nextCursor).not.toBeNull();
      expect((await run(deps, await takeSnapshot(deps, subject))).status).toBe("PUBLISHED");
      await appendEvents(deps, subject, factsBatch(31, 40));
      const first = await recall(deps, subject, { budget: 150 });
      expect(first.mode).toBe("summary");
      expect(first.claims.length).toBeGreaterThan(0);
      const rest = await recall(deps, subject, { cursor: first.nextCursor ?? "" });
      expect(rest.claims).toEqual([]);
      expect([...first.tail, ...rest.tail].map((e) => e.eventId)).toEqual(
        factsBatch(31, 40).map((e) => e.eventId),
      );
      await expect(recall(deps, subject, { cursor: "not-a-cursor" })).rejects.toThrow(
        /is not a cursor memgate issued/,
      );
    });
    it("recall reads an artifact's body and recall index once, answers alike from them, and reads again after a failed read", async () => {
      const stores = open();
      const deps = depsOver(stores);
      const subject = freshSubject();
      await appendEvents(deps, subject, factsBatch(1, 12));
      expect((await run(deps, await takeSnapshot(deps, subject))).status).toBe("PUBLISHED");
      await appendEvents(deps, subject, factsBatch(13, 15));
      // A store object of its own: its cache starts empty, and its reads are counted.
      const reads = { body: 0, index: 0 };
      let failNextBody = true;
      const counted: ArtifactStore = Object.create(stores.artifacts, {
        readArtifact: {
          value: (s: string, id: string) => {
            reads.body++;
            if (failNextBody) {
              failNextBody = false;
              return Promise.reject(new Error("disk hiccup"));
            }
            return stores.artifacts.readArtifact(s, id);
          },
        },
        readRecallIndex: {
          value: (s: string, id: string) => {
            reads.index++;
            return stores.artifacts.readRecallIndex(s, id);
          },
        },
      });
      const cached = { ...deps, artifacts: counted };
      expect(await recall(cached, subject)).toMatchObject({
        mode: "raw",
        reason: expect.stringMatching(/disk hiccup/),
      });
      const asked = [
        {},
        { budget: 120 },
        { budget: 120, format: "text" as const },
        { budget: 400, query: "fact" },
        { scope: "global", budget: 60 },
      ];
      const first = [];
      for (const options of asked) first.push(await recall(cached, subject, options));
      expect(reads).toEqual({ body: 2, index: 1 });
      for (const [i, options] of asked.entries()) {
        expect(await recall(cached, subject, options)).toEqual(first[i]);
        // The same answer as from the store itself.
        expect(await recall(deps, subject, options)).toEqual(first[i]);
      }
      expect(reads).toEqual({ body: 2, index: 1 });
      expect(first.every((answer) => answer.mode === "summary")).toBe(true);
      expect(first[1]?.omitted.claims).toBeGreaterThan(0);
    });
    it("a budget on the text counts the whole text: it fits, says what it left out, and every item is served or counted", async () => {
      const deps = depsOver(open());
      const subject = freshSubject();
      const notes = Array.from({ length: 6 }, (_, i) => ({
        eventId: `n-${i}`,
        kind: "note",
        text: `small talk number ${i} about the weather`,
      }));
      await appendEvents(deps, subject, [...factsBatch(1, 12), ...notes]);
      const raw = await recall(deps, subject, { format: "text", budget: 150 });
      expect(raw.coldInputs).toBe(0);
      expect(raw.servedTokens).toBeLessThanOrEqual(150);
      expect(raw.nextCursor).not.toBeNull();
      expect((await run(deps, await takeSnapshot(deps, subject))).status).toBe("PUBLISHED");
      await appendEvents(deps, subject, factsBatch(13, 15));

      const whole = await recall(deps, subject, { format: "text" });
      // The notes went cold: every summary recall counts them, with or without a query or budget.
      expect(whole.coldInputs).toBe(6);
      expect((await recall(deps, subject)).coldInputs).toBe(6);
      const wholeText = renderServedRecallText(whole).text;
      expect(wholeText).toContain("# cold: 6 inputs not shown; search them with");
      expect(countTokens(wholeText)).toBe(whole.servedTokens);
      expect(wholeText.endsWith(`# served: ${whole.servedTokens} tokens\n`)).toBe(true);
      expect((await recall(deps, subject, { format: "text", budget: whole.servedTokens })).omitted).toEqual(
        whole.omitted,
      );

      // Below what the first line and the notes cost, every item is left out and only they are served.
      const bare = await recall(deps, subject, { format: "text", budget: 0 });
      expect(bare).toMatchObject({ claims: [], pending: [], summary: null, tail: [] });
      expect(bare.omitted.claims).toBe(whole.claims.length);
      // ... and the answer says why, in the text and in its JSON.
      expect(bare.budgetBelowFrame).toEqual({ budget: 0, needed: expect.any(Number) });
      expect(renderServedRecallText(bare).text).toContain(
        `# the budget of 0 tokens is below what the header and notes alone need: ${bare.budgetBelowFrame?.needed}\n`,
      );
      expect(whole.budgetBelowFrame).toBeNull();
      const floor = bare.servedTokens;
      for (const budget of [floor, floor + 15, floor + 40, floor + 80, floor + 150, whole.servedTokens - 1]) {
        const answer = await recall(deps, subject, { format: "text", budget });
        const text = renderServedRecallText(answer).text;
        expect(countTokens(text)).toBe(answer.servedTokens);
        expect(answer.servedTokens).toBeLessThanOrEqual(budget);
        expect(answer.claims.length + answer.omitted.claims).toBe(whole.claims.length);
        expect(answer.pending.length + answer.omitted.pending).toBe(whole.pending.length);
        const leftOut = answer.omitted.claims + answer.omitted.pending + (answer.omitted.summary ? 1 : 0);
        expect(text.includes("# left out by the budget: ")).toBe(leftOut > 0);
        expect(text.includes("# more: cursor ")).toBe(answer.nextCursor !== null);
        expect(answer.tail.length === whole.tail.length).toBe(answer.nextCursor === null);
      }
      // The JSON budget is unchanged: the items' JSON, reported as servedTokens.
      const json = await recall(deps, subject, { budget: 200 });
      expect(json.servedTokens).toBeLessThanOrEqual(200);
      expect(json.servedTokens).toBe(
        [...json.claims, ...json.pending, ...json.tail].reduce(
          (sum, item) => sum + countTokens(JSON.stringify(item)),
          json.summary === null ? 0 : countTokens(json.summary),
        ),
      );
    });
  });

  describe(`${name}: forged and damaged inputs`, () => {
    it("a snapshot beyond the log is refused at generate (beyond-log), nothing recorded; the log goes on", async () => {
      const deps = depsOver(open());
      const subject = freshSubject();
      await appendEvents(deps, subject, factsBatch(1, 17));
      const forged = { subject, highWater: 999, inputEpoch: 0, expectedAlias: null };
      await expect(generate(deps, forged)).rejects.toMatchObject({ reason: "beyond-log" });
      expect(await deps.artifacts.listRecords(subject)).toEqual([]);
      await appendEvents(deps, subject, factsBatch(18, 20));
      expect((await run(deps, await takeSnapshot(deps, subject))).status).toBe("PUBLISHED");
      expect((await recall(deps, subject)).mode).toBe("summary");
    });

    it("a rejected answer on a big log is recorded REJECTED: the record keeps a compact report, the full one is stored", async () => {
      const forgetful: ModelPort = {
        name: "forgetful",
        generate: async () => ({
          answer: JSON.stringify({ claims: [], pending: [], unresolvedConflicts: [], summary: "" }),
          calls: [],
        }),
      };
      const deps = depsOver(open(), { model: forgetful });
      const subject = freshSubject();
      for (let from = 1; from <= 3000; from += 500)
        await appendEvents(deps, subject, factsBatch(from, from + 499));
      const outcome = await generate(deps, await takeSnapshot(deps, subject));
      expect(outcome.status).toBe("REJECTED");
      if (outcome.status !== "REJECTED") return;
      const record = await deps.artifacts.getRecord(subject, outcome.artifactId);
      expect(record?.status).toBe("REJECTED");
      expect(record?.gate.reasons).toHaveLength(25);
      expect(record?.gate.omittedReasons).toBe(2975);
      expect(record?.gate.reasonCounts).toEqual({ missing: 3000 });
      const full = await deps.artifacts.readReport(subject, outcome.artifactId);
      expect(full.reasons).toHaveLength(3000);
      expect((await deps.artifacts.listRecords(subject)).map((r) => r.status)).toEqual(["REJECTED"]);
    }, 240_000); // a volume test (3,000 events): its time is the engine's, never asserted

    it("a summary whose body cannot be read is never an error: recall answers raw and says why", async () => {
      const stores = open();
      const subject = freshSubject();
      const deps = depsOver(stores);
      await appendEvents(deps, subject, factsBatch(1, 3));
      expect((await run(deps, await takeSnapshot(deps, subject))).status).toBe("PUBLISHED");
      // The same store, whose artifact body reads back damaged.
      const damaged: ArtifactStore = Object.create(stores.artifacts, {
        readArtifact: { value: async () => ({ claims: "truncated" }) },
      });
      const broken = depsOver({ ...stores, artifacts: damaged });
      const answer = await recall(broken, subject);
      expect(answer.mode).toBe("raw");
      expect(answer.reason).toMatch(/cannot be read/);
      expect(answer.events).toHaveLength(3);
    });
  });

  describe(`${name}: moving a subject from selector v1 or v2 to v3`, () => {
    const chain = [
      {
        eventId: "race-1",
        kind: "fact",
        text: "Race on Oct 4",
        assertions: [{ key: "race/date", value: { date: "2026-10-04" }, polarity: "affirmed" }],
      },
      {
        eventId: "race-2",
        kind: "fact",
        text: "Race moved to Oct 11",
        supersedes: ["race-1"],
        assertions: [{ key: "race/date", value: { date: "2026-10-11" }, polarity: "affirmed" }],
      },
      {
        eventId: "race-3",
        kind: "fact",
        text: "Race moved to Oct 18",
        supersedes: ["race-2"],
        assertions: [{ key: "race/date", value: { date: "2026-10-18" }, polarity: "affirmed" }],
      },
    ];

    it("a v1 summary that v3 would not build stops being served once, and the rebuild uses v3", async () => {
      const stores = open();
      const subject = freshSubject();
      const v1 = depsOver(stores, { selectorVersion: "v1" });
      await appendEvents(v1, subject, chain);
      await stores.forgetSelector(subject);
      expect(await stores.events.selectorVersion(subject)).toBe("v1");
      const old = await run(v1, await takeSnapshot(v1, subject));
      expect(old.status).toBe("PUBLISHED");
      expect((await recall(v1, subject)).claims.map((c) => [c.derivedFrom.join(), c.status])).toEqual([
        ["race-1", "contested"],
        ["race-3", "contested"],
      ]);

      const deps = depsOver(stores);
      const migration = await adoptCurrentSelector(deps, subject);
      expect(migration?.epochMoved).toBe(true);
      expect(migration?.from).toBe("v1");
      expect(migration?.differences).toEqual([
        "no longer valid: race-1",
        "no longer a conflict: race/date @ global [race-1, race-3]",
      ]);
      expect((await recall(deps, subject)).mode).toBe("raw");
      expect(await stores.events.selectorVersion(subject)).toBe("v3");
      expect(await adoptCurrentSelector(deps, subject)).toBeNull();

      const rebuilt = await run(deps, await takeSnapshot(deps, subject));
      expect(rebuilt.status).toBe("PUBLISHED");
      if (rebuilt.status !== "PUBLISHED") return;
      expect((await deps.artifacts.readManifest(subject, rebuilt.artifactId)).selectorVersion).toBe("v3");
      const served = await recall(deps, subject);
      expect(served.mode).toBe("summary");
      expect(served.claims.map((c) => [c.derivedFrom.join(), c.status])).toEqual([["race-3", "settled"]]);
    });

    it.each([2, 3, 10])(
      "a chain of %i supersessions in the store leaves only the newest; revoking links revives what they superseded",
      async (length) => {
        const deps = depsOver(open());
        const subject = freshSubject();
        const links = Array.from({ length }, (_, i) => ({
          eventId: `v-${i + 1}`,
          kind: "fact",
          text: `version ${i + 1}`,
          ...(i > 0 ? { supersedes: [`v-${i}`] } : {}),
          assertions: [
            {
              key: "deadline",
              value: { date: `2026-12-${String(i + 1).padStart(2, "0")}` },
              polarity: "affirmed",
            },
          ],
        }));
        // One link per append: each supersession changes validity and moves the epoch.
        for (const link of links) await appendEvents(deps, subject, [link]);
        const valid = async () => {
          const clock = await deps.events.snapshot(subject);
          const { context } = await readInputs(deps, subject, clock.highWater);
          return { ids: [...context.selection.validIds], conflicts: context.selection.conflicts.length };
        };
        expect(await valid()).toEqual({ ids: [`v-${length}`], conflicts: 0 });
        expect((await deps.events.snapshot(subject)).inputEpoch).toBe(length - 1);
        const middle = Math.ceil(length / 2);
        if (length > 2) {
          const revoked = await revokeEvents(deps, subject, [`v-${middle}`]);
          expect(revoked.epochMoved).toBe(true);
          expect(await valid()).toEqual({ ids: [`v-${middle - 1}`, `v-${length}`], conflicts: 1 });
        }
        // Revoking the newest revives the link it superseded, unless that one is revoked too.
        await revokeEvents(deps, subject, [`v-${length}`]);
        const expected =
          length === 2
            ? ["v-1"]
            : middle === length - 1
              ? [`v-${middle - 1}`]
              : [`v-${middle - 1}`, `v-${length - 1}`];
        expect((await valid()).ids).toEqual(expected);
      },
    );

    it.each([
      [undefined, "v1"],
      ["v2", "v2"],
    ] as const)(
      "a subject its old selector and v3 read alike keeps its summary (mark %s): the epoch does not move, once",
      async (mark, from) => {
        const stores = open();
        const subject = freshSubject();
        const deps = depsOver(stores);
        await appendEvents(deps, subject, factsBatch(1, 5));
        expect((await run(deps, await takeSnapshot(deps, subject))).status).toBe("PUBLISHED");
        await stores.forgetSelector(subject, mark);
        expect(await stores.events.subjectsNotOn("v3")).toContain(subject);
        const epoch = (await deps.events.snapshot(subject)).inputEpoch;
        const migrations = await migrateSelectors(deps);
        expect(migrations.find((m) => m.subject === subject)).toEqual({
          subject,
          from,
          epochMoved: false,
          differences: [],
        });
        expect(await stores.events.subjectsNotOn("v3")).not.toContain(subject);
        expect((await migrateSelectors(deps)).find((m) => m.subject === subject)).toBeUndefined();
        expect((await deps.events.snapshot(subject)).inputEpoch).toBe(epoch);
        expect((await recall(deps, subject)).mode).toBe("summary");
      },
    );
  });

  describe(`${name}: the seed's race`, () => {
    it("a new task (H=220) wins, the old task (H=184) with the same parent fails its CAS every time, coverage stays 220", async () => {
      const deps = depsOver(open());
      const subject = freshSubject();
      await appendEvents(deps, subject, factsBatch(1, 90));
      expect((await run(deps, await takeSnapshot(deps, subject))).status).toBe("PUBLISHED");
      await appendEvents(deps, subject, factsBatch(91, 220));
      const oldTask = await takeSnapshot(deps, subject, 184);
      const newTask = await takeSnapshot(deps, subject, 220);
      expect(oldTask.expectedAlias).toEqual(newTask.expectedAlias);
      const older = await generate(deps, oldTask);
      const newer = await generate(deps, newTask);
      if (older.status !== "CANDIDATE" || newer.status !== "CANDIDATE")
        throw new Error("both candidates must pass the gate");
      expect((await publish(deps, newer.artifactId)).status).toBe("PUBLISHED");
      // The first attempt loses the CAS; the candidate is then ABANDONED and every retry is refused.
      for (const reason of ["alias-moved", "artifact-not-publishable", "artifact-not-publishable"]) {
        await expect(publish(deps, older.artifactId)).rejects.toMatchObject({ reason });
        expect((await deps.alias.readAlias(subject))?.coversThrough).toBe(220);
      }
      // The switch itself refuses the old task too, whatever its record says.
      await expect(
        deps.alias.publishIfUnchanged({
          subject,
          artifactId: older.artifactId,
          expectedAlias: oldTask.expectedAlias,
          inputEpoch: oldTask.inputEpoch,
          newCoversThrough: 184,
        }),
      ).rejects.toBeInstanceOf(PublishRefusedError);
      expect((await deps.alias.readAlias(subject))?.coversThrough).toBe(220);
      expect((await recall(deps, subject)).artifactId).toBe(newer.artifactId);
    });
  });

  describe(`${name}: faults`, () => {
    it("refuses the switch when an input is revoked after the candidate passed the gate; recall goes raw", async () => {
      const deps = depsOver(open());
      const subject = freshSubject();
      await appendEvents(deps, subject, factsBatch(1, 10));
      const candidate = await generate(deps, await takeSnapshot(deps, subject));
      if (candidate.status !== "CANDIDATE") throw new Error("expected a candidate");
      await revokeEvents(deps, subject, ["m-3"], "wrong");
      await expect(publish(deps, candidate.artifactId)).rejects.toBeInstanceOf(PublishRefusedError);
      expect(await deps.alias.readAlias(subject)).toBeNull();
      const answer = await recall(deps, subject);
      expect(answer.mode).toBe("raw");
      expect(answer.events.map((e) => e.eventId)).not.toContain("m-3");
      expect((await deps.artifacts.getRecord(subject, candidate.artifactId))?.stale).toBe(true);
    });

    it("with invalidation not yet run, the publish re-check itself refuses: on the input root, and on the moved epoch", async () => {
      const deps = depsOver(open());
      const subject = freshSubject();
      await appendEvents(deps, subject, factsBatch(1, 10));
      const snapshot = await takeSnapshot(deps, subject);
      const candidate = await generate(deps, snapshot);
      if (candidate.status !== "CANDIDATE") throw new Error("expected a candidate");
      // A twin built from a manifest whose input root does not match the log (a candidate whose
      // inputs were read wrong): same epoch, so only the root comparison can refuse it.
      const twinId = `${candidate.artifactId}-twin`;
      const manifest = await deps.artifacts.readManifest(subject, candidate.artifactId);
      await deps.artifacts.writeArtifact(subject, twinId, {
        body: await deps.artifacts.readArtifact(subject, candidate.artifactId),
        manifest: { ...manifest, artifactId: twinId, inputRoot: `sha256:${"0".repeat(64)}` },
      });
      const record = await deps.artifacts.getRecord(subject, candidate.artifactId);
      await deps.artifacts.recordArtifact({ ...(record as NonNullable<typeof record>), artifactId: twinId });
      await expect(publish(deps, twinId)).rejects.toThrow(/valid inputs of .* changed \(input root/);
      // The revocation written by the store alone (the appending process died before invalidating).
      await deps.events.append(subject, [
        MemoryEventSchema.parse({ eventId: "r-3", kind: "revocation", revokes: ["m-3"] }),
      ]);
      expect((await deps.artifacts.getRecord(subject, candidate.artifactId))?.stale).toBe(false);
      await expect(publish(deps, candidate.artifactId)).rejects.toMatchObject({ reason: "epoch-moved" });
      expect(await deps.alias.readAlias(subject)).toBeNull();
      expect((await recall(deps, subject)).mode).toBe("raw");
    });

    it("a snapshot below where its epoch began (through 15 after a revocation of m-15 at 16) is refused at every step; m-15 is never served", async () => {
      const deps = depsOver(open());
      const subject = freshSubject();
      await appendEvents(deps, subject, factsBatch(1, 15));
      const built = await generate(deps, await takeSnapshot(deps, subject));
      if (built.status !== "CANDIDATE") throw new Error("expected a candidate");
      await revokeEvents(deps, subject, ["m-15"], "wrong");
      const clock = await deps.events.snapshot(subject);
      expect(clock).toMatchObject({ highWater: 16, inputEpoch: 1, epochMovedAt: 16 });

      // `memgate snapshot --through 15`: the snapshot carried epoch 1, judged validity through 15.
      await expect(takeSnapshot(deps, subject, 15)).rejects.toMatchObject({ reason: "epoch-moved" });
      // Such a message, handed to generate or to the worker, is refused before any generation.
      const forged = { subject, highWater: 15, inputEpoch: clock.inputEpoch, expectedAlias: null };
      await expect(generate(deps, forged)).rejects.toMatchObject({ reason: "epoch-moved" });
      expect(await workOnMessage(deps, JSON.stringify(forged))).toMatchObject({
        action: "ack",
        status: "refused",
        refusal: "epoch-moved",
      });
      // A candidate one made (its inputs judged through 15, m-15 among them; epoch 1) never publishes.
      const twinId = `${built.artifactId}-epoch-1`;
      const manifest = await deps.artifacts.readManifest(subject, built.artifactId);
      expect(manifest.inputIds).toContain("m-15");
      await deps.artifacts.writeArtifact(subject, twinId, {
        body: await deps.artifacts.readArtifact(subject, built.artifactId),
        manifest: { ...manifest, artifactId: twinId, inputEpoch: clock.inputEpoch },
      });
      const record = await deps.artifacts.getRecord(subject, built.artifactId);
      await deps.artifacts.recordArtifact({
        ...(record as NonNullable<typeof record>),
        artifactId: twinId,
        inputEpoch: clock.inputEpoch,
        status: "CANDIDATE",
        stale: false,
      });
      await expect(publish(deps, twinId)).rejects.toMatchObject({ reason: "epoch-moved" });
      expect(await deps.alias.readAlias(subject)).toBeNull();
      expect((await deps.artifacts.getRecord(subject, twinId))?.status).toBe("ABANDONED");

      // The snapshot at the clock publishes, and what it serves never cites m-15.
      expect((await run(deps, await takeSnapshot(deps, subject))).status).toBe("PUBLISHED");
      const served = await recall(deps, subject);
      expect(served.mode).toBe("summary");
      expect(served.claims.length).toBe(14);
      expect(served.claims.flatMap((claim) => claim.derivedFrom)).not.toContain("m-15");
    });

    it("a revocation makes the published summary STALE and unserved at once; a rebuild serves again", async () => {
      const deps = depsOver(open());
      const subject = freshSubject();
      await appendEvents(deps, subject, factsBatch(1, 10));
      const first = await run(deps, await takeSnapshot(deps, subject));
      await revokeEvents(deps, subject, ["m-2"]);
      const raw = await recall(deps, subject);
      expect(raw.mode).toBe("raw");
      expect(raw.events.map((e) => e.eventId)).not.toContain("m-2");
      expect(
        (await deps.artifacts.getRecord(subject, (first as { artifactId: string }).artifactId))?.stale,
      ).toBe(true);
      const rebuilt = await run(deps, await takeSnapshot(deps, subject));
      expect(rebuilt.status).toBe("PUBLISHED");
      const served = await recall(deps, subject);
      expect(served.mode).toBe("summary");
      expect(served.claims.flatMap((c) => c.derivedFrom)).not.toContain("m-2");
    });

    it("a raised trust policy makes summaries derived from now-untrusted inputs STALE", async () => {
      const deps = depsOver(open());
      const subject = freshSubject();
      await appendEvents(deps, subject, [
        ...factsBatch(1, 4),
        {
          eventId: "t-1",
          kind: "fact",
          text: "build is green",
          trust: "tool",
          assertions: [{ key: "build", value: { text: "green" }, polarity: "affirmed" }],
        },
      ]);
      const first = (await run(deps, await takeSnapshot(deps, subject))) as { artifactId: string };
      const changed = await changeTrustPolicy(deps, subject, { minTrust: "user", blockedSources: [] });
      expect(changed.staled).toEqual([first.artifactId]);
      const raw = await recall(deps, subject);
      expect(raw.mode).toBe("raw");
      expect(raw.events.map((e) => e.eventId)).not.toContain("t-1");
      await run(deps, await takeSnapshot(deps, subject));
      const served = await recall(deps, subject);
      expect(served.claims.flatMap((c) => c.derivedFrom)).not.toContain("t-1");
      // Blocking a source no event comes from changes no validity: the epoch stays, the summary serves.
      const clock = await deps.events.snapshot(subject);
      const unchanged = await changeTrustPolicy(deps, subject, {
        minTrust: "user",
        blockedSources: ["web:*"],
      });
      expect(unchanged).toMatchObject({ epochMoved: false, inputEpoch: clock.inputEpoch, staled: [] });
      expect(await deps.events.trustPolicy(subject)).toEqual({ minTrust: "user", blockedSources: ["web:*"] });
      expect((await recall(deps, subject)).mode).toBe("summary");
    });

    it("a new conflict stops serving the summary without making it STALE; the rebuild keeps both sides", async () => {
      const deps = depsOver(open());
      const subject = freshSubject();
      await appendEvents(deps, subject, factsBatch(1, 4));
      const first = (await run(deps, await takeSnapshot(deps, subject))) as { artifactId: string };
      const conflicting = await appendEvents(deps, subject, [
        {
          eventId: "x-1",
          kind: "decision",
          text: "item 2 is 3 km",
          assertions: [{ key: "item-2", value: { quantity: "3", unit: "km" }, polarity: "affirmed" }],
        },
      ]);
      expect(conflicting).toMatchObject({
        epochMoved: true,
        validityChanged: false,
        staled: [],
        rebuildRequested: true,
      });
      expect((await recall(deps, subject)).mode).toBe("raw");
      expect((await deps.artifacts.getRecord(subject, first.artifactId))?.status).toBe("PUBLISHED");
      await run(deps, await takeSnapshot(deps, subject));
      const served = await recall(deps, subject);
      expect(served.unresolvedConflicts).toEqual([
        { key: "item-2", scope: "global", members: ["m-2", "x-1"] },
      ]);
      expect((await deps.artifacts.getRecord(subject, first.artifactId))?.status).toBe("SUPERSEDED");
    });

    it("a generation timeout records nothing and is a generation failure", async () => {
      const deps = depsOver(open(), { model: MODELS.slow as ModelPort, generationTimeoutMs: 50 });
      const subject = freshSubject();
      await appendEvents(deps, subject, factsBatch(1, 5));
      await expect(generate(deps, await takeSnapshot(deps, subject))).rejects.toBeInstanceOf(
        GenerationFailedError,
      );
      expect(await deps.artifacts.listRecords(subject)).toEqual([]);
      expect((await recall(deps, subject)).mode).toBe("raw");
    });

    it("the deadline ends a generation even when the model ignores the abort signal", async () => {
      let late: () => void = () => {};
      const deaf: ModelPort = {
        name: "deaf",
        // Never looks at the signal; answers only when the test lets it, long after the deadline.
        generate: () => new Promise((resolve) => (late = () => resolve({ answer: "{}", calls: [] }))),
      };
      const deps = depsOver(open(), { model: deaf, generationTimeoutMs: 50 });
      const subject = freshSubject();
      await appendEvents(deps, subject, factsBatch(1, 3));
      await expect(generate(deps, await takeSnapshot(deps, subject))).rejects.toThrow(
        /did not answer within 50 ms/,
      );
      late();
      expect(await deps.artifacts.listRecords(subject)).toEqual([]);
    });

    it("an answer with missing fields is REJECTED, kept for audit, never served", async () => {
      const deps = depsOver(open(), { model: MODELS["missing-fields"] as ModelPort });
      const subject = freshSubject();
      await appendEvents(deps, subject, factsBatch(1, 5));
      const outcome = await run(deps, await takeSnapshot(deps, subject));
      expect(outcome.status).toBe("REJECTED");
      const [record] = await deps.artifacts.listRecords(subject);
      expect(record?.gate.reasons.map((r) => r.code)).toContain("schema-invalid");
      await expect(publish(deps, record?.artifactId as string)).rejects.toMatchObject({
        reason: "artifact-not-publishable",
      });
      expect((await recall(deps, subject)).mode).toBe("raw");
    });

    it.each(["polarity-flip", "number-nudge", "hallucinate", "cite-revoked", "truncated"])(
      "a %s answer is REJECTED by the gate",
      async (model) => {
        const deps = depsOver(open(), { model: MODELS[model] as ModelPort });
        const subject = freshSubject();
        await appendEvents(deps, subject, [
          ...factsBatch(1, 6),
          { eventId: "r-1", kind: "revocation", revokes: ["m-1"] },
        ]);
        expect((await run(deps, await takeSnapshot(deps, subject))).status).toBe("REJECTED");
        expect(await deps.alias.readAlias(subject)).toBeNull();
      },
    );
  });

  describe(`${name}: determinism`, () => {
    it("running the same snapshot twice yields the same input root, must-preserve set and conflict set", async () => {
      const deps = depsOver(open());
      const subject = freshSubject();
      await appendEvents(deps, subject, [
        ...factsBatch(1, 12),
        {
          eventId: "c-1",
          kind: "decision",
          text: "launch",
          assertions: [{ key: "item-3", value: { quantity: "4", unit: "km" }, polarity: "affirmed" }],
        },
      ]);
      const snapshot = await takeSnapshot(deps, subject);
      const first = await generate(deps, snapshot);
      const second = await generate(deps, snapshot);
      if (first.status === "dropped" || second.status === "dropped") throw new Error("not dropped");
      expect(second.artifactId).not.toBe(first.artifactId);
      expect(second.manifest.inputRoot).toBe(first.manifest.inputRoot);
      const a = await readInputs(deps, subject, snapshot.highWater);
      const b = await readInputs(deps, subject, snapshot.highWater);
      expect(mustPreserveFingerprint(b.context.mustPreserve)).toEqual(
        mustPreserveFingerprint(a.context.mustPreserve),
      );
      expect(b.context.selection.conflicts).toEqual(a.context.selection.conflicts);
      expect(a.context.selection.conflicts).toHaveLength(1);
    });

    it("drops a snapshot whose epoch already moved", async () => {
      const deps = depsOver(open());
      const subject = freshSubject();
      await appendEvents(deps, subject, factsBatch(1, 3));
      const snapshot = await takeSnapshot(deps, subject);
      await revokeEvents(deps, subject, ["m-1"]);
      expect((await generate(deps, snapshot)).status).toBe("dropped");
    });
  });

  describe(`${name}: release`, () => {
    it("shadow mode records SHADOW, review shows the checklist, approve publishes through the CAS", async () => {
      const stores = open();
      const deps = depsOver(stores);
      const subject = freshSubject();
      await appendEvents(deps, subject, factsBatch(1, 4));
      await stores.settings.updateSettings({ publishMode: "shadow" });
      try {
        const outcome = await run(deps, await takeSnapshot(deps, subject));
        expect(outcome.status).toBe("SHADOW");
        expect((await recall(deps, subject)).mode).toBe("raw");
        const shown = await review(deps, subject);
        expect(shown.shadows).toHaveLength(1);
        expect(shown.shadows[0]?.checklist.every((line) => line.keptBy !== null)).toBe(true);
        expect((await approve(deps, (outcome as { artifactId: string }).artifactId)).status).toBe(
          "PUBLISHED",
        );
        expect((await recall(deps, subject)).mode).toBe("summary");
      } finally {
        await stores.settings.updateSettings({ publishMode: "live" });
      }
    });

    it("the store's budget setting is the consolidation's budget when none is given: over the deployment's default, under --budget", async () => {
      const stores = open();
      const subject = freshSubject();
      const before = await stores.settings.settings();
      expect(before.budget).toBeNull();
      await appendEvents(depsOver(stores), subject, factsBatch(1, 8));
      // Eight must-preserve claims cannot fit 20 tokens: the gate refuses the answer over-budget.
      const gated = async (overrides: Partial<Deps>) => {
        const outcome = await generate(
          depsOver(stores, overrides),
          await takeSnapshot(depsOver(stores), subject),
        );
        if (outcome.status === "dropped") throw new Error(outcome.reason);
        return outcome.gate.reasons.some((reason) => reason.code === "over-budget")
          ? "over-budget"
          : outcome.status;
      };
      const set = await stores.settings.updateSettings({ budget: 20 });
      try {
        expect(set).toMatchObject({ ...before, budget: 20 });
        expect((await stores.settings.settings()).budget).toBe(20);
        expect(await gated({})).toBe("over-budget");
        expect(await gated({ budget: 100_000 })).toBe("CANDIDATE");
        expect(await gated({ defaultBudget: 100_000 })).toBe("over-budget");
        await stores.settings.updateSettings({ budget: 100_000 });
        expect(await gated({ defaultBudget: 20 })).toBe("CANDIDATE");
      } finally {
        await stores.settings.updateSettings({ budget: null });
      }
      expect(await stores.settings.settings()).toEqual(before);
      expect(await gated({ defaultBudget: 20 })).toBe("over-budget");
      expect(await gated({})).toBe("CANDIDATE");
    });

    it("bypass serves raw; recovery rolls forward with coverage not below the alias's", async () => {
      const stores = open();
      const deps = depsOver(stores);
      const subject = freshSubject();
      await appendEvents(deps, subject, factsBatch(1, 6));
      await run(deps, await takeSnapshot(deps, subject));
      await stores.settings.updateSettings({ recallBypass: true });
      try {
        expect((await recall(deps, subject)).mode).toBe("raw");
      } finally {
        await stores.settings.updateSettings({ recallBypass: false });
      }
      await appendEvents(deps, subject, factsBatch(7, 8));
      const before = await deps.alias.readAlias(subject);
      const recovered = await recover(deps, subject);
      expect(recovered.status).toBe("PUBLISHED");
      const after = await deps.alias.readAlias(subject);
      expect(after?.coversThrough).toBeGreaterThanOrEqual(before?.coversThrough ?? 0);
      expect((await deps.artifacts.listRecords(subject)).map((r) => r.status).sort()).toEqual([
        "PUBLISHED",
        "SUPERSEDED",
      ]);
      // Recovering a summary that is already what recovery would build says so and builds nothing.
      expect(await recover(deps, subject)).toMatchObject({ status: "current" });
      expect(await deps.artifacts.listRecords(subject)).toHaveLength(2);
      // Another selector is another summary: recovery with v1 builds one.
      expect((await recover({ ...deps, selectorVersion: "v1" }, subject)).status).toBe("PUBLISHED");
    });
  });

  describe(`${name}: readings under a latest rule (selector v3)`, () => {
    const sizes = (claims: ConsolidationOutput["claims"]) =>
      claims
        .filter((claim) => claim.key === "backup.bucket_size")
        .map((claim) => [
          "quantity" in claim.value ? claim.value.quantity : "?",
          claim.status,
          claim.asOf ?? null,
        ]);
    const RULE = { minTrust: "tool" as const, blockedSources: [], latest: ["backup.bucket_size"] };

    it("a rule turns two readings from a dispute into a current and an earlier one; recall, review and recovery show it", async () => {
      const stores = open();
      const deps = depsOver(stores);
      const subject = freshSubject();
      await appendEvents(deps, subject, [
        reading("oct", "4.6", "2026-10-26T12:15:00Z"),
        reading("dec", "4.1", "2026-12-03T09:20:00Z"),
      ]);
      expect((await run(deps, await takeSnapshot(deps, subject))).status).toBe("PUBLISHED");
      // Without a rule nothing changes: the two readings are served as a dispute.
      const disputed = await recall(deps, subject);
      expect(disputed.unresolvedConflicts.map((c) => c.members)).toEqual([["dec", "oct"]]);
      expect(sizes(disputed.claims)).toEqual([
        ["4.6", "contested", null],
        ["4.1", "contested", null],
      ]);

      // Declaring the key a reading changes what holds: the epoch moves once, the summary goes stale.
      expect((await changeTrustPolicy(deps, subject, RULE)).epochMoved).toBe(true);
      // A rule that changes nothing more moves nothing.
      const wider = { ...RULE, latest: ["backup.bucket_size", "stock.*"] };
      expect((await changeTrustPolicy(deps, subject, wider)).epochMoved).toBe(false);
      const raw = await recall(deps, subject);
      expect(raw.mode).toBe("raw");
      expect(raw.earlierReadings).toEqual([
        {
          eventId: "oct",
          key: "backup.bucket_size",
          scope: "global",
          polarity: "affirmed",
          value: { quantity: "4.6", unit: "TB" },
          occurredAt: "2026-10-26T12:15:00Z",
          latest: "dec",
        },
      ]);

      await stores.settings.updateSettings({ publishMode: "shadow" });
      try {
        const shadow = await run(deps, await takeSnapshot(deps, subject));
        expect(shadow.status).toBe("SHADOW");
        const shown = await review(deps, subject);
        expect(shown.shadows[0]?.earlierReadings).toEqual([
          {
            eventId: "oct",
            key: "backup.bucket_size",
            scope: "global",
            reading: "4.6 TB",
            occurredAt: "2026-10-26T12:15:00Z",
            latest: "dec",
            holds: "4.1 TB",
          },
        ]);
        expect(shown.text).toContain("earlier reading oct (2026-10-26T12:15:00Z)");
        const artifactId = (shadow as { artifactId: string }).artifactId;
        expect((await deps.artifacts.readManifest(subject, artifactId)).earlierReadings).toEqual([
          { eventId: "oct", key: "backup.bucket_size", scope: "global", latest: "dec" },
        ]);
        expect((await approve(deps, artifactId)).status).toBe("PUBLISHED");
      } finally {
        await stores.settings.updateSettings({ publishMode: "live" });
      }
      const served = await recall(deps, subject);
      expect(served.mode).toBe("summary");
      expect(served.unresolvedConflicts).toEqual([]);
      expect(sizes(served.claims)).toEqual([
        ["4.1", "settled", null],
        ["4.6", "earlier", "2026-10-26"],
      ]);

      // Recovery with selector v2 reads the log as before the rule: a dispute again.
      const v2 = await recover({ ...deps, selectorVersion: "v2" }, subject);
      expect(v2.status).toBe("PUBLISHED");
      expect(sizes((await recall(deps, subject)).claims)).toEqual([
        ["4.6", "contested", null],
        ["4.1", "contested", null],
      ]);
      expect((await recover(deps, subject)).status).toBe("PUBLISHED");
      expect(sizes((await recall(deps, subject)).claims)[0]).toEqual(["4.1", "settled", null]);
    });

    it("the epoch moves when a new reading changes which value holds, not for a backfill or the same value again", async () => {
      const stores = open();
      const deps = depsOver(stores);
      const subject = freshSubject();
      // A policy names a subject that exists: the first reading comes first.
      await appendEvents(deps, subject, [reading("oct", "4.6", "2026-10-26")]);
      await changeTrustPolicy(deps, subject, RULE);
      expect((await run(deps, await takeSnapshot(deps, subject))).status).toBe("PUBLISHED");
      expect((await appendEvents(deps, subject, [reading("dec", "4.1", "2026-12-03")])).epochMoved).toBe(
        true,
      );
      expect((await run(deps, await takeSnapshot(deps, subject))).status).toBe("PUBLISHED");
      expect((await appendEvents(deps, subject, [reading("nov", "4.3", "2026-11-10")])).epochMoved).toBe(
        false,
      );
      expect((await appendEvents(deps, subject, [reading("dec-2", "4.1", "2026-12-04")])).epochMoved).toBe(
        false,
      );
      // The summary stays served (the tail holds the new readings, each listed as what it is).
      const served = await recall(deps, subject);
      expect(served.mode).toBe("summary");
      expect(served.tail.map((e) => e.eventId)).toEqual(["nov", "dec-2"]);
      expect(served.earlierReadings.map((r) => [r.eventId, r.latest])).toEqual([["nov", "dec-2"]]);
    });
  });
}
