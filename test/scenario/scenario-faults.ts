import { describe, expect, it } from "vitest";
import { MODELS } from "#adapters/models/models.ts";
import { appendEvents, changeTrustPolicy, revokeEvents } from "#app/append.ts";
import type { Deps } from "#app/deps.ts";
import { generate } from "#app/generate.ts";
import { publish } from "#app/publish.ts";
import { recall } from "#app/recall.ts";
import { recover } from "#app/recover.ts";
import { approve, review } from "#app/review.ts";
import { run } from "#app/run.ts";
import { readInputs, takeSnapshot } from "#app/snapshot.ts";
import { workOnMessage } from "#app/worker.ts";
import { mustPreserveFingerprint } from "#domain/must-preserve.ts";
import { MemoryEvent as MemoryEventSchema } from "#domain/schemas.ts";
import { depsOver, factsBatch } from "#harness/pipeline-builders.ts";
import { PublishRefusedError } from "#ports/errors.ts";
import { GenerationFailedError, type ModelPort } from "#ports/model.ts";
import { freshSubject, type ScenarioStores } from "./scenario-stores.ts";

/** The seed's race, faults, determinism and release. */
export function describeFaultScenarios(name: string, open: () => ScenarioStores): void {
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
}
