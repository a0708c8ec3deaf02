import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
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
