import { describe, expect, it } from "vitest";
import { candidateRecord } from "#harness/candidate-record.ts";
import { AlreadyWrittenError, PublishRefusedError } from "#ports/errors.ts";
import { ev, fact, freshSubject, manifestFor, type StoreUnderTest } from "./store-contract-support.ts";

/** Snapshots, artifacts, publishing, and the queue. */
export function describeArtifactContract(name: string, open: () => StoreUnderTest): void {
  describe(`${name}: snapshot, artifacts and publish`, () => {
    /** Publishes "s-1" as the subject's first summary, covering its first `coversThrough` events. */
    async function publishFirst(
      subject: string,
      { alias, artifacts }: Pick<StoreUnderTest, "alias" | "artifacts">,
      coversThrough = 1,
    ) {
      await artifacts.recordArtifact(candidateRecord(subject, "s-1", coversThrough, 0, null));
      await alias.publishIfUnchanged({
        subject,
        artifactId: "s-1",
        expectedAlias: null,
        inputEpoch: 0,
        newCoversThrough: coversThrough,
      });
    }

    it("reads clock and alias together", async () => {
      const { events, alias, artifacts } = open();
      const subject = freshSubject();
      expect(await events.snapshot(subject)).toEqual({
        subject,
        highWater: 0,
        inputEpoch: 0,
        epochMovedAt: 0,
        expectedAlias: null,
      });
      await events.append(subject, [fact("a")]);
      await publishFirst(subject, { alias, artifacts });
      expect(await events.snapshot(subject)).toEqual({
        subject,
        highWater: 1,
        inputEpoch: 0,
        epochMovedAt: 0,
        expectedAlias: { parentArtifactId: "s-1", sourceEpoch: 0, coversThrough: 1 },
      });
    });

    it("answers an append with the clock and alias it left: the snapshot a rebuild request sends", async () => {
      const { events, alias, artifacts } = open();
      const subject = freshSubject();
      const first = await events.append(subject, [fact("a")]);
      expect(first.snapshot).toEqual({
        subject,
        highWater: 1,
        inputEpoch: 0,
        epochMovedAt: 0,
        expectedAlias: null,
      });
      await publishFirst(subject, { alias, artifacts });
      const tail = await events.append(subject, [fact("b", "k2"), fact("c", "k3")]);
      const moved = await events.append(subject, [fact("d", "k2", { text: "changed" })]);
      const served = { parentArtifactId: "s-1", sourceEpoch: 0, coversThrough: 1 };
      expect(tail.snapshot).toEqual({
        subject,
        highWater: 3,
        inputEpoch: 0,
        epochMovedAt: 0,
        expectedAlias: served,
      });
      expect(moved.snapshot).toEqual({
        subject,
        highWater: 4,
        inputEpoch: 1,
        epochMovedAt: 4,
        expectedAlias: served,
      });
      expect(moved.snapshot).toEqual(await events.snapshot(subject));
    });

    it("writes artifacts and manifests once, never over", async () => {
      const { artifacts } = open();
      const subject = freshSubject();
      await artifacts.writeArtifact(subject, "s-1", {
        body: { summary: "first" },
        manifest: manifestFor(subject, "s-1"),
      });
      await expect(
        artifacts.writeArtifact(subject, "s-1", {
          body: { summary: "second" },
          manifest: manifestFor(subject, "s-1"),
        }),
      ).rejects.toBeInstanceOf(AlreadyWrittenError);
      expect(await artifacts.readArtifact(subject, "s-1")).toEqual({ summary: "first" });
      expect((await artifacts.readManifest(subject, "s-1")).artifactId).toBe("s-1");
      await artifacts.recordArtifact(candidateRecord(subject, "s-1", 1, 0, null));
      await expect(
        artifacts.recordArtifact(candidateRecord(subject, "s-1", 1, 0, null)),
      ).rejects.toBeInstanceOf(AlreadyWrittenError);
    });

    it("publishes the first summary, then moves parent to SUPERSEDED on the next", async () => {
      const { events, alias, artifacts } = open();
      const subject = freshSubject();
      await events.append(subject, [fact("a"), fact("b", "b")]);
      await artifacts.recordArtifact(candidateRecord(subject, "s-1", 1, 0, null));
      expect(
        await alias.publishIfUnchanged({
          subject,
          artifactId: "s-1",
          expectedAlias: null,
          inputEpoch: 0,
          newCoversThrough: 1,
        }),
      ).toEqual({
        artifactId: "s-1",
        sourceEpoch: 0,
        coversThrough: 1,
      });
      await artifacts.recordArtifact(candidateRecord(subject, "s-2", 2, 0, "s-1"));
      await alias.publishIfUnchanged({
        subject,
        artifactId: "s-2",
        expectedAlias: { parentArtifactId: "s-1", sourceEpoch: 0, coversThrough: 1 },
        inputEpoch: 0,
        newCoversThrough: 2,
      });
      expect((await artifacts.getRecord(subject, "s-1"))?.status).toBe("SUPERSEDED");
      expect((await artifacts.getRecord(subject, "s-2"))?.status).toBe("PUBLISHED");
      expect((await artifacts.listRecords(subject)).map((r) => r.artifactId).sort()).toEqual(["s-1", "s-2"]);
    });

    it("lists the subjects that need a rebuild from committed state; a check of an old clock never hides one", async () => {
      const { events, alias, artifacts } = open();
      const subject = freshSubject();
      await events.append(subject, [fact("a"), fact("b", "b")]);
      expect(await events.subjectsToCheck(50)).toContain(subject); // events, no summary
      await publishFirst(subject, { alias, artifacts }, 2);
      const checked = await events.snapshot(subject);
      await events.markChecked(subject, checked);
      expect(await events.subjectsToCheck(50)).not.toContain(subject); // current
      await events.append(subject, [ev({ eventId: "r", kind: "revocation", revokes: ["a"] })]);
      await events.markChecked(subject, checked); // a check made before the revocation
      expect(await events.subjectsToCheck(50)).toContain(subject); // the epoch moved
      expect(await events.subjectsToCheck(1)).toContain(subject);
    });

    it("refuses to publish coverage beyond the log (a forged snapshot), in the switch transaction itself", async () => {
      const { events, alias, artifacts } = open();
      const subject = freshSubject();
      await events.append(subject, [fact("a"), fact("b", "b")]);
      await artifacts.recordArtifact(candidateRecord(subject, "s-forged", 999, 0, null));
      await expect(
        alias.publishIfUnchanged({
          subject,
          artifactId: "s-forged",
          expectedAlias: null,
          inputEpoch: 0,
          newCoversThrough: 999,
        }),
      ).rejects.toMatchObject({ reason: "beyond-log" });
      expect(await alias.readAlias(subject)).toBeNull();
      expect((await artifacts.getRecord(subject, "s-forged"))?.status).toBe("CANDIDATE");
      // Appends keep their sequences and a snapshot at the real high-water mark still publishes.
      await events.append(subject, [fact("c", "c")]);
      expect((await events.snapshot(subject)).highWater).toBe(3);
    });

    it("keeps where the epoch began: set by a write that moves it (append, policy, selector), kept by every other", async () => {
      const { events } = open();
      const subject = freshSubject();
      const movedAt = async () => (await events.snapshot(subject)).epochMovedAt;
      await events.append(subject, [fact("a"), fact("b", "b")]);
      expect(await movedAt()).toBe(0);
      await events.append(subject, [ev({ eventId: "r", kind: "revocation", revokes: ["a"] })]);
      expect(await movedAt()).toBe(3);
      await events.append(subject, [fact("c", "c"), fact("d", "d")]);
      expect(await movedAt()).toBe(3);
      // A batch that moves it: the clock after the batch (the state the log was in), not the event.
      await events.append(subject, [fact("e", "b", { text: "other" }), fact("f", "f")]);
      expect(await events.snapshot(subject)).toMatchObject({ highWater: 7, inputEpoch: 2, epochMovedAt: 7 });
      await events.append(subject, [fact("g", "g")]);
      const policy = await events.storedPolicy(subject);
      expect(
        await events.setTrustPolicy(
          subject,
          { ...policy, blockedSources: ["x"] },
          { clock: { highWater: 8, inputEpoch: 2 }, policy },
          false,
        ),
      ).toEqual({ highWater: 8, inputEpoch: 2 });
      expect(await movedAt()).toBe(7);
      expect(
        await events.setTrustPolicy(
          subject,
          { ...policy, minTrust: "user" },
          { clock: { highWater: 8, inputEpoch: 2 }, policy: { ...policy, blockedSources: ["x"] } },
          true,
        ),
      ).toEqual({ highWater: 8, inputEpoch: 3 });
      expect(await movedAt()).toBe(8);
      await events.append(subject, [fact("h", "h")]);
      expect(await events.adoptSelector(subject, "v3", { highWater: 9, inputEpoch: 3 }, true)).toBe(true);
      expect(await events.snapshot(subject)).toMatchObject({ highWater: 9, inputEpoch: 4, epochMovedAt: 9 });
    });

    it("refuses in the switch itself an artifact covering less than where its epoch began: it would serve what a later write revoked", async () => {
      const { events, alias, artifacts } = open();
      const subject = freshSubject();
      await events.append(subject, [fact("a"), fact("b", "b")]);
      // The reproduction: a revocation of b at 3, then an artifact of the new epoch covering 2.
      await events.append(subject, [ev({ eventId: "r", kind: "revocation", revokes: ["b"] })]);
      await artifacts.recordArtifact(candidateRecord(subject, "s-below", 2, 1, null));
      await expect(
        alias.publishIfUnchanged({
          subject,
          artifactId: "s-below",
          expectedAlias: null,
          inputEpoch: 1,
          newCoversThrough: 2,
        }),
      ).rejects.toMatchObject({ reason: "epoch-moved", message: expect.stringMatching(/began at 3/) });
      expect(await alias.readAlias(subject)).toBeNull();
      expect((await artifacts.getRecord(subject, "s-below"))?.status).toBe("CANDIDATE");
      // Plain appends after it leave the epoch where it began: coverage from 3 on publishes.
      await events.append(subject, [fact("c", "c")]);
      await artifacts.recordArtifact(candidateRecord(subject, "s-at", 3, 1, null));
      expect(
        await alias.publishIfUnchanged({
          subject,
          artifactId: "s-at",
          expectedAlias: null,
          inputEpoch: 1,
          newCoversThrough: 3,
        }),
      ).toEqual({ artifactId: "s-at", sourceEpoch: 1, coversThrough: 3 });
    });

    it("refuses when the parent moved, the epoch moved or coverage would decrease, changing nothing", async () => {
      const { events, alias, artifacts } = open();
      const subject = freshSubject();
      await events.append(subject, [fact("a"), fact("b", "b"), fact("c", "c")]);
      await artifacts.recordArtifact(candidateRecord(subject, "s-1", 2, 0, null));
      await alias.publishIfUnchanged({
        subject,
        artifactId: "s-1",
        expectedAlias: null,
        inputEpoch: 0,
        newCoversThrough: 2,
      });
      const current = { parentArtifactId: "s-1", sourceEpoch: 0, coversThrough: 2 };

      await artifacts.recordArtifact(candidateRecord(subject, "s-old", 1, 0, "s-1"));
      await expect(
        alias.publishIfUnchanged({
          subject,
          artifactId: "s-old",
          expectedAlias: current,
          inputEpoch: 0,
          newCoversThrough: 1,
        }),
      ).rejects.toMatchObject({ reason: "coverage-decrease" });

      await artifacts.recordArtifact(candidateRecord(subject, "s-stale-parent", 3, 0, "s-0"));
      await expect(
        alias.publishIfUnchanged({
          subject,
          artifactId: "s-stale-parent",
          expectedAlias: { parentArtifactId: "s-0", sourceEpoch: 0, coversThrough: 2 },
          inputEpoch: 0,
          newCoversThrough: 3,
        }),
      ).rejects.toMatchObject({ reason: "alias-moved" });
      await expect(
        alias.publishIfUnchanged({
          subject,
          artifactId: "s-stale-parent",
          expectedAlias: null,
          inputEpoch: 0,
          newCoversThrough: 3,
        }),
      ).rejects.toBeInstanceOf(PublishRefusedError);

      await artifacts.recordArtifact(candidateRecord(subject, "s-2", 3, 0, "s-1"));
      await events.append(subject, [ev({ eventId: "r", kind: "revocation", revokes: ["a"] })]);
      await expect(
        alias.publishIfUnchanged({
          subject,
          artifactId: "s-2",
          expectedAlias: current,
          inputEpoch: 0,
          newCoversThrough: 3,
        }),
      ).rejects.toMatchObject({ reason: "epoch-moved" });

      expect(await alias.readAlias(subject)).toEqual({ artifactId: "s-1", sourceEpoch: 0, coversThrough: 2 });
      expect((await artifacts.getRecord(subject, "s-2"))?.status).toBe("CANDIDATE");
      expect((await artifacts.getRecord(subject, "s-1"))?.status).toBe("PUBLISHED");
    });

    it("refuses to publish an artifact that is not a candidate", async () => {
      const { events, alias, artifacts } = open();
      const subject = freshSubject();
      await events.append(subject, [fact("a")]);
      await artifacts.recordArtifact({ ...candidateRecord(subject, "s-1", 1, 0, null), status: "REJECTED" });
      await expect(
        alias.publishIfUnchanged({
          subject,
          artifactId: "s-1",
          expectedAlias: null,
          inputEpoch: 0,
          newCoversThrough: 1,
        }),
      ).rejects.toMatchObject({
        reason: "artifact-not-publishable",
      });
      await expect(
        alias.publishIfUnchanged({
          subject,
          artifactId: "nope",
          expectedAlias: null,
          inputEpoch: 0,
          newCoversThrough: 1,
        }),
      ).rejects.toBeInstanceOf(PublishRefusedError);
      expect(await alias.readAlias(subject)).toBeNull();
    });

    it("moves a status only from the statuses named", async () => {
      const { artifacts } = open();
      const subject = freshSubject();
      await artifacts.recordArtifact(candidateRecord(subject, "s-1", 1, 0, null));
      expect(await artifacts.markStale(subject, "s-1", ["PUBLISHED"])).toBe(false);
      expect(await artifacts.markStale(subject, "s-1", ["CANDIDATE", "PUBLISHED"])).toBe(true);
      expect(await artifacts.getRecord(subject, "s-1")).toMatchObject({ status: "CANDIDATE", stale: true });
      // Marked once; and a marked record's status no longer moves.
      expect(await artifacts.markStale(subject, "s-1", ["CANDIDATE"])).toBe(false);
      expect(await artifacts.transition(subject, "s-1", ["CANDIDATE"], "ABANDONED")).toBe(false);
    });

    it("lets exactly one of eight concurrent publishers with the same expected alias win, 100 rounds", async () => {
      const { events, alias, artifacts } = open();
      const subject = freshSubject();
      await events.append(subject, [fact("a")]);
      let expected: { parentArtifactId: string; sourceEpoch: number; coversThrough: number } | null = null;
      for (let round = 0; round < 100; round++) {
        const ids = Array.from({ length: 8 }, (_, w) => `s-${round}-${w}`);
        for (const id of ids)
          await artifacts.recordArtifact(
            candidateRecord(subject, id, 1, 0, expected?.parentArtifactId ?? null),
          );
        const results = await Promise.allSettled(
          ids.map((artifactId) =>
            alias.publishIfUnchanged({
              subject,
              artifactId,
              expectedAlias: expected,
              inputEpoch: 0,
              newCoversThrough: 1,
            }),
          ),
        );
        const winners = results.filter((r) => r.status === "fulfilled");
        expect(winners).toHaveLength(1);
        for (const r of results)
          if (r.status === "rejected") expect(r.reason).toBeInstanceOf(PublishRefusedError);
        const now = await alias.readAlias(subject);
        expected = now && {
          parentArtifactId: now.artifactId,
          sourceEpoch: now.sourceEpoch,
          coversThrough: now.coversThrough,
        };
      }
    });
  });

  describe(`${name}: queue`, () => {
    it("deduplicates a snapshot and keeps one subject's messages in order", async () => {
      const { queue } = open();
      const s1 = freshSubject();
      const s2 = freshSubject();
      await queue.send({ subject: s1, highWater: 5, inputEpoch: 0, expectedAlias: null });
      await queue.send({ subject: s1, highWater: 5, inputEpoch: 0, expectedAlias: null });
      await queue.send({ subject: s1, highWater: 6, inputEpoch: 0, expectedAlias: null });
      await queue.send({ subject: s2, highWater: 1, inputEpoch: 0, expectedAlias: null });
      const received: Array<[string, number]> = [];
      for (let attempt = 0; attempt < 20 && received.length < 3; attempt++) {
        const batch = await queue.receive(10);
        for (const message of batch) {
          received.push([message.body.subject, message.body.highWater]);
          await queue.ack(message.receipt);
        }
      }
      expect(received.filter(([s]) => s === s1)).toEqual([
        [s1, 5],
        [s1, 6],
      ]);
      expect(received.filter(([s]) => s === s2)).toEqual([[s2, 1]]);
    });

    it("a snapshot of the same events on another alias is another message, after the first", async () => {
      const { queue } = open();
      const subject = freshSubject();
      const before = { subject, highWater: 8, inputEpoch: 0, expectedAlias: null };
      // Asked for after a publish: the same events, the alias that publish left.
      const after = {
        ...before,
        expectedAlias: { parentArtifactId: `summary:${subject}:000005:a1`, sourceEpoch: 0, coversThrough: 5 },
      };
      await queue.send(before);
      await queue.send(after);
      await queue.send(after);
      const received: Array<string | null> = [];
      for (let attempt = 0; attempt < 20 && received.length < 2; attempt++)
        for (const message of await queue.receive(10)) {
          received.push(message.body.expectedAlias?.parentArtifactId ?? null);
          await queue.ack(message.receipt);
        }
      expect(received).toEqual([null, `summary:${subject}:000005:a1`]);
    });
  });
}
