import { describe, expect, it } from "vitest";
import { appendEvents, revokeEvents } from "#app/append.ts";
import { recall } from "#app/recall.ts";
import { run } from "#app/run.ts";
import { adoptCurrentSelector, migrateSelectors } from "#app/selector-migration.ts";
import { readInputs, takeSnapshot } from "#app/snapshot.ts";
import { depsOver, factsBatch } from "#harness/pipeline-builders.ts";
import { freshSubject, type ScenarioStores } from "./scenario-stores.ts";

/** Moving a subject from selector v1 or v2 to v3. */
export function describeSelectorScenarios(name: string, open: () => ScenarioStores): void {
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
}
