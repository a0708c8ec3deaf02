import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import { MemoryEvent } from "#domain/schemas.ts";

/**
 * A serving process's store (`serving`: serve and mcp) never checkpoints its log
 * inside a commit: the commit of a 4.8 MB batch (past the 1,000 pages at which SQLite checkpoints) leaves the database file as it was (the batch is
 * in the log), and a thread of its own copies the log into the file moments later. Any other
 * store checkpoints in the commit, as SQLite does by default.
 */
const BATCH = Array.from({ length: 400 }, (_, i) =>
  MemoryEvent.parse({ eventId: `e${i}`, kind: "note", text: `${"x".repeat(12_000)} ${i}` }),
);

async function databaseFileSizes(serving: boolean) {
  const home = mkdtempSync(join(tmpdir(), "memgate-wal-"));
  const file = join(home, SqliteStore.FILE);
  const store = SqliteStore.open(home, { serving });
  try {
    await store.append("s", BATCH);
    const afterCommit = statSync(file).size;
    // The thread checkpoints every 200 ms: give it a few turns.
    for (let waited = 0; waited < 5_000 && statSync(file).size < 4_000_000; waited += 100) await sleep(100);
    return { afterCommit, later: statSync(file).size };
  } finally {
    store.close();
  }
}

describe("checkpoints of the embedded store's log", () => {
  it("a serving process's commit leaves them to a thread of its own, which copies the batch into the file", async () => {
    const sizes = await databaseFileSizes(true);
    expect(sizes.afterCommit).toBeLessThan(1_000_000);
    expect(sizes.later).toBeGreaterThan(4_000_000);
  });

  it("any other store checkpoints in the commit", async () => {
    const sizes = await databaseFileSizes(false);
    expect(sizes.afterCommit).toBeGreaterThan(4_000_000);
  });
});
