import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteDatabase } from "#adapters/embedded/sqlite-database.ts";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import { MemoryEvent, type MemoryEvent as MemoryEventType } from "#domain/schemas.ts";
import { EventConflictError } from "#ports/errors.ts";
import { bucketReading } from "../support/builders.ts";

const home = mkdtempSync(join(tmpdir(), "memgate-group-"));
const store = new SqliteStore(home);
afterAll(() => store.close());

const reading = (eventId: string, size: string, occurredAt: string): MemoryEventType =>
  MemoryEvent.parse(bucketReading(eventId, size, occurredAt, "bucket.size"));

const note = (eventId: string, text = `${eventId} noted`): MemoryEventType =>
  MemoryEvent.parse({ eventId, kind: "note", text });

/** Every event of `subject`, in sequence order. */
async function storedIds(subject: string): Promise<Array<[string, number]>> {
  return (await store.eventsThrough(subject, 1_000_000)).map((event) => [event.eventId, event.sequence]);
}

describe("group commit (embedded store)", () => {
  it("commits concurrent appends together, fewer commits than appends, each acknowledged event stored once", async () => {
    const appends = 64;
    const before = store.commits;
    const results = await Promise.all(
      Array.from({ length: appends }, (_, i) => store.append(`group-${i % 4}`, [note(`e-${i}`)])),
    );
    const commits = store.commits - before;
    expect(commits).toBeGreaterThanOrEqual(1);
    expect(commits).toBeLessThan(appends);
    expect(results.flatMap((result) => result.appended).sort()).toEqual(
      Array.from({ length: appends }, (_, i) => `e-${i}`).sort(),
    );
    for (let s = 0; s < 4; s++) {
      const stored = await storedIds(`group-${s}`);
      // In the order they were asked for, one sequence each, no gap.
      expect(stored).toEqual(
        Array.from({ length: appends / 4 }, (_, k) => [`e-${k * 4 + s}`, k + 1] as [string, number]),
      );
    }
  });

  it("fails a refused batch alone: its neighbours in the group commit, later ones see them", async () => {
    const subject = "group-refused";
    await store.append(subject, [note("first")]);
    const before = store.commits;
    const settled = await Promise.allSettled([
      store.append(subject, [note("ok-1")]),
      // Same id as the batch before it in the same group, other content: refused.
      store.append(subject, [note("second"), note("ok-1", "other content")]),
      store.append(subject, [note("ok-2")]),
      // An identical re-send of an event committed by an earlier batch of this group: a duplicate.
      store.append(subject, [note("ok-2")]),
    ]);
    expect(store.commits - before).toBe(1);
    expect(settled.map((outcome) => outcome.status)).toEqual([
      "fulfilled",
      "rejected",
      "fulfilled",
      "fulfilled",
    ]);
    expect((settled[1] as PromiseRejectedResult).reason).toBeInstanceOf(EventConflictError);
    expect((settled[3] as PromiseFulfilledResult<{ duplicates: string[] }>).value.duplicates).toEqual([
      "ok-2",
    ]);
    expect(await storedIds(subject)).toEqual([
      ["first", 1],
      ["ok-1", 2],
      ["ok-2", 3],
    ]);
    expect((await store.snapshot(subject)).highWater).toBe(3);
  });

  it("rolls a write that fails after it wrote back to its savepoint, keeping the rest of the group", async () => {
    const db = new SqliteDatabase(join(home, SqliteStore.FILE));
    const setting = (value: string) => (connection: Parameters<Parameters<SqliteDatabase["write"]>[0]>[0]) =>
      connection
        .statement(
          "INSERT INTO settings (id, value) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET value = excluded.value",
        )
        .run(value);
    const before = db.commits;
    const settled = await Promise.allSettled([
      db.write(setting('{"recallBypass":false}')),
      db.write((connection) => {
        setting('{"recallBypass":true}')(connection);
        throw new Error("refused after writing");
      }),
      db.write((connection) => connection.statement("SELECT value FROM settings WHERE id = 1").pluck().get()),
    ]);
    expect(db.commits - before).toBe(1);
    expect(settled.map((outcome) => outcome.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    // The write after the refused one saw its neighbour's value, not the refused one's.
    expect((settled[2] as PromiseFulfilledResult<unknown>).value).toBe('{"recallBypass":false}');
    expect(
      await db.read((connection) => connection.statement("SELECT value FROM settings").pluck().get()),
    ).toBe('{"recallBypass":false}');
    db.close();
  });

  it("writes the readings of a group's batches in their savepoints: a refused batch's readings roll back with it", async () => {
    const subject = "group-readings";
    const policy = await store.storedPolicy(subject);
    await store.setTrustPolicy(
      subject,
      { ...policy, latest: ["bucket.*"] },
      { clock: { highWater: 0, inputEpoch: 0 }, policy },
      false,
    );
    const before = store.commits;
    const settled = await Promise.allSettled([
      store.append(subject, [reading("r-oct", "4.6", "2026-10-26")]),
      // A later reading, then an id the batch before it took with other content: refused whole.
      store.append(subject, [reading("r-dec", "4.1", "2026-12-03"), note("r-oct")]),
      // Sees the first batch's reading (a later one, another value: the epoch moves), not the refused one's.
      store.append(subject, [reading("r-nov", "3.9", "2026-11-15")]),
    ]);
    expect(store.commits - before).toBe(1);
    expect(settled.map((outcome) => outcome.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((settled[2] as PromiseFulfilledResult<{ epochMoved: boolean }>).value.epochMoved).toBe(true);
    const [entry] = await store.readingIndex(subject, [{ key: "bucket.size", scope: "global" }]);
    expect(Object.keys(entry?.readings ?? {}).sort()).toEqual(["r-nov", "r-oct"]);
    expect(
      Object.values(entry?.positions ?? {})
        .flat()
        .sort(),
    ).toEqual(["r-nov", "r-oct"]);
  });

  it("keeps the settings only until they change: through this store, or through another connection", async () => {
    const other = new SqliteStore(home);
    try {
      await store.updateSettings({ budget: null });
      expect((await store.settings()).budget).toBeNull();
      await store.updateSettings({ budget: 900 });
      expect((await store.settings()).budget).toBe(900);
      // Another connection (another process, or serve's consolidation thread) sets the budget.
      await other.updateSettings({ budget: 1200 });
      expect((await store.settings()).budget).toBe(1200);
      expect(Object.isFrozen(await store.settings())).toBe(true);
    } finally {
      await store.updateSettings({ budget: null });
      other.close();
    }
  });

  it("acknowledges nothing before its commit: a read meanwhile sees none of the group", async () => {
    const subject = "group-unseen";
    const appended = store.append(subject, [note("pending")]);
    // The group has not committed yet (it starts after this turn): reads see committed state only.
    expect((await store.snapshot(subject)).highWater).toBe(0);
    await appended;
    expect((await store.snapshot(subject)).highWater).toBe(1);
  });
});

describe("a serving store's commits, synced off the serving thread", () => {
  const servingHome = mkdtempSync(join(tmpdir(), "memgate-serving-"));
  const serving = SqliteStore.open(servingHome, { serving: true });
  afterAll(() => serving.close());

  it("acknowledges each event once, stored once, in fewer commits than appends", async () => {
    const before = serving.commits;
    const results = await Promise.all(
      Array.from({ length: 48 }, (_, i) => serving.append(`sync-${i % 3}`, [note(`s-${i}`)])),
    );
    expect(serving.commits - before).toBeLessThan(48);
    expect(results.flatMap((result) => result.appended).sort()).toEqual(
      Array.from({ length: 48 }, (_, i) => `s-${i}`).sort(),
    );
    for (let s = 0; s < 3; s++) expect((await serving.eventsThrough(`sync-${s}`, 1_000)).length).toBe(16);
  });

  it("answers a read that saw a commit no earlier than the commit is acknowledged (synced)", async () => {
    // Loop turns, counted: a read of a commit not yet synced would answer in a turn before the
    // acknowledgment's (the sync runs on the thread pool and ends in a later turn).
    let turn = 0;
    let acknowledgedIn = -1;
    const seenIn: number[] = [];
    const appended = serving.append("sync-order", [note("o-1")]).then(() => {
      acknowledgedIn = turn;
    });
    const reads: Array<Promise<unknown>> = [];
    while (acknowledgedIn === -1) {
      reads.push(
        serving.snapshot("sync-order").then((s) => {
          if (s.highWater === 1) seenIn.push(turn);
        }),
      );
      await new Promise((resolve) => setImmediate(resolve));
      turn++;
    }
    await Promise.all([appended, ...reads]);
    for (const seen of seenIn) expect(seen).toBeGreaterThanOrEqual(acknowledgedIn);
  });
});

describe("events held in memory (eventsPage)", () => {
  it("serves a held page as the database holds it: the same events, and the acting ids as they grow", async () => {
    const subject = "held";
    await store.append(
      subject,
      Array.from({ length: 10 }, (_, i) => note(`h-${i + 1}`)),
    );
    const fresh = () => {
      const other = new SqliteStore(home);
      return {
        page: (after: number, through: number, limit: number) =>
          other.eventsPage(subject, after, through, limit),
        close: () => other.close(),
      };
    };
    const first = await store.eventsPage(subject, 0, 10, 10);
    expect(first.map(({ event }) => event.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(await store.eventsPage(subject, 0, 10, 10)).toEqual(first);

    // A revocation after the page was held: the held events show their new actor.
    await store.append(subject, [
      MemoryEvent.parse({ eventId: "h-revoke", kind: "revocation", text: "h-3 was wrong", revokes: ["h-3"] }),
    ]);
    await store.append(subject, [note("h-12"), note("h-13")]);
    const reader = fresh();
    try {
      for (const [after, through, limit] of [
        [0, 10, 10],
        [0, 13, 13],
        [2, 13, 5],
        [8, 13, 100],
        [0, 13, 4],
      ] as const) {
        const held = await store.eventsPage(subject, after, through, limit);
        expect(held).toEqual(await reader.page(after, through, limit));
      }
      const third = (await store.eventsPage(subject, 2, 3, 1))[0];
      expect(third?.event.eventId).toBe("h-3");
      expect(third?.actors).toEqual(["h-revoke"]);
    } finally {
      reader.close();
    }
  });
});
