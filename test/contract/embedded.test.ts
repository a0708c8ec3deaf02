import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MemoryQueue } from "#adapters/embedded/memory-queue.ts";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import { describeStoreContract } from "./store-contract.ts";

const store = new SqliteStore(mkdtempSync(join(tmpdir(), "memgate-contract-")));
const queue = new MemoryQueue();
afterAll(() => store.close());

describeStoreContract("embedded (SQLite + files)", () => ({
  events: store,
  alias: store,
  artifacts: store,
  queue,
  settings: store,
  boundedTransactions: false,
}));

const snapshotOf = (subject: string, highWater: number) => ({
  subject,
  highWater,
  inputEpoch: 0,
  expectedAlias: null,
});

describe("the embedded queue", () => {
  it("tells a consumer in the process each time a message is added, not for a duplicate, until told to stop", async () => {
    const local = new MemoryQueue();
    let calls = 0;
    const stop = local.onSent(() => calls++);
    await local.send(snapshotOf("ana", 5));
    await local.send(snapshotOf("ana", 5));
    expect(calls).toBe(1);
    await local.send(snapshotOf("ana", 9));
    expect(calls).toBe(2);
    stop();
    await local.send(snapshotOf("bo", 1));
    expect(calls).toBe(2);
    expect(await local.receive(10)).toHaveLength(2);
  });
});
