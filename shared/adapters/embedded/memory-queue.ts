import type { Snapshot } from "../../domain/schemas.ts";
import type { QueueMessage, SnapshotQueue } from "../../ports/store.ts";
import { snapshotDedupId } from "../../ports/store.ts";

/**
 * The embedded queue: in process, with the FIFO queue's semantics that matter here. A snapshot
 * sent twice (same subject, highWater and epoch) is one message; messages of one subject come out
 * in order, and a subject with a message in flight (received, not acked) yields no other until
 * it is acked, as an SQS FIFO message group does.
 */
export class MemoryQueue implements SnapshotQueue {
  private readonly waiting: Array<{ body: Snapshot; dedupId: string }> = [];
  private readonly seen = new Set<string>();
  private readonly inFlight = new Map<string, string>();
  private nextReceipt = 1;

  async send(snapshot: Snapshot): Promise<void> {
    const dedupId = snapshotDedupId(snapshot);
    if (this.seen.has(dedupId)) return;
    this.seen.add(dedupId);
    this.waiting.push({ body: snapshot, dedupId });
  }

  async receive(max: number): Promise<QueueMessage[]> {
    const messages: QueueMessage[] = [];
    const busy = new Set(this.inFlight.values());
    for (let i = 0; i < this.waiting.length && messages.length < max; ) {
      const message = this.waiting[i] as { body: Snapshot; dedupId: string };
      if (busy.has(message.body.subject)) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      const receipt = `r-${this.nextReceipt++}`;
      this.inFlight.set(receipt, message.body.subject);
      busy.add(message.body.subject);
      messages.push({ body: message.body, receipt });
    }
    return messages;
  }

  async ack(receipt: string): Promise<void> {
    this.inFlight.delete(receipt);
  }
}
