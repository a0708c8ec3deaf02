import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import type { RebuildAttempt } from "#domain/rebuild.ts";
import { MemoryEvent, type MemoryEvent as MemoryEventType } from "#domain/schemas.ts";
import { candidateRecord } from "#harness/candidate-record.ts";
import { bucketReading } from "../support/builders.ts";

const reading = (eventId: string, size: string, occurredAt: string): MemoryEventType =>
  MemoryEvent.parse(bucketReading(eventId, size, occurredAt, "bucket.size"));

describe("embedded store opened on a file from before selector v2 and v3", () => {
  it("adds the selector and readings columns; old index rows load without readings, new appends write them", async () => {
    const home = mkdtempSync(join(tmpdir(), "memgate-migration-"));
    const old = new Database(join(home, SqliteStore.FILE));
    old.exec(`
      CREATE TABLE clock (subject TEXT PRIMARY KEY, high_water INTEGER NOT NULL, input_epoch INTEGER NOT NULL, policy TEXT);
      CREATE TABLE conflict_index (subject TEXT NOT NULL, key TEXT NOT NULL, scope TEXT NOT NULL, positions TEXT NOT NULL, PRIMARY KEY (subject, key, scope));
      INSERT INTO clock VALUES ('old', 0, 0, NULL);
      INSERT INTO conflict_index VALUES ('old', 'bucket.size', 'global', '{}');
    `);
    old.close();

    const store = new SqliteStore(home);
    try {
      expect(await store.selectorVersion("old")).toBe("v1");
      expect(await store.readingIndex("old", [{ key: "bucket.size", scope: "global" }])).toEqual([
        { key: "bucket.size", scope: "global", positions: {} },
      ]);
      const policy = await store.storedPolicy("fresh");
      await store.setTrustPolicy(
        "fresh",
        { ...policy, latest: ["bucket.*"] },
        { clock: { highWater: 0, inputEpoch: 0 }, policy },
        false,
      );
      // Two appends in one group commit: each batch's readings are written in its own savepoint.
      await Promise.all([
        store.append("fresh", [reading("r-1", "4.6", "2026-10-26")]),
        store.append("fresh", [reading("r-2", "4.1", "2026-12-03")]),
      ]);
      const [entry] = await store.readingIndex("fresh", [{ key: "bucket.size", scope: "global" }]);
      expect(Object.keys(entry?.readings ?? {}).sort()).toEqual(["r-1", "r-2"]);
    } finally {
      store.close();
    }
    // A second open finds the columns there and adds nothing.
    new SqliteStore(home).close();
  });
});

describe("embedded store opened on a file from before rebuild attempts were remembered", () => {
  it("adds the rebuild_attempt column: old clocks have none, attempts kept in one group commit read back, the clock untouched", async () => {
    const home = mkdtempSync(join(tmpdir(), "memgate-migration-"));
    const old = new Database(join(home, SqliteStore.FILE));
    old.exec(`
      CREATE TABLE clock (subject TEXT PRIMARY KEY, high_water INTEGER NOT NULL, input_epoch INTEGER NOT NULL, policy TEXT, selector TEXT);
      INSERT INTO clock VALUES ('a', 3, 1, NULL, 'v3');
      INSERT INTO clock VALUES ('b', 5, 0, NULL, 'v3');
    `);
    old.close();
    const attempt = (highWater: number, inputEpoch: number): RebuildAttempt => ({
      highWater,
      inputEpoch,
      parentArtifactId: null,
      outcome: "REJECTED",
      count: 1,
      at: "2026-11-02T10:00:00.000Z",
    });

    const store = new SqliteStore(home);
    try {
      expect(await store.rebuildAttempt("a")).toBeNull();
      expect(await store.rebuildAttempt("b")).toBeNull();
      // Two attempts in one group commit: each written in its own savepoint.
      await Promise.all([
        store.recordRebuildAttempt("a", attempt(3, 1)),
        store.recordRebuildAttempt("b", attempt(5, 0)),
      ]);
      expect(await store.rebuildAttempt("a")).toEqual(attempt(3, 1));
      expect(await store.rebuildAttempt("b")).toEqual(attempt(5, 0));
      const snapshot = await store.snapshot("a");
      expect({ highWater: snapshot.highWater, inputEpoch: snapshot.inputEpoch }).toEqual({
        highWater: 3,
        inputEpoch: 1,
      });
    } finally {
      store.close();
    }
    // A second open finds the column there, adds nothing and keeps what was written.
    const reopened = new SqliteStore(home);
    try {
      expect(await reopened.rebuildAttempt("a")).toEqual(attempt(3, 1));
    } finally {
      reopened.close();
    }
  });
});

describe("embedded store opened on a file from before the clock kept where its epoch began", () => {
  it("adds the epoch_moved_at column: an old clock reads as begun at its high water (0 when its epoch never moved), the switch holds to that, the next write keeps it", async () => {
    const home = mkdtempSync(join(tmpdir(), "memgate-migration-"));
    const old = new Database(join(home, SqliteStore.FILE));
    old.exec(`
      CREATE TABLE clock (subject TEXT PRIMARY KEY, high_water INTEGER NOT NULL, input_epoch INTEGER NOT NULL, policy TEXT, selector TEXT, rebuild_attempt TEXT);
      INSERT INTO clock VALUES ('moved', 5, 2, NULL, 'v3', NULL);
      INSERT INTO clock VALUES ('never', 4, 0, NULL, 'v3', NULL);
    `);
    old.close();

    const store = new SqliteStore(home);
    try {
      expect(await store.snapshot("moved")).toMatchObject({ highWater: 5, inputEpoch: 2, epochMovedAt: 5 });
      expect(await store.snapshot("never")).toMatchObject({ highWater: 4, inputEpoch: 0, epochMovedAt: 0 });
      await store.append("moved", [MemoryEvent.parse({ eventId: "f-6", kind: "fact", text: "six" })]);
      expect(await store.snapshot("moved")).toMatchObject({ highWater: 6, inputEpoch: 2, epochMovedAt: 5 });
      await store.recordArtifact(candidateRecord("moved", "s-4", 4, 2, null));
      await expect(
        store.publishIfUnchanged({
          subject: "moved",
          artifactId: "s-4",
          expectedAlias: null,
          inputEpoch: 2,
          newCoversThrough: 4,
        }),
      ).rejects.toMatchObject({ reason: "epoch-moved" });
      await store.recordArtifact(candidateRecord("never", "s-2", 2, 0, null));
      expect(
        await store.publishIfUnchanged({
          subject: "never",
          artifactId: "s-2",
          expectedAlias: null,
          inputEpoch: 0,
          newCoversThrough: 2,
        }),
      ).toEqual({ artifactId: "s-2", sourceEpoch: 0, coversThrough: 2 });
    } finally {
      store.close();
    }
  });
});
