import type { Stack } from "aws-cdk-lib";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import { TABLE_KEYS } from "#adapters/aws/table-layout.ts";
import { invokeModelStatements } from "./bedrock-access.ts";
import type { MemgateFunction } from "./memgate-function.ts";
import type { TenantStorage } from "./tenant-storage.ts";

/**
 * The artifact bucket's key prefixes (one per kind of write-once file, `<prefix>/<subject>/<id>.json`,
 * shared/adapters/aws/s3-artifacts.ts): each function reads and writes only the kinds it uses.
 */
const OBJECTS = {
  manifests: "manifests/",
  artifacts: "artifacts/",
  reports: "reports/",
  recall: "recall/",
  attempts: "attempts/",
  segments: "segments/",
} as const;
type ObjectKind = keyof typeof OBJECTS;

/** What one function's use cases call (`allowUse` turns it into its policy). */
export interface FunctionUse {
  items: readonly DynamoItemAction[];
  stream?: boolean;
  scansRebuildChecks?: boolean;
  /** Pages through the subject index bySubject (Query). */
  listsSubjects?: boolean;
  reads: readonly ObjectKind[];
  writes?: readonly ObjectKind[];
  /** A missing key is an answer (a recall index, a cached segment), not an error. */
  missingKeys?: boolean;
  sends?: boolean;
  receives?: boolean;
  /** The Bedrock model ids it calls, by the part they play. */
  models?: { Writer?: string | undefined; Judge?: string | undefined };
  bedrockRegions?: readonly string[] | undefined;
}
type DynamoItemAction =
  | "GetItem"
  | "BatchGetItem"
  | "Query"
  | "Scan"
  | "PutItem"
  | "UpdateItem"
  | "ConditionCheckItem";

/**
 * One function's policy from what its use cases call: DynamoDB actions on the table's items
 * (`items`), queries of the sequence index (every reader of the log), the stream (the outbox),
 * a scan of the sparse rebuild-check index (the sweep); S3 objects by kind, read or written once
 * (the bucket's keys listed only where a missing key is an answer, so S3 says 404, not 403);
 * the queue, sent to or received from; the tenant's key through S3 and SQS only; the tenant's
 * Bedrock models. No DeleteItem, no BatchWriteItem, no DeleteObject anywhere.
 */
export function allowUse(stack: Stack, storage: TenantStorage, fn: MemgateFunction, use: FunctionUse): void {
  const { table, bucket, queue, key } = storage;
  fn.allow(
    new PolicyStatement({
      sid: "TableItems",
      actions: use.items.map((action) => `dynamodb:${action}`),
      resources: [table.tableArn],
    }),
  );
  const onIndex = (sid: string, action: "Query" | "Scan", index: string) =>
    fn.allow(
      new PolicyStatement({
        sid,
        actions: [`dynamodb:${action}`],
        resources: [`${table.tableArn}/index/${index}`],
      }),
    );
  onIndex("SequenceIndex", "Query", TABLE_KEYS.sequenceIndex);
  if (use.scansRebuildChecks) onIndex("RebuildCheckIndex", "Scan", TABLE_KEYS.rebuildCheckIndex);
  if (use.listsSubjects) onIndex("SubjectIndex", "Query", TABLE_KEYS.subjectIndex);
  if (use.stream && table.tableStreamArn !== undefined)
    // The four actions Lambda's event source mapping checks on the stream when it is created.
    fn.allow(
      new PolicyStatement({
        sid: "TableStream",
        actions: [
          "dynamodb:DescribeStream",
          "dynamodb:GetRecords",
          "dynamodb:GetShardIterator",
          "dynamodb:ListStreams",
        ],
        resources: [table.tableStreamArn],
      }),
    );
  const objects = (kinds: readonly ObjectKind[]) =>
    kinds.map((kind) => bucket.arnForObjects(`${OBJECTS[kind]}*`));
  const perSubject = "keys under one kind of write-once file, named per subject and artifact at run time";
  fn.allow(
    new PolicyStatement({ sid: "ReadObjects", actions: ["s3:GetObject"], resources: objects(use.reads) }),
    `Objects of the tenant's artifact bucket: ${perSubject}.`,
  );
  if (use.missingKeys)
    fn.allow(
      new PolicyStatement({
        sid: "ListKeys",
        actions: ["s3:ListBucket"],
        resources: [bucket.bucketArn],
      }),
    );
  if (use.writes)
    fn.allow(
      new PolicyStatement({
        sid: "WriteObjectsOnce",
        actions: ["s3:PutObject"],
        resources: objects(use.writes),
        conditions: { StringEquals: { "s3:if-none-match": "*" } },
      }),
      `New objects of the tenant's artifact bucket, each written once (If-None-Match): ${perSubject}.`,
    );
  if (use.sends)
    fn.allow(
      new PolicyStatement({
        sid: "SendSnapshots",
        actions: ["sqs:SendMessage"],
        resources: [queue.queueArn],
      }),
    );
  if (use.receives)
    fn.allow(
      new PolicyStatement({
        sid: "ReceiveSnapshots",
        actions: ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"],
        resources: [queue.queueArn],
      }),
    );
  fn.allow(
    new PolicyStatement({
      sid: "TenantKeyThroughS3AndSqs",
      actions: ["kms:Decrypt", "kms:GenerateDataKey"],
      resources: [key.keyArn],
      conditions: {
        StringEquals: {
          "kms:ViaService": [`s3.${stack.region}.amazonaws.com`, `sqs.${stack.region}.amazonaws.com`],
        },
      },
    }),
  );
  const bedrockScope = { partition: stack.partition, region: stack.region, account: stack.account };
  for (const [role, id] of Object.entries(use.models ?? {}))
    if (id !== undefined)
      for (const statement of invokeModelStatements(bedrockScope, id, `Invoke${role}`, use.bedrockRegions))
        fn.allow(
          statement,
          `The tenant's ${role.toLowerCase()} model through its global inference profile, which routes to any commercial Region (bedrock:InferenceProfileArn names the profile).`,
        );
}

/**
 * Reading the OpenAI-compatible key: the secret itself, and, when a customer managed key
 * encrypts it, decrypting with that key through Secrets Manager for that secret alone.
 */
export function allowSecret(fn: MemgateFunction, secretArn: string, kmsKeyArn: string | undefined): void {
  fn.allow(
    new PolicyStatement({
      sid: "ReadOpenAiKey",
      actions: ["secretsmanager:GetSecretValue"],
      resources: [secretArn],
    }),
  );
  if (kmsKeyArn === undefined) return;
  const secretRegion = secretArn.split(":")[3];
  fn.allow(
    new PolicyStatement({
      sid: "DecryptOpenAiKey",
      actions: ["kms:Decrypt"],
      resources: [kmsKeyArn],
      conditions: {
        StringEquals: {
          "kms:ViaService": `secretsmanager.${secretRegion}.amazonaws.com`,
          "kms:EncryptionContext:SecretARN": secretArn,
        },
      },
    }),
  );
}
