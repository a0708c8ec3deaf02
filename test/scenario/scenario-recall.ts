import { describe, expect, it } from "vitest";
import { appendEvents } from "#app/append.ts";
import { generate } from "#app/generate.ts";
import { recall } from "#app/recall.ts";
import { renderServedRecallText } from "#app/recall-text.ts";
import { run } from "#app/run.ts";
import { readInputs, takeSnapshot } from "#app/snapshot.ts";
import { countTokens } from "#domain/tokens.ts";
import { depsOver, factsBatch } from "#harness/pipeline-builders.ts";
import type { ArtifactStore } from "#ports/artifacts.ts";
import type { ModelPort } from "#ports/model.ts";
import { freshSubject, type ScenarioStores } from "./scenario-stores.ts";

/** Recall in pages, and forged and damaged inputs. */
export function describeRecallScenarios(name: string, open: () => ScenarioStores): void {
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
}
