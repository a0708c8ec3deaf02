import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
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
