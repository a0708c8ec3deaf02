import type { AliasPort } from "./alias.ts";
import type { ArtifactStore } from "./artifacts.ts";
import type { EventLog } from "./event-log.ts";
import type { SnapshotQueue } from "./queue.ts";
import type { SettingsPort } from "./settings.ts";

/**
 * One adapter set, opened: what a composition root (embedded or AWS) hands the use cases. Two sets
 * implement the ports, AWS (DynamoDB, S3, SQS) and embedded (one SQLite file, write-once files, an
 * in-process queue); one contract suite runs against both.
 */
export interface Stores {
  events: EventLog;
  alias: AliasPort;
  artifacts: ArtifactStore;
  queue: SnapshotQueue;
  settings: SettingsPort;
  close(): void;
}
