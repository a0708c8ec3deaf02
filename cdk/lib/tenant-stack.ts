import { CfnOutput, Duration, Stack, type StackProps, Tags } from "aws-cdk-lib";
import type { HttpApi, HttpRoute, HttpStage } from "aws-cdk-lib/aws-apigatewayv2";
import type { TableV2 } from "aws-cdk-lib/aws-dynamodb";
import { Rule, Schedule } from "aws-cdk-lib/aws-events";
import { LambdaFunction } from "aws-cdk-lib/aws-events-targets";
import type { ManagedPolicy } from "aws-cdk-lib/aws-iam";
import type { Key } from "aws-cdk-lib/aws-kms";
import { FilterCriteria, FilterRule, StartingPosition } from "aws-cdk-lib/aws-lambda";
import { DynamoEventSource, SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import type { Bucket } from "aws-cdk-lib/aws-s3";
import type { ITopic } from "aws-cdk-lib/aws-sns";
import type { Queue } from "aws-cdk-lib/aws-sqs";
import type { Construct } from "constructs";
import { TABLE_ITEM_KEYS, TABLE_KEYS } from "#adapters/aws/table-layout.ts";
import type { ApiRole } from "#runtime/api-roles.ts";
import { bedrockModelId, callsOpenAiModel, lambdaEnvironment } from "#runtime/settings.ts";
import { allowSecret, allowUse } from "./function-access.ts";
import { MemgateFunction } from "./memgate-function.ts";
import { capitalised, tenantApi } from "./tenant-api.ts";
import { monitorTenant } from "./tenant-monitoring.ts";
import { tenantStorage } from "./tenant-storage.ts";
import type { Tenant } from "./tenants.ts";
import { workerTimeoutSeconds } from "./worker-sizing.ts";

export interface TenantStackProps extends StackProps {
  tenant: Tenant;
}

/** Minutes between the audit's invocations: each resumes the day's round where the last stopped. */
export const AUDIT_EVERY_MINUTES = 15;

/**
 * One tenant's memgate: its table (events, clocks, aliases, records), its bucket (artifacts,
 * manifests, reports: write-once, never deleted), its snapshot queue and DLQ, the five Lambdas,
 * the HTTP API, the dashboard and the alarms. No physical names: two tenants deploy side by side.
 * The resources are made by `tenantStorage`, `tenantApi` and `monitorTenant` in the stack itself
 * (their logical ids are the stack's); each function's policy by `allowUse`.
 */
export class TenantStack extends Stack {
  /** The tenant's KMS key: bucket, queues and alarm topic. */
  readonly key: Key;
  readonly table: TableV2;
  readonly bucket: Bucket;
  readonly queue: Queue;
  readonly deadLetters: Queue;
  readonly alarmTopic: ITopic;
  readonly api: HttpApi;
  /** The review page's static routes: the only ones without an authorizer. */
  readonly reviewPageRoutes: HttpRoute[];
  /** The API's routes (CONTRACT §6), one per entry of API_ROUTES, with the roles that may call them. */
  readonly apiRoutes: HttpRoute[];
  /** IAM authorization: one managed policy per role, naming the routes it may invoke (for tenants to attach). */
  readonly rolePolicies: Partial<Record<ApiRole, ManagedPolicy>>;

  constructor(scope: Construct, id: string, props: TenantStackProps) {
    super(scope, id, props);
    const { tenant } = props;
    Tags.of(this).add("memgate:tenant", tenant.id);

    const storage = tenantStorage(this, tenant);
    const { table, bucket, queue } = storage;
    this.key = storage.key;
    this.table = table;
    this.bucket = bucket;
    this.queue = queue;
    this.deadLetters = storage.deadLetters;
    this.alarmTopic = storage.alarmTopic;
    const workerTimeout = Duration.seconds(workerTimeoutSeconds(tenant));

    const environment = lambdaEnvironment({
      tenant: tenant.id,
      table: table.tableName,
      bucket: bucket.bucketName,
      queueUrl: queue.queueUrl,
      model: tenant.model,
      generationTimeoutMs: tenant.generationTimeoutSeconds * 1000,
      openAiBaseUrl: tenant.openAiBaseUrl,
      contextTokens: tenant.contextTokens,
      maxOutputTokens: tenant.maxOutputTokens,
      repairAttempts: tenant.repairAttempts,
      budgetTokens: tenant.budgetTokens,
      judge: tenant.judge,
      openAiKeySecret: tenant.openAiKeySecretArn,
    });
    const apiFunction = new MemgateFunction(this, "ApiFunction", {
      lambda: "api",
      description: `memgate ${tenant.id}: the agents' HTTP API`,
      timeout: Duration.seconds(29),
      environment,
      sourceMaps: tenant.sourceMaps,
    });
    const worker = new MemgateFunction(this, "WorkerFunction", {
      lambda: "worker",
      description: `memgate ${tenant.id}: consolidation worker (generate, gate, publish)`,
      timeout: workerTimeout,
      memorySize: 2048,
      environment,
      sourceMaps: tenant.sourceMaps,
    });
    const outbox = new MemgateFunction(this, "OutboxFunction", {
      lambda: "outbox",
      description: `memgate ${tenant.id}: rebuild outbox on the table's stream`,
      timeout: Duration.seconds(60),
      environment,
      sourceMaps: tenant.sourceMaps,
    });
    const sweeper = new MemgateFunction(this, "SweepFunction", {
      lambda: "sweep",
      description: `memgate ${tenant.id}: the sweep for rebuilds the stream missed`,
      timeout: Duration.minutes(5),
      environment,
      sourceMaps: tenant.sourceMaps,
    });

    const auditor = new MemgateFunction(this, "AuditFunction", {
      lambda: "audit",
      description: `memgate ${tenant.id}: the audit of what recall serves, a round a day`,
      timeout: Duration.minutes(15),
      memorySize: 2048,
      environment,
      sourceMaps: tenant.sourceMaps,
    });

    // Least privilege: one policy per function, naming what its use cases call, no more (ARCHITECTURE.md;
    // test/cdk/least-privilege.test.ts runs each handler through its use cases and compares).
    // Scan: the subjects' listing falls back to it until the sweep has backfilled bySubject.
    allowUse(this, storage, apiFunction, {
      items: ["GetItem", "BatchGetItem", "Query", "Scan", "PutItem", "UpdateItem", "ConditionCheckItem"],
      listsSubjects: true,
      reads: ["manifests", "artifacts", "recall"],
      missingKeys: true,
      sends: true,
    });
    allowUse(this, storage, worker, {
      items: ["GetItem", "PutItem", "UpdateItem", "ConditionCheckItem"],
      reads: ["manifests", "segments"],
      writes: ["manifests", "artifacts", "reports", "recall", "attempts", "segments"],
      missingKeys: true,
      receives: true,
      models: { Writer: bedrockModelId(tenant.model), Judge: bedrockModelId(tenant.judge) },
      bedrockRegions: tenant.bedrockRegions,
    });
    allowUse(this, storage, outbox, {
      items: ["GetItem", "Query", "UpdateItem"],
      stream: true,
      reads: ["manifests"],
      sends: true,
    });
    // Scan and PutItem: the backfill of bySubject on a table written before it, and its progress.
    allowUse(this, storage, sweeper, {
      items: ["GetItem", "Query", "Scan", "PutItem", "UpdateItem"],
      scansRebuildChecks: true,
      reads: ["manifests"],
      sends: true,
    });
    // PutItem: the round's checkpoint; Scan: the listing's fallback until bySubject is backfilled.
    allowUse(this, storage, auditor, {
      items: ["GetItem", "Scan", "PutItem", "UpdateItem"],
      listsSubjects: true,
      reads: ["manifests", "artifacts"],
      sends: true,
      models: { Judge: bedrockModelId(tenant.judge) },
      bedrockRegions: tenant.bedrockRegions,
    });
    // The OpenAI-compatible key: read by the functions that call such a model (the worker's
    // writer or judge, the audit's judge).
    if (tenant.openAiKeySecretArn) {
      const callers = [
        ...(callsOpenAiModel(tenant.model) || callsOpenAiModel(tenant.judge) ? [worker] : []),
        ...(callsOpenAiModel(tenant.judge) ? [auditor] : []),
      ];
      for (const fn of callers) allowSecret(fn, tenant.openAiKeySecretArn, tenant.openAiKeySecretKmsKeyArn);
    }

    // One message per invocation: its timeout is sized for one message's attempts and deadlines,
    // and a timeout returns that message alone, never a batch with published ones in it.
    worker.addEventSource(
      new SqsEventSource(queue, {
        batchSize: 1,
        reportBatchItemFailures: true,
        maxConcurrency: tenant.workerConcurrency,
      }),
    );
    outbox.addEventSource(
      new DynamoEventSource(table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: 100,
        bisectBatchOnError: true,
        retryAttempts: 10,
        reportBatchItemFailures: true,
        filters: [
          FilterCriteria.filter({
            dynamodb: { Keys: { [TABLE_KEYS.sort]: { S: FilterRule.isEqual(TABLE_ITEM_KEYS.clock) } } },
          }),
        ],
      }),
    );
    new Rule(this, "SweepSchedule", {
      description: `memgate ${tenant.id}: sweep every five minutes`,
      schedule: Schedule.rate(Duration.minutes(5)),
      targets: [new LambdaFunction(sweeper)],
    });

    // The audit in rounds: a round a UTC day, carried over invocations every AUDIT_EVERY_MINUTES
    // from its checkpoint (shared/app/audit-round.ts); an invocation whose day is done reads one item.
    new Rule(this, "AuditSchedule", {
      description: `memgate ${tenant.id}: the daily audit's round, resumed every ${AUDIT_EVERY_MINUTES} minutes (StaleVisible, FalseFact)`,
      schedule: Schedule.rate(Duration.minutes(AUDIT_EVERY_MINUTES)),
      // No retries: the next invocation resumes from the checkpoint anyway.
      targets: [new LambdaFunction(auditor, { retryAttempts: 0 })],
    });

    const api = tenantApi(this, tenant, apiFunction);
    this.api = api.api;
    this.apiRoutes = api.apiRoutes;
    this.reviewPageRoutes = api.reviewPageRoutes;
    this.rolePolicies = api.rolePolicies;

    monitorTenant(
      this,
      tenant,
      storage,
      { api: apiFunction, worker, outbox, sweep: sweeper, audit: auditor },
      api.stage,
    );
    this.outputs(api.stage);
  }

  /** What `--store aws` users, callers and operators need from the stack, named in README.md. */
  private outputs(stage: HttpStage): void {
    const output = (id: string, value: string, description: string) =>
      new CfnOutput(this, id, { value, description });
    output("ApiUrl", stage.url, "The HTTP API's URL (the client's baseUrl)");
    output("TableName", this.table.tableName, "MEMGATE_TABLE for --store aws");
    output("BucketName", this.bucket.bucketName, "MEMGATE_BUCKET for --store aws");
    output("QueueUrl", this.queue.queueUrl, "MEMGATE_QUEUE_URL for --store aws");
    output("DeadLetterQueueUrl", this.deadLetters.queueUrl, "Snapshots that failed past their retries");
    output("AlarmTopicArn", this.alarmTopic.topicArn, "Where the alarms go (subscribe people to it)");
    for (const [role, policy] of Object.entries(this.rolePolicies))
      output(
        `${capitalised(role)}PolicyArn`,
        policy.managedPolicyArn,
        `Attach to the IAM roles that call the API as ${role}`,
      );
  }
}
