import type { Manifest, MemoryEvent } from "#domain/schemas.ts";
import { MemoryEvent as MemoryEventSchema } from "#domain/schemas.ts";
import type { AliasPort } from "#ports/alias.ts";
import type { ArtifactStore } from "#ports/artifacts.ts";
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

export const ev = (input: Record<string, unknown>): MemoryEvent => MemoryEventSchema.parse(input);
export const fact = (
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

export function manifestFor(subject: string, artifactId: string): Manifest {
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
export const freshSubject = () => `user-${process.pid}-${++subjects}`;
