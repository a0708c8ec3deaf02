import { describe, expect, it } from "vitest";
import { appendEvents, changeTrustPolicy } from "#app/append.ts";
import { recall } from "#app/recall.ts";
import { recover } from "#app/recover.ts";
import { approve, review } from "#app/review.ts";
import { run } from "#app/run.ts";
import { takeSnapshot } from "#app/snapshot.ts";
import type { ConsolidationOutput } from "#domain/schemas.ts";
import { depsOver } from "#harness/pipeline-builders.ts";
import { bucketReading as reading } from "../support/builders.ts";
import { freshSubject, type ScenarioStores } from "./scenario-stores.ts";

/** Readings under a latest rule (selector v3). */
export function describeReadingScenarios(name: string, open: () => ScenarioStores): void {
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
