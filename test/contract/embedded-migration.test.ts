import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import type { RebuildAttempt } from "#domain/rebuild.ts";
import { MemoryEvent, type MemoryEvent as MemoryEventType } from "#domain/schemas.ts";
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
