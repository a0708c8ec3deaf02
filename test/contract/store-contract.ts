import { describe, expect, it } from "vitest";
import type { Manifest, MemoryEvent } from "#domain/schemas.ts";
import { MemoryEvent as MemoryEventSchema } from "#domain/schemas.ts";
import { candidateRecord } from "#harness/candidate-record.ts";
import type { AliasPort } from "#ports/alias.ts";
import type { ArtifactStore } from "#ports/artifacts.ts";
import {
  AlreadyWrittenError,
  AppendRejectedError,
  EventConflictError,
  PublishRefusedError,
} from "#ports/errors.ts";
import type { EventLog } from "#ports/event-log.ts";
import type { SnapshotQueue } from "#ports/queue.ts";
import type { SettingsPort } from "#ports/settings.ts";

/** One adapter set under test: every port, opened fresh (its own table, bucket, queue or file). */
export interface StoreUnderTest {
  events: EventLog;
  alias: AliasPort;
  artifacts: ArtifactStore;
  queue: SnapshotQueue;
  settings: SettingsPort;
  /** Whether the engine bounds one transaction (then a large append is split into atomic chunks). */
  boundedTransactions: boolean;
}

const ev = (input: Record<string, unknown>): MemoryEvent => MemoryEventSchema.parse(input);
const fact = (
  eventId: string,
  key = "k",
  value: unknown = { text: "a" },
  extra: Record<string, unknown> = {},
) =>
  ev({
    eventId,
    kind: "fact",
    text: `${eventId} text`,
    assertions: [{ key, value, polarity: "affirmed" }],
    ...extra,
  });

function manifestFor(subject: string, artifactId: string): Manifest {
  return {
    artifactId,
    subject,
    newCoversThrough: 1,
    inputEpoch: 0,
    expectedAlias: null,
    inputIds: ["a"],
    inputs: [{ eventId: "a", sequence: 1, hash: `sha256:${"1".repeat(64)}` }],
    inputRoot: `sha256:${"2".repeat(64)}`,
    selectorVersion: "v1",
    promptVersion: "consolidate-v1",
    modelSnapshot: "deterministic-v1",
    policy: { minTrust: "tool", blockedSources: [] },
  };
}

let subjects = 0;
/** A fresh subject per test: tests of one file share a store but never a subject. */
const freshSubject = () => `user-${process.pid}-${++subjects}`;

export function describeStoreContract(name: string, open: () => StoreUnderTest): void {
  describe(`${name}: append`, () => {
    it("assigns sequences, moves only highWater on a tail append", async () => {
      const { events } = open();
      const subject = freshSubject();
      const result = await events.append(subject, [fact("a"), fact("b", "other")]);
      expect(result).toMatchObject({
        appended: ["a", "b"],
        duplicates: [],
        highWater: 2,
        inputEpoch: 0,
        epochMoved: false,
      });
      const tail = await events.append(subject, [ev({ eventId: "c", kind: "note", text: "hello" })]);
      expect(tail).toMatchObject({ highWater: 3, inputEpoch: 0, epochMoved: false });
      expect((await events.eventsThrough(subject, 3)).map((e) => [e.eventId, e.sequence])).toEqual([
        ["a", 1],
        ["b", 2],
        ["c", 3],
      ]);
      expect((await events.eventsAfter(subject, 1)).map((e) => e.eventId)).toEqual(["b", "c"]);
    });

    it("lists every subject with a clock, sorted", async () => {
      const { events } = open();
      const [first, second] = [freshSubject(), freshSubject()].sort();
      await events.append(second as string, [fact("a")]);
      await events.append(first as string, [fact("a")]);
      const listed = await events.listSubjects();
      expect(listed).toEqual([...listed].sort());
      expect(listed).toEqual(expect.arrayContaining([first, second]));
    });

    it("treats an identical re-send as a no-op, in any key order", async () => {
      const { events } = open();
      const subject = freshSubject();
      await events.append(subject, [fact("a")]);
      const again = await events.append(subject, [
        ev({
          assertions: [{ polarity: "affirmed", value: { text: "a" }, key: "k" }],
          text: "a text",
          kind: "fact",
          eventId: "a",
        }),
      ]);
      expect(again).toMatchObject({ appended: [], duplicates: ["a"], highWater: 1, inputEpoch: 0 });
    });

    it("refuses a re-send with different content and writes nothing of the batch", async () => {
      const { events } = open();
      const subject = freshSubject();
      await events.append(subject, [fact("a")]);
      await expect(
        events.append(subject, [fact("new"), fact("a", "k", { text: "changed" })]),
      ).rejects.toBeInstanceOf(EventConflictError);
      expect((await events.eventsThrough(subject, 100)).map((e) => e.eventId)).toEqual(["a"]);
      expect((await events.snapshot(subject)).highWater).toBe(1);
    });

    it("refuses links to unknown or later events, writing nothing", async () => {
      const { events } = open();
      const subject = freshSubject();
      await expect(
        events.append(subject, [fact("a"), ev({ eventId: "r", kind: "revocation", revokes: ["zz"] })]),
      ).rejects.toBeInstanceOf(AppendRejectedError);
      expect((await events.snapshot(subject)).highWater).toBe(0);
    });

    it("moves inputEpoch on a revocation, a supersession and a trust policy change", async () => {
      const { events } = open();
      const subject = freshSubject();
      await events.append(subject, [fact("a"), fact("b", "b")]);
      expect(
        await events.append(subject, [ev({ eventId: "r", kind: "revocation", revokes: ["a"] })]),
      ).toMatchObject({ inputEpoch: 1, epochMoved: true });
      expect(
        await events.append(subject, [fact("b2", "b", { text: "new" }, { supersedes: ["b"] })]),
      ).toMatchObject({ inputEpoch: 2, epochMoved: true });
      const clock = { highWater: 4, inputEpoch: 2 };
      const initial = await events.storedPolicy(subject);
      expect(initial).toEqual({ minTrust: "tool", blockedSources: [] });
      const stricter = { minTrust: "user" as const, blockedSources: ["web:*"] };
      expect(await events.setTrustPolicy(subject, stricter, { clock, policy: initial }, true)).toEqual({
        highWater: 4,
        inputEpoch: 3,
      });
      expect(await events.trustPolicy(subject)).toEqual(stricter);
      // Fenced on the clock the caller judged: a stale judgement changes nothing.
      expect(
        await events.setTrustPolicy(
          subject,
          { minTrust: "tool", blockedSources: [] },
          { clock, policy: stricter },
          false,
        ),
      ).toBeNull();
      expect(await events.trustPolicy(subject)).toEqual(stricter);
      // ... and on the policy it judged: a policy changed meanwhile changes nothing either.
      expect(
        await events.setTrustPolicy(
          subject,
          { minTrust: "tool", blockedSources: [] },
          { clock: { highWater: 4, inputEpoch: 3 }, policy: initial },
          false,
        ),
      ).toBeNull();
      expect(
        await events.setTrustPolicy(
          subject,
          { minTrust: "user", blockedSources: ["web:*", "x"] },
          { clock: { highWater: 4, inputEpoch: 3 }, policy: stricter },
          false,
        ),
      ).toEqual({ highWater: 4, inputEpoch: 3 });
    });

    it("orders readings under a latest rule: a later reading that changes the value moves the epoch, an earlier or equal one does not", async () => {
      const { events } = open();
      const subject = freshSubject();
      const reading = (eventId: string, size: string, occurredAt?: string, unit = "TB") =>
        fact(eventId, "bucket.size", { quantity: size, unit }, occurredAt ? { occurredAt } : {});
      await events.append(subject, [reading("r-oct", "4.6", "2026-10-26T12:15:00Z")]);
      const policy = { minTrust: "tool" as const, blockedSources: [], latest: ["bucket.*"] };
      await events.setTrustPolicy(
        subject,
        policy,
        { clock: { highWater: 1, inputEpoch: 0 }, policy: await events.storedPolicy(subject) },
        false,
      );
      expect(await events.trustPolicy(subject)).toEqual(policy);
      // A later reading with another value: what holds changes (no conflict: the epoch moves once).
      expect(await events.append(subject, [reading("r-dec", "4.1", "2026-12-03T09:20:00Z")])).toMatchObject({
        epochMoved: true,
        inputEpoch: 1,
      });
      // A reading dated before the latest (a backfill), and the same value read again later (in GB):
      // nothing moves.
      expect(await events.append(subject, [reading("r-sep", "4.2", "2026-09-30")])).toMatchObject({
        epochMoved: false,
      });
      expect(await events.append(subject, [reading("r-dec2", "4100", "2026-12-04", "GB")])).toMatchObject({
        epochMoved: false,
      });
      // An undated reading follows every dated one logged before it: it holds, and it changed the value.
      expect(await events.append(subject, [reading("r-now", "3.9")])).toMatchObject({
        epochMoved: true,
        inputEpoch: 2,
      });
      const [entry] = await events.readingIndex(subject, [{ key: "bucket.size", scope: "global" }]);
      expect(entry?.readings).toEqual({
        "r-oct": { sequence: 1, at: "1001793016900.000000000" },
        "r-dec": { sequence: 2, at: "1001796289600.000000000" },
        "r-sep": { sequence: 3, at: "1001790726400.000000000" },
        "r-dec2": { sequence: 4, at: "1001796342400.000000000" },
        "r-now": { sequence: 5, at: null },
      });
    });

    it("creates a subject's clock under the store's default latest rules; a subject with rules of its own keeps them", async () => {
      const { events, settings } = open();
      const subject = freshSubject();
      const before = await settings.settings();
      try {
        await settings.updateSettings({ latest: ["stock.*"] });
        expect(await events.storedPolicy(subject)).toEqual({
          minTrust: "tool",
          blockedSources: [],
          storeLatest: ["stock.*"],
        });
        await events.append(subject, [fact("s-1", "stock.widgets", { quantity: "12" })]);
        expect(await events.trustPolicy(subject)).toEqual({
          minTrust: "tool",
          blockedSources: [],
          latest: ["stock.*"],
        });
        const stored = await events.storedPolicy(subject);
        const own = { ...stored, latest: [{ key: "*.lag", scope: "db:*" }] };
        expect(
          await events.setTrustPolicy(
            subject,
            own,
            { clock: { highWater: 1, inputEpoch: 0 }, policy: stored },
            false,
          ),
        ).toEqual({ highWater: 1, inputEpoch: 0 });
        expect((await events.trustPolicy(subject)).latest).toEqual([{ key: "*.lag", scope: "db:*" }]);
        // A subject whose clock the default was read for is not created once the default moved.
        const late = freshSubject();
        const read = await events.storedPolicy(late);
        await settings.updateSettings({ latest: ["stock.*", "*.lag"] });
        expect(
          await events.setTrustPolicy(
            late,
            { ...read, minTrust: "user" },
            { clock: { highWater: 0, inputEpoch: 0 }, policy: read },
            false,
          ),
        ).toBeNull();
        expect(await events.storedPolicy(late)).toEqual({
          minTrust: "tool",
          blockedSources: [],
          storeLatest: ["stock.*", "*.lag"],
        });
      } finally {
        await settings.updateSettings({ latest: before.latest ?? [] });
      }
    });

    it("moves inputEpoch when an append opens a new conflict, not when it agrees", async () => {
      const { events } = open();
      const subject = freshSubject();
      await events.append(subject, [fact("a", "limit", { quantity: "5", unit: "km" })]);
      expect(
        await events.append(subject, [fact("b", "limit", { quantity: "5000", unit: "m" })]),
      ).toMatchObject({ epochMoved: false });
      expect(
        await events.append(subject, [
          fact("c", "limit", { quantity: "6", unit: "km" }, { trust: "untrusted" }),
        ]),
      ).toMatchObject({
        epochMoved: false,
      });
      expect(await events.append(subject, [fact("d", "limit", { quantity: "6", unit: "km" })])).toMatchObject(
        { epochMoved: true, inputEpoch: 1 },
      );
      expect(await events.append(subject, [fact("e", "limit", { quantity: "6", unit: "km" })])).toMatchObject(
        { epochMoved: false },
      );
    });

    it("sees a conflict again when a revoked position is asserted anew", async () => {
      const { events } = open();
      const subject = freshSubject();
      await events.append(subject, [fact("a", "plan", { text: "A" }), fact("b", "plan", { text: "B" })]);
      await events.append(subject, [ev({ eventId: "r", kind: "revocation", revokes: ["b"] })]);
      const before = (await events.snapshot(subject)).inputEpoch;
      expect(await events.append(subject, [fact("c", "plan", { text: "B" })])).toMatchObject({
        epochMoved: true,
        inputEpoch: before + 1,
      });
    });

    it("answers concurrent appends each on its own: a refused batch writes nothing, the others are stored once", async () => {
      const { events } = open();
      const [shared, other] = [freshSubject(), freshSubject()];
      await events.append(shared, [fact("a")]);
      const batches = [
        { subject: shared, batch: [fact("b1"), fact("b2", "k2")] },
        // Re-sends "a" with other content: refused, and "x" in the same batch with it.
        { subject: shared, batch: [fact("x"), fact("a", "k", { text: "changed" })] },
        { subject: other, batch: [fact("c1")] },
        { subject: shared, batch: [ev({ eventId: "n", kind: "note", text: "hello" })] },
        // A link to an event the log does not hold: refused.
        { subject: other, batch: [ev({ eventId: "r", kind: "revocation", revokes: ["nowhere"] })] },
        { subject: other, batch: [fact("c2", "k2")] },
      ];
      const settled = await Promise.allSettled(
        batches.map(({ subject, batch }) => events.append(subject, batch)),
      );
      expect(settled.map((outcome) => outcome.status)).toEqual([
        "fulfilled",
        "rejected",
        "fulfilled",
        "fulfilled",
        "rejected",
        "fulfilled",
      ]);
      expect((settled[1] as PromiseRejectedResult).reason).toBeInstanceOf(EventConflictError);
      expect((settled[4] as PromiseRejectedResult).reason).toBeInstanceOf(AppendRejectedError);
      const storedShared = await events.eventsThrough(shared, 100);
      expect(storedShared.map((e) => e.eventId).sort()).toEqual(["a", "b1", "b2", "n"]);
      expect(storedShared.map((e) => e.sequence)).toEqual([1, 2, 3, 4]);
      const storedOther = await events.eventsThrough(other, 100);
      expect(storedOther.map((e) => e.eventId).sort()).toEqual(["c1", "c2"]);
      expect(storedOther.map((e) => e.sequence)).toEqual([1, 2]);
      expect(await events.snapshot(shared)).toMatchObject({ highWater: 4, inputEpoch: 0 });
    });

    it("splits a batch larger than one transaction into ordered atomic chunks", async () => {
      const { events, boundedTransactions } = open();
      const subject = freshSubject();
      const batch = Array.from({ length: 230 }, (_, i) => fact(`e-${i}`, `k-${i}`));
      const result = await events.append(subject, batch);
      expect(result.appended).toHaveLength(230);
      if (boundedTransactions) expect(result.chunks).toBeGreaterThan(1);
      else expect(result.chunks).toBe(1);
      const stored = await events.eventsThrough(subject, 1000);
      expect(stored.map((e) => e.sequence)).toEqual(Array.from({ length: 230 }, (_, i) => i + 1));
      expect(stored.map((e) => e.eventId)).toEqual(batch.map((e) => e.eventId));
    });
  });

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
