// What the use cases run on in the tests and the benchmarks: their dependencies over an opened
// store set (the deterministic consolidator, a fixed clock, counted ids, an in-memory queue) and
// batches of numbered facts.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryQueue } from "#adapters/embedded/memory-queue.ts";
import { SqliteStore, type SqliteStoreOptions } from "#adapters/embedded/sqlite-store.ts";
import { MODELS } from "#adapters/models/models.ts";
import type { Deps } from "#app/deps.ts";
import { NO_FAILPOINTS } from "#app/failpoints.ts";
import { DETERMINISTIC_MODEL } from "#domain/consolidator.ts";
import type { AliasPort } from "#ports/alias.ts";
import type { ArtifactStore } from "#ports/artifacts.ts";
import type { EventLog } from "#ports/event-log.ts";
import type { ModelPort } from "#ports/model.ts";
import type { SettingsPort } from "#ports/settings.ts";

/** The stores of one opened adapter set that the use cases read and write. */
export interface PipelineStores {
  events: EventLog;
  alias: AliasPort;
  artifacts: ArtifactStore;
  settings: SettingsPort;
}

let ids = 0;

/**
 * The use cases' dependencies over `stores`: the deterministic consolidator, a fixed clock, ids
 * counted across the process, a fresh in-memory queue; `overrides` replaces any of them.
 */
export function depsOver(stores: PipelineStores, overrides: Partial<Deps> = {}): Deps {
  return {
    ...stores,
    queue: new MemoryQueue(),
    model: MODELS[DETERMINISTIC_MODEL] as ModelPort,
    prompt: { version: "consolidate-v1", text: "test prompt", hash: `sha256:${"a".repeat(64)}` },
    now: () => new Date("2026-11-29T12:00:00Z"),
    newId: () => `t${++ids}`,
    failpoints: NO_FAILPOINTS,
    generationTimeoutMs: 2_000,
    progress: () => {},
    ...overrides,
  };
}

/** The use cases' dependencies over one embedded store, which is every store port but the queue. */
export function depsOverStore(store: SqliteStore, overrides: Partial<Deps> = {}): Deps {
  return depsOver({ events: store, alias: store, artifacts: store, settings: store }, overrides);
}

/** A new embedded store in a folder of its own under the system's temporary folder. */
export function temporaryStore(name: string, options: SqliteStoreOptions = {}): SqliteStore {
  return SqliteStore.open(mkdtempSync(join(tmpdir(), `memgate-${name}-`)), options);
}

/** Events 1..n: facts on distinct keys, a few with numbers, so every summary has must-preserve items. */
export function factsBatch(from: number, to: number) {
  return Array.from({ length: to - from + 1 }, (_, i) => {
    const n = from + i;
    return {
      eventId: `m-${n}`,
      kind: n % 7 === 0 ? "decision" : "fact",
      text: `fact number ${n}`,
      assertions: [
        {
          key: `item-${n}`,
          value: { quantity: String(n), unit: "km" },
          polarity: n % 5 === 0 ? "negated" : "affirmed",
        },
      ],
    };
  });
}
