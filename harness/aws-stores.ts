import { randomUUID } from "node:crypto";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { DynamoStore } from "#adapters/aws/dynamo-store.ts";
import { S3ArtifactStore } from "#adapters/aws/s3-artifacts.ts";
import { SqsSnapshotQueue } from "#adapters/aws/sqs-queue.ts";
import { createMemgateTable } from "#adapters/aws/table.ts";

const credentials = { accessKeyId: "test", secretAccessKey: "test" };
const region = "us-east-1";

/** Counts requests that leave a client: a publish must be one DynamoDB request, a snapshot one. */
export interface RequestCounter {
  count: number;
  operations: string[];
}

export interface Endpoints {
  dynamoEndpoint: string;
  motoEndpoint: string;
}

export function dynamoClient(endpoints: Endpoints, counter?: RequestCounter): DynamoDBClient {
  const client = new DynamoDBClient({ endpoint: endpoints.dynamoEndpoint, region, credentials });
  if (counter)
    client.middlewareStack.add(
      (next, context) => async (args) => {
        counter.count++;
        counter.operations.push(String(context.commandName));
        return next(args);
      },
      { step: "finalizeRequest", name: "memgateRequestCounter" },
    );
  return client;
}

/**
 * A fresh set of AWS resources on the local engines for one test file: its own table, bucket and
 * FIFO queue (with a DLQ and redrive), named with a random suffix so files never collide.
 */
export async function openAwsStores(
  endpoints: Endpoints,
  counter?: RequestCounter,
  options: { stream?: boolean } = {},
) {
  const suffix = randomUUID().slice(0, 8);
  const dynamo = dynamoClient(endpoints, counter);
  const s3 = new S3Client({ endpoint: endpoints.motoEndpoint, region, credentials, forcePathStyle: true });
  const sqs = new SQSClient({ endpoint: endpoints.motoEndpoint, region, credentials });
  const tableName = `memgate-${suffix}`;
  const bucket = `memgate-${suffix}`;
  await createMemgateTable(dynamo, tableName, options);
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const dlq = await sqs.send(
    new CreateQueueCommand({ QueueName: `memgate-dlq-${suffix}.fifo`, Attributes: { FifoQueue: "true" } }),
  );
  const dlqArn = (
    await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ["QueueArn"] }))
  ).Attributes?.QueueArn;
  const queue = await sqs.send(
    new CreateQueueCommand({
      QueueName: `memgate-${suffix}.fifo`,
      Attributes: {
        FifoQueue: "true",
        VisibilityTimeout: "30",
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 3 }),
      },
    }),
  );
  const store = new DynamoStore(dynamo, tableName);
  return {
    store,
    artifacts: new S3ArtifactStore(s3, bucket, store),
    queue: new SqsSnapshotQueue(sqs, queue.QueueUrl as string, 0),
    bucket,
    queueUrl: queue.QueueUrl as string,
    dlqUrl: dlq.QueueUrl as string,
    clients: { dynamo, s3, sqs },
  };
}
