import type { Snapshot } from "#domain/schemas.ts";

export interface QueueMessage {
  body: Snapshot;
  receipt: string;
}

/** Snapshot messages: FIFO per subject, deduplicated by subject:highWater:inputEpoch:alias. */
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
  /**
   * A queue held in this process (the embedded one) calls `listener` each time a message is added
   * (not for a duplicate), so a consumer in the same process looks now instead of at its next
   * poll; answers how to stop. A queue elsewhere (SQS) does not offer it: its consumer polls.
   */
  onSent?(listener: () => void): () => void;
}

/**
 * The queue's deduplication id: the same snapshot sent twice is one message. The alias it expects
 * is part of it: a snapshot of the same events asked for after a publish is another message than
 * one queued before it, which can only be dropped (its switch expects the alias before).
 */
export function snapshotDedupId(snapshot: Snapshot): string {
  return JSON.stringify([
    snapshot.subject,
    snapshot.highWater,
    snapshot.inputEpoch,
    snapshot.expectedAlias?.parentArtifactId ?? null,
  ]);
}
