import { describe, expect, it } from "vitest";
import { AppendRejectedError, EventConflictError } from "#ports/errors.ts";
import { ev, fact, freshSubject, type StoreUnderTest } from "./store-contract-support.ts";

/** Appending events: the log, its clock, its fences and its limits. */
export function describeAppendContract(name: string, open: () => StoreUnderTest): void {
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
}
