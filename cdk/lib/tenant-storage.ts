import { Duration, RemovalPolicy, type Stack } from "aws-cdk-lib";
import {
  AttributeType,
  ProjectionType,
  StreamViewType,
  TableEncryptionV2,
  TableV2,
} from "aws-cdk-lib/aws-dynamodb";
import { AnyPrincipal, Effect, PolicyStatement, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { Key } from "aws-cdk-lib/aws-kms";
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from "aws-cdk-lib/aws-s3";
import { type ITopic, Topic } from "aws-cdk-lib/aws-sns";
import { EmailSubscription } from "aws-cdk-lib/aws-sns-subscriptions";
import { DeduplicationScope, FifoThroughputLimit, Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import { TABLE_KEYS } from "#adapters/aws/table-layout.ts";
import type { Tenant } from "./tenants.ts";
import { VISIBILITY_PER_TIMEOUT, workerTimeoutSeconds } from "./worker-sizing.ts";

/** Where one tenant's memory lives, and where its alarms go. */
export interface TenantStorage {
  /** The tenant's KMS key: bucket, queues and alarm topic. */
  key: Key;
  /** Events, clocks, aliases, artifact records. */
  table: TableV2;
  /** Artifacts, manifests, reports, recall indexes: write-once, never deleted. */
  bucket: Bucket;
  /** Snapshots to consolidate, one message group per subject. */
  queue: Queue;
  deadLetters: Queue;
  alarmTopic: ITopic;
}

/**
 * The tenant's key, table, buckets, queues and alarm topic, in `stack` itself (their logical ids
 * are the stack's, as they always were). Nothing here is ever deleted with the stack.
 */
export function tenantStorage(stack: Stack, tenant: Tenant): TenantStorage {
  const key = new Key(stack, "Key", {
    description: `memgate ${tenant.id}: table, bucket, queues and alarm topic`,
    enableKeyRotation: true,
    removalPolicy: RemovalPolicy.RETAIN,
  });
  // CloudWatch alarms publish to the encrypted topic.
  key.grant(new ServicePrincipal("cloudwatch.amazonaws.com"), "kms:Decrypt", "kms:GenerateDataKey*");

  const table = new TableV2(stack, "Table", {
    partitionKey: { name: TABLE_KEYS.partition, type: AttributeType.STRING },
    sortKey: { name: TABLE_KEYS.sort, type: AttributeType.STRING },
    localSecondaryIndexes: [
      {
        indexName: TABLE_KEYS.sequenceIndex,
        sortKey: { name: TABLE_KEYS.sequence, type: AttributeType.NUMBER },
      },
    ],
    globalSecondaryIndexes: [
      {
        indexName: TABLE_KEYS.rebuildCheckIndex,
        partitionKey: { name: TABLE_KEYS.rebuildCheck, type: AttributeType.STRING },
        projectionType: ProjectionType.KEYS_ONLY,
      },
      {
        // Every subject in one partition, sorted by pk: GET /v1/subjects and the audit's rounds
        // page through it by Query (written once per subject, so the partition is never hot).
        indexName: TABLE_KEYS.subjectIndex,
        partitionKey: { name: TABLE_KEYS.subjectList, type: AttributeType.STRING },
        sortKey: { name: TABLE_KEYS.partition, type: AttributeType.STRING },
        projectionType: ProjectionType.KEYS_ONLY,
      },
    ],
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    deletionProtection: true,
    // The AWS-managed DynamoDB key: a customer key on TableV2 needs a region-bound stack, and a
    // tenant stack stays deployable to any region from one synthesised template.
    encryption: TableEncryptionV2.awsManagedKey(),
    // The outbox reads committed clock changes; keys are all it needs.
    dynamoStream: StreamViewType.KEYS_ONLY,
    removalPolicy: RemovalPolicy.RETAIN,
  });

  const accessLogs = new Bucket(stack, "AccessLogs", {
    encryption: BucketEncryption.S3_MANAGED,
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    enforceSSL: true,
    objectOwnership: ObjectOwnership.BUCKET_OWNER_PREFERRED,
    lifecycleRules: [{ expiration: Duration.days(365) }],
    removalPolicy: RemovalPolicy.RETAIN,
  });
  const bucket = new Bucket(stack, "Artifacts", {
    encryption: BucketEncryption.KMS,
    encryptionKey: key,
    bucketKeyEnabled: true,
    versioned: true,
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    enforceSSL: true,
    serverAccessLogsBucket: accessLogs,
    serverAccessLogsPrefix: "artifacts/",
    removalPolicy: RemovalPolicy.RETAIN,
  });
  // Artifacts, manifests, reports and recall indexes are write-once and kept for audit: nobody
  // deletes them, whatever their IAM permissions say.
  bucket.addToResourcePolicy(
    new PolicyStatement({
      sid: "DenyDeletingMemory",
      effect: Effect.DENY,
      principals: [new AnyPrincipal()],
      actions: ["s3:DeleteObject", "s3:DeleteObjectVersion", "s3:PutLifecycleConfiguration"],
      resources: [bucket.bucketArn, bucket.arnForObjects("*")],
    }),
  );
  // Nor does anyone overwrite them: a put must carry If-None-Match (S3 then refuses a key that
  // exists), so write-once holds in the bucket itself, not only in the adapter that sends it.
  bucket.addToResourcePolicy(
    new PolicyStatement({
      sid: "DenyOverwritingMemory",
      effect: Effect.DENY,
      principals: [new AnyPrincipal()],
      actions: ["s3:PutObject"],
      resources: [bucket.arnForObjects("*")],
      conditions: { Null: { "s3:if-none-match": "true" } },
    }),
  );

  const deadLetters = new Queue(stack, "DeadLetters", {
    fifo: true,
    encryption: QueueEncryption.KMS,
    encryptionMasterKey: key,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
  });
  const queue = new Queue(stack, "Snapshots", {
    fifo: true,
    contentBasedDeduplication: false,
    // High-throughput FIFO: order and deduplication per subject (the message group), which is
    // all memgate needs, and throughput per group instead of per queue.
    deduplicationScope: DeduplicationScope.MESSAGE_GROUP,
    fifoThroughputLimit: FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
    encryption: QueueEncryption.KMS,
    encryptionMasterKey: key,
    enforceSSL: true,
    // AWS's rule for SQS event sources: at least six times the worker's timeout.
    visibilityTimeout: Duration.seconds(workerTimeoutSeconds(tenant) * VISIBILITY_PER_TIMEOUT),
    deadLetterQueue: { queue: deadLetters, maxReceiveCount: 5 },
  });

  const alarmTopic = tenant.alarmTopicArn
    ? Topic.fromTopicArn(stack, "AlarmTopic", tenant.alarmTopicArn)
    : new Topic(stack, "AlarmTopic", { masterKey: key, enforceSSL: true });
  if (tenant.alarmEmail && alarmTopic instanceof Topic)
    alarmTopic.addSubscription(new EmailSubscription(tenant.alarmEmail));

  return { key, table, bucket, queue, deadLetters, alarmTopic };
}
