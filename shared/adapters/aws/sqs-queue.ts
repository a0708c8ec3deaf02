import { createHash } from "node:crypto";
import {
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { Snapshot } from "../../domain/schemas.ts";
import { Snapshot as SnapshotSchema } from "../../domain/schemas.ts";
import type { QueueMessage, SnapshotQueue } from "../../ports/store.ts";
import { snapshotDedupId } from "../../ports/store.ts";

/**
 * Snapshot messages on an SQS FIFO queue: the message group is the subject (one subject's
 * snapshots in order, one at a time), the deduplication id is subject:highWater:inputEpoch (a
 * snapshot sent twice within the dedup window is one message). Failures go to the DLQ by redrive.
 */
export class SqsSnapshotQueue implements SnapshotQueue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
    private readonly waitSeconds = 1,
  ) {}

  async send(snapshot: Snapshot): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: JSON.stringify(snapshot),
        // SQS ids allow 128 ASCII characters; subjects may be longer or not ASCII, so hash them.
        MessageGroupId: createHash("sha256").update(snapshot.subject).digest("hex"),
        MessageDeduplicationId: createHash("sha256").update(snapshotDedupId(snapshot)).digest("hex"),
      }),
    );
  }

  async receive(max: number): Promise<QueueMessage[]> {
    const { Messages } = await this.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.queueUrl,
        MaxNumberOfMessages: Math.min(10, max),
        WaitTimeSeconds: this.waitSeconds,
      }),
    );
    return (Messages ?? []).map((message) => ({
      body: SnapshotSchema.parse(JSON.parse(message.Body ?? "null")),
      receipt: message.ReceiptHandle ?? "",
    }));
  }

  async ack(receipt: string): Promise<void> {
    await this.sqs.send(new DeleteMessageCommand({ QueueUrl: this.queueUrl, ReceiptHandle: receipt }));
  }
}
