import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { S3Client } from "@aws-sdk/client-s3";
import { SQSClient } from "@aws-sdk/client-sqs";
import type { AuditRounds } from "#ports/audit-rounds.ts";
import type { Stores } from "#ports/stores.ts";
import { DynamoStore } from "./dynamo-store.ts";
import { S3ArtifactStore } from "./s3-artifacts.ts";
import { SqsSnapshotQueue } from "./sqs-queue.ts";

/** Where one tenant's resources are: the stack's outputs. */
export interface AwsStoresConfig {
  table: string;
  bucket: string;
  queueUrl: string;
}

/** The AWS stores, and the scheduled audit's checkpoint, which only the audit Lambda keeps. */
export interface AwsStores extends Stores {
  rounds: AuditRounds;
}

/**
 * The AWS stores: the tenant's DynamoDB table, S3 bucket and SQS queue behind the storage ports,
 * for both runtimes that use them (the Lambdas, and the command line with `--store aws`).
 * Endpoints, region and credentials come from the standard SDK settings (AWS_ENDPOINT_URL_DYNAMODB,
 * _S3, _SQS for local engines); `instrument` wraps each client (the Lambdas' X-Ray tracer).
 * Imports nothing of the embedded store.
 */
export function composeAwsStores(
  config: AwsStoresConfig,
  options: { instrument?: <T extends object>(client: T) => T } = {},
): AwsStores {
  const instrument = options.instrument ?? (<T extends object>(client: T) => client);
  const dynamo = instrument(new DynamoDBClient({}));
  const s3 = instrument(new S3Client({ forcePathStyle: true }));
  const sqs = instrument(new SQSClient({}));
  const store = new DynamoStore(dynamo, config.table);
  return {
    events: store,
    alias: store,
    artifacts: new S3ArtifactStore(s3, config.bucket, store),
    queue: new SqsSnapshotQueue(sqs, config.queueUrl),
    settings: store,
    rounds: store,
    close: () => {
      dynamo.destroy();
      s3.destroy();
      sqs.destroy();
    },
  };
}
