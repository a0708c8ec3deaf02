import type { Snapshot } from "#domain/schemas.ts";

export interface QueueMessage {
  body: Snapshot;
  receipt: string;
}

/** Snapshot messages: FIFO per subject, deduplicated by subject:highWater:inputEpoch. */
export interface SnapshotQueue {
  send(snapshot: Snapshot): Promise<void>;
  receive(max: number): Promise<QueueMessage[]>;
  /** Done with the message: it is removed. */
  ack(receipt: string): Promise<void>;
  /**
   * Not done: the message comes back for another try after a delay (SQS: when its visibility
   * timeout ends), and to the dead-letter queue after the queue's maximum receives.
   */
  release(receipt: string): Promise<void>;
}

/** The queue's deduplication id: the same snapshot sent twice is one message. */
export function snapshotDedupId(snapshot: Snapshot): string {
  return `${snapshot.subject}:${snapshot.highWater}:${snapshot.inputEpoch}`;
}
