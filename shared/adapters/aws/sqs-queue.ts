import { createHash } from "node:crypto";
import {
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { Snapshot } from "#domain/schemas.ts";
import { Snapshot as SnapshotSchema } from "#domain/schemas.ts";
import type { QueueMessage, SnapshotQueue } from "#ports/queue.ts";
import { snapshotDedupId } from "#ports/queue.ts";

/**
 * Snapshot messages on an SQS FIFO queue: the message group is the subject (one subject's
 * snapshots in order, one at a time), the deduplication id is subject:highWater:inputEpoch:alias
 * (a snapshot sent twice within the dedup window is one message). Failures go to the DLQ by redrive.
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
    // A body that is not a snapshot is left unacknowledged: past maxReceiveCount the redrive
    // policy moves it to the dead-letter queue, where an operator can read it.
    return (Messages ?? []).flatMap((message) => {
      const body = SnapshotSchema.safeParse(parseJson(message.Body ?? ""));
      return body.success ? [{ body: body.data, receipt: message.ReceiptHandle ?? "" }] : [];
    });
  }

  async ack(receipt: string): Promise<void> {
    await this.sqs.send(new DeleteMessageCommand({ QueueUrl: this.queueUrl, ReceiptHandle: receipt }));
  }

  /** Nothing to send: the message reappears when its visibility timeout ends, and the queue's
   * redrive policy moves it to the dead-letter queue after maxReceiveCount receives. */
  async release(_receipt: string): Promise<void> {}
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
