import type { Snapshot } from "#domain/schemas.ts";
import type { QueueMessage, SnapshotQueue } from "#ports/queue.ts";
import { snapshotDedupId } from "#ports/queue.ts";

interface Waiting {
  body: Snapshot;
  dedupId: string;
  receives: number;
  /** Not handed out before this time (ms since epoch): a released message waits, as after SQS's visibility timeout. */
  visibleAt: number;
}

/**
 * The embedded queue: in process, with the FIFO queue's semantics that matter here. A snapshot
 * sent twice (same subject, highWater and epoch) while the first is waiting or in flight is one
 * message (SQS deduplicates within a window; here, until the first is acknowledged, so a snapshot
 * whose generation failed can be requested again); messages of one subject come out in order,
 * and a subject with a message in flight (received, not acked) yields no other until it is acked
 * or released, as an SQS FIFO message group does. A released message comes back after
 * `retryDelayMs`; after `maxReceives` receives it goes to `deadLetters` instead, as SQS's redrive
 * policy moves it to the dead-letter queue.
 */
export class MemoryQueue implements SnapshotQueue {
  private readonly waiting: Waiting[] = [];
  private readonly seen = new Set<string>();
  /** receipt → the message received and not yet acknowledged or released. */
  private readonly inFlight = new Map<string, Waiting>();
  private nextReceipt = 1;
  private readonly listeners = new Set<() => void>();
  readonly deadLetters: Snapshot[] = [];

  constructor(
    private readonly options: { maxReceives?: number; retryDelayMs?: number; now?: () => number } = {},
  ) {}

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  async send(snapshot: Snapshot): Promise<void> {
    const dedupId = snapshotDedupId(snapshot);
    if (this.seen.has(dedupId)) return;
    this.seen.add(dedupId);
    this.waiting.push({ body: snapshot, dedupId, receives: 0, visibleAt: 0 });
    for (const listener of this.listeners) listener();
  }

  onSent(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async receive(max: number): Promise<QueueMessage[]> {
    const messages: QueueMessage[] = [];
    const busy = new Set([...this.inFlight.values()].map((message) => message.body.subject));
    const now = this.now();
    for (let i = 0; i < this.waiting.length && messages.length < max; ) {
      const message = this.waiting[i] as Waiting;
      if (busy.has(message.body.subject) || message.visibleAt > now) {
        // A later message of the same subject must not overtake this one.
        busy.add(message.body.subject);
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      const receipt = `r-${this.nextReceipt++}`;
      message.receives++;
      this.inFlight.set(receipt, message);
      busy.add(message.body.subject);
      messages.push({ body: message.body, receipt });
    }
    return messages;
  }

  async ack(receipt: string): Promise<void> {
    const message = this.inFlight.get(receipt);
    if (!message) return;
    this.inFlight.delete(receipt);
    this.seen.delete(message.dedupId);
  }

  async release(receipt: string): Promise<void> {
    const message = this.inFlight.get(receipt);
    if (!message) return;
    this.inFlight.delete(receipt);
    if (message.receives >= (this.options.maxReceives ?? 3)) {
      this.seen.delete(message.dedupId);
      this.deadLetters.push(message.body);
      return;
    }
    message.visibleAt = this.now() + (this.options.retryDelayMs ?? 5_000);
    // Back at the head of its subject's line: FIFO order within the subject is kept.
    const next = this.waiting.findIndex((waiting) => waiting.body.subject === message.body.subject);
    this.waiting.splice(next === -1 ? this.waiting.length : next, 0, message);
  }
}
