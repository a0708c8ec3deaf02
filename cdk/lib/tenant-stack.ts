import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps, Tags } from "aws-cdk-lib";
import {
  HttpApi,
  HttpMethod,
  HttpNoneAuthorizer,
  type HttpRoute,
  HttpStage,
  LogGroupLogDestination,
} from "aws-cdk-lib/aws-apigatewayv2";
import { HttpIamAuthorizer, HttpJwtAuthorizer } from "aws-cdk-lib/aws-apigatewayv2-authorizers";
import { HttpLambdaIntegration } from "aws-cdk-lib/aws-apigatewayv2-integrations";
import {
  Alarm,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  SingleValueWidget,
  TreatMissingData,
} from "aws-cdk-lib/aws-cloudwatch";
import { SnsAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import {
  AttributeType,
  ProjectionType,
  StreamViewType,
  TableEncryptionV2,
  TableV2,
} from "aws-cdk-lib/aws-dynamodb";
import { Rule, Schedule } from "aws-cdk-lib/aws-events";
import { LambdaFunction } from "aws-cdk-lib/aws-events-targets";
import { AnyPrincipal, Effect, ManagedPolicy, PolicyStatement, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { Key } from "aws-cdk-lib/aws-kms";
import { FilterCriteria, FilterRule, StartingPosition } from "aws-cdk-lib/aws-lambda";
import { DynamoEventSource, SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from "aws-cdk-lib/aws-s3";
import { type ITopic, Topic } from "aws-cdk-lib/aws-sns";
import { EmailSubscription } from "aws-cdk-lib/aws-sns-subscriptions";
import { DeduplicationScope, FifoThroughputLimit, Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import type { Construct } from "constructs";
import { TABLE_ITEM_KEYS, TABLE_KEYS } from "#adapters/aws/table-layout.ts";
import { METRIC_NAMESPACE, MetricNames, SERVICE_NAME } from "#observability/metric-names.ts";
import { API_ROLES, API_ROUTES, type ApiRole, routesOf } from "#runtime/api-roles.ts";
import { bedrockModelId, callsOpenAiModel, lambdaEnvironment, REVIEW_PAGE_PATHS } from "#runtime/settings.ts";
import { invokeModelStatements } from "./bedrock-access.ts";
import { MemgateFunction } from "./memgate-function.ts";
import { acknowledgeWildcards } from "./nag.ts";
import type { Tenant } from "./tenants.ts";
import { VISIBILITY_PER_TIMEOUT, workerTimeoutSeconds } from "./worker-sizing.ts";

export interface TenantStackProps extends StackProps {
  tenant: Tenant;
}

/** Queue age (seconds) above which the queue-age alarm fires: rebuilds are falling behind. */
export const QUEUE_AGE_ALARM_SECONDS = 900;

/**
 * Hours without an audit heartbeat before its alarm fires: a round starts each UTC day and is
 * carried over as many invocations as it needs, so a round may finish up to six hours later than
 * the last one did before the alarm says the audit is not keeping up. (Alarms of one-hour periods
 * may look back seven days; missing hours count as breaching.)
 */
export const AUDIT_HEARTBEAT_HOURS = 30;

/** Minutes between the audit's invocations: each resumes the day's round where the last stopped. */
export const AUDIT_EVERY_MINUTES = 15;

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

/** What one function's use cases call (TenantStack.allowUse turns it into its policy). */
interface FunctionUse {
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

const capitalised = (word: string) => `${word.charAt(0).toUpperCase()}${word.slice(1)}`;

type FunctionName = "api" | "worker" | "outbox" | "sweep" | "audit";

/**
 * One tenant's memgate: its table (events, clocks, aliases, records), its bucket (artifacts,
 * manifests, reports: write-once, never deleted), its snapshot queue and DLQ, the four Lambdas,
 * the HTTP API, the dashboard and the alarms. No physical names: two tenants deploy side by side.
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

    this.key = new Key(this, "Key", {
      description: `memgate ${tenant.id}: table, bucket, queues and alarm topic`,
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const key = this.key;
    // CloudWatch alarms publish to the encrypted topic.
    key.grant(new ServicePrincipal("cloudwatch.amazonaws.com"), "kms:Decrypt", "kms:GenerateDataKey*");

    this.table = new TableV2(this, "Table", {
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

    const accessLogs = new Bucket(this, "AccessLogs", {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_PREFERRED,
      lifecycleRules: [{ expiration: Duration.days(365) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.bucket = new Bucket(this, "Artifacts", {
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
    this.bucket.addToResourcePolicy(
      new PolicyStatement({
        sid: "DenyDeletingMemory",
        effect: Effect.DENY,
        principals: [new AnyPrincipal()],
        actions: ["s3:DeleteObject", "s3:DeleteObjectVersion", "s3:PutLifecycleConfiguration"],
        resources: [this.bucket.bucketArn, this.bucket.arnForObjects("*")],
      }),
    );
    // Nor does anyone overwrite them: a put must carry If-None-Match (S3 then refuses a key that
    // exists), so write-once holds in the bucket itself, not only in the adapter that sends it.
    this.bucket.addToResourcePolicy(
      new PolicyStatement({
        sid: "DenyOverwritingMemory",
        effect: Effect.DENY,
        principals: [new AnyPrincipal()],
        actions: ["s3:PutObject"],
        resources: [this.bucket.arnForObjects("*")],
        conditions: { Null: { "s3:if-none-match": "true" } },
      }),
    );

    const workerTimeout = Duration.seconds(workerTimeoutSeconds(tenant));
    this.deadLetters = new Queue(this, "DeadLetters", {
      fifo: true,
      encryption: QueueEncryption.KMS,
      encryptionMasterKey: key,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.queue = new Queue(this, "Snapshots", {
      fifo: true,
      contentBasedDeduplication: false,
      // High-throughput FIFO: order and deduplication per subject (the message group), which is
      // all memgate needs, and throughput per group instead of per queue.
      deduplicationScope: DeduplicationScope.MESSAGE_GROUP,
      fifoThroughputLimit: FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
      encryption: QueueEncryption.KMS,
      encryptionMasterKey: key,
      enforceSSL: true,
      // AWS's rule for SQS event sources: at least six times the function's timeout.
      visibilityTimeout: Duration.seconds(workerTimeout.toSeconds() * VISIBILITY_PER_TIMEOUT),
      deadLetterQueue: { queue: this.deadLetters, maxReceiveCount: 5 },
    });

    this.alarmTopic = tenant.alarmTopicArn
      ? Topic.fromTopicArn(this, "AlarmTopic", tenant.alarmTopicArn)
      : new Topic(this, "AlarmTopic", { masterKey: key, enforceSSL: true });
    if (tenant.alarmEmail && this.alarmTopic instanceof Topic)
      this.alarmTopic.addSubscription(new EmailSubscription(tenant.alarmEmail));

    const environment = lambdaEnvironment({
      tenant: tenant.id,
      table: this.table.tableName,
      bucket: this.bucket.bucketName,
      queueUrl: this.queue.queueUrl,
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
    this.allowUse(apiFunction, {
      items: ["GetItem", "BatchGetItem", "Query", "Scan", "PutItem", "UpdateItem", "ConditionCheckItem"],
      listsSubjects: true,
      reads: ["manifests", "artifacts", "recall"],
      missingKeys: true,
      sends: true,
    });
    this.allowUse(worker, {
      items: ["GetItem", "PutItem", "UpdateItem", "ConditionCheckItem"],
      reads: ["manifests", "segments"],
      writes: ["manifests", "artifacts", "reports", "recall", "attempts", "segments"],
      missingKeys: true,
      receives: true,
      models: { Writer: bedrockModelId(tenant.model), Judge: bedrockModelId(tenant.judge) },
      bedrockRegions: tenant.bedrockRegions,
    });
    this.allowUse(outbox, {
      items: ["GetItem", "Query", "UpdateItem"],
      stream: true,
      reads: ["manifests"],
      sends: true,
    });
    // Scan and PutItem: the backfill of bySubject on a table written before it, and its progress.
    this.allowUse(sweeper, {
      items: ["GetItem", "Query", "Scan", "PutItem", "UpdateItem"],
      scansRebuildChecks: true,
      reads: ["manifests"],
      sends: true,
    });
    // PutItem: the round's checkpoint; Scan: the listing's fallback until bySubject is backfilled.
    this.allowUse(auditor, {
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
      for (const fn of callers)
        this.allowSecret(fn, tenant.openAiKeySecretArn, tenant.openAiKeySecretKmsKeyArn);
    }

    // One message per invocation: its timeout is sized for one message's attempts and deadlines,
    // and a timeout returns that message alone, never a batch with published ones in it.
    worker.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: 1,
        reportBatchItemFailures: true,
        maxConcurrency: tenant.workerConcurrency,
      }),
    );
    outbox.addEventSource(
      new DynamoEventSource(this.table, {
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

    const accessLogGroup = new LogGroup(this, "ApiAccessLogs", {
      retention: RetentionDays.THREE_MONTHS,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // No $default route: a request reaches the function only on a route of CONTRACT §6, and each
    // route says which roles may call it (API_ROUTES).
    this.api = new HttpApi(this, "HttpApi", {
      description: `memgate ${tenant.id}: agents' memory API (CONTRACT §6)`,
      createDefaultStage: false,
      defaultAuthorizer: tenant.jwt
        ? new HttpJwtAuthorizer("JwtAuthorizer", tenant.jwt.issuer, { jwtAudience: tenant.jwt.audience })
        : new HttpIamAuthorizer(),
    });
    const apiIntegration = new HttpLambdaIntegration("ApiIntegration", apiFunction);
    const { jwt } = tenant;
    this.apiRoutes = API_ROUTES.flatMap((route) =>
      this.api.addRoutes({
        path: route.path,
        methods: [HttpMethod[route.method]],
        integration: apiIntegration,
        // The JWT authorizer lets a token through when it holds one of the route's scopes.
        ...(jwt ? { authorizationScopes: route.roles.map((role) => `${jwt.scopePrefix}${role}`) } : {}),
      }),
    );
    // The review page's static files hold no memory (the page sends the reviewer's JWT with each
    // API call); a browser cannot sign requests with SigV4, so they are served unauthenticated.
    const pageIntegration = new HttpLambdaIntegration("ReviewPageIntegration", apiFunction);
    this.reviewPageRoutes = Object.values(REVIEW_PAGE_PATHS).flatMap((path) =>
      this.api.addRoutes({
        path,
        methods: [HttpMethod.GET],
        integration: pageIntegration,
        authorizer: new HttpNoneAuthorizer(),
      }),
    );
    const stage = new HttpStage(this, "DefaultStage", {
      httpApi: this.api,
      stageName: "$default",
      autoDeploy: true,
      throttle: { rateLimit: 200, burstLimit: 400 },
      accessLogSettings: { destination: new LogGroupLogDestination(accessLogGroup) },
    });
    // IAM authorization: what each role may invoke, as managed policies the tenant attaches to
    // its callers' roles (the stack's outputs name them).
    this.rolePolicies = jwt ? {} : this.rolePoliciesFor(tenant, stage);

    this.monitor(tenant, { api: apiFunction, worker, outbox, sweep: sweeper, audit: auditor }, stage);
    this.outputs(stage);
  }

  /**
   * One function's policy from what its use cases call: DynamoDB actions on the table's items
   * (`items`), queries of the sequence index (every reader of the log), the stream (the outbox),
   * a scan of the sparse rebuild-check index (the sweep); S3 objects by kind, read or written once
   * (the bucket's keys listed only where a missing key is an answer, so S3 says 404, not 403);
   * the queue, sent to or received from; the tenant's key through S3 and SQS only; the tenant's
   * Bedrock models. No DeleteItem, no BatchWriteItem, no DeleteObject anywhere.
   */
  private allowUse(fn: MemgateFunction, use: FunctionUse): void {
    const table = this.table;
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
      kinds.map((kind) => this.bucket.arnForObjects(`${OBJECTS[kind]}*`));
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
          resources: [this.bucket.bucketArn],
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
          resources: [this.queue.queueArn],
        }),
      );
    if (use.receives)
      fn.allow(
        new PolicyStatement({
          sid: "ReceiveSnapshots",
          actions: ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"],
          resources: [this.queue.queueArn],
        }),
      );
    fn.allow(
      new PolicyStatement({
        sid: "TenantKeyThroughS3AndSqs",
        actions: ["kms:Decrypt", "kms:GenerateDataKey"],
        resources: [this.key.keyArn],
        conditions: {
          StringEquals: {
            "kms:ViaService": [`s3.${this.region}.amazonaws.com`, `sqs.${this.region}.amazonaws.com`],
          },
        },
      }),
    );
    for (const [role, id] of Object.entries(use.models ?? {}))
      if (id !== undefined)
        for (const statement of invokeModelStatements(
          this.bedrockScope(),
          id,
          `Invoke${role}`,
          use.bedrockRegions,
        ))
          fn.allow(
            statement,
            `The tenant's ${role.toLowerCase()} model through its global inference profile, which routes to any commercial Region (bedrock:InferenceProfileArn names the profile).`,
          );
  }

  private bedrockScope() {
    return { partition: this.partition, region: this.region, account: this.account };
  }

  /**
   * Reading the OpenAI-compatible key: the secret itself, and, when a customer managed key
   * encrypts it, decrypting with that key through Secrets Manager for that secret alone.
   */
  private allowSecret(fn: MemgateFunction, secretArn: string, kmsKeyArn: string | undefined): void {
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

  /** Per role, a managed policy allowing execute-api:Invoke on exactly its routes (any path parameter). */
  private rolePoliciesFor(tenant: Tenant, stage: HttpStage): Partial<Record<ApiRole, ManagedPolicy>> {
    const policies: Partial<Record<ApiRole, ManagedPolicy>> = {};
    for (const role of API_ROLES) {
      const statement = new PolicyStatement({
        sid: "InvokeTheRoutesOfTheRole",
        actions: ["execute-api:Invoke"],
        resources: routesOf(role).map((route) =>
          this.api.arnForExecuteApi(route.method, route.path.replace(/\{[^}]+\}/g, "*"), stage.stageName),
        ),
      });
      const policy = new ManagedPolicy(this, `${capitalised(role)}ApiPolicy`, {
        description: `memgate ${tenant.id}: the ${role} role's routes of the HTTP API`,
        statements: [statement],
      });
      acknowledgeWildcards(
        policy,
        statement,
        "A route's path parameter (the subject or the artifact id): the role may call that route for any of them.",
      );
      policies[role] = policy;
    }
    return policies;
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

  /**
   * The dashboard and the alarms, on exactly the metrics the Lambdas emit; the topic they notify
   * lets CloudWatch publish, for this account's alarms of this stack only.
   */
  private monitor(tenant: Tenant, functions: Record<FunctionName, MemgateFunction>, stage: HttpStage): void {
    const dimensionsMap = { service: SERVICE_NAME, tenant: tenant.id };
    const metric = (metricName: string, statistic = "Sum") =>
      new Metric({
        namespace: METRIC_NAMESPACE,
        metricName,
        dimensionsMap,
        statistic,
        period: Duration.minutes(5),
      });
    const byDimension = (metricName: string, dimension: string, label: string) =>
      new MathExpression({
        expression: `SEARCH('{${METRIC_NAMESPACE},service,tenant,${dimension}} MetricName="${metricName}" tenant="${tenant.id}"', 'Sum', 300)`,
        label,
        period: Duration.minutes(5),
      });
    const staleVisible = metric(MetricNames.StaleVisible);
    const falseFact = metric(MetricNames.FalseFact);
    const action = new SnsAction(this.alarmTopic);
    const alarms: Alarm[] = [];
    const alarm = (id: string, props: ConstructorParameters<typeof Alarm>[2]) => {
      const created = new Alarm(this, id, props);
      created.addAlarmAction(action);
      alarms.push(created);
      return created;
    };
    const blocking = {
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    };
    alarm("StaleVisibleAlarm", {
      ...blocking,
      metric: staleVisible,
      alarmDescription: `memgate ${tenant.id}: a served summary no longer matches its inputs. Turn recall bypass on (PUT /v1/settings {"recallBypass":true}), then memgate recover.`,
    });
    alarm("FalseFactAlarm", {
      ...blocking,
      metric: falseFact,
      alarmDescription: `memgate ${tenant.id}: a served summary holds an unsupported claim. Turn recall bypass on, read the audit's finding, then memgate recover.`,
    });
    alarm("RebuildsLeftAlarm", {
      ...blocking,
      metric: metric(MetricNames.RebuildsLeft, "Maximum"),
      alarmDescription: `memgate ${tenant.id}: a subject's rebuilds were refused or failed at every attempt (four, 15 to 60 minutes apart) and are left for a person; recall serves raw for it. Read the sweep's "left for a person" log and the REJECTED artifacts' reports (memgate artifacts SUBJECT), then memgate recover or fix the model or policy.`,
    });
    alarm("DeadLettersAlarm", {
      ...blocking,
      metric: this.deadLetters.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5) }),
      alarmDescription: `memgate ${tenant.id}: snapshots failed past their retries (model down, timeouts): read the worker's logs; the sweep requests the rebuilds again.`,
    });
    alarm("WorkerErrorsAlarm", {
      ...blocking,
      metric: functions.worker.metricErrors({ period: Duration.minutes(5) }),
      alarmDescription: `memgate ${tenant.id}: the worker Lambda failed (not a rejected summary: an error). Read its logs.`,
    });
    // A failed (or timed-out) run of the others leaves rebuilds unrequested or the audit unfinished.
    const failedRun = {
      outbox:
        "clock changes of the failed batch may have no rebuild requested (the sweep catches up within five minutes)",
      sweep: "rebuilds the stream missed wait for the next sweep that succeeds",
      audit: "served summaries went unchecked today (its heartbeat alarm follows if no run finishes)",
    } as const;
    for (const [name, consequence] of Object.entries(failedRun))
      alarm(`${capitalised(name)}ErrorsAlarm`, {
        ...blocking,
        metric: functions[name as keyof typeof failedRun].metricErrors({ period: Duration.minutes(5) }),
        alarmDescription: `memgate ${tenant.id}: the ${name} Lambda failed or timed out: ${consequence}. Read its logs.`,
      });
    alarm("ApiServerErrorsAlarm", {
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      metric: stage.metricServerError({ period: Duration.minutes(5), statistic: "Sum" }),
      alarmDescription: `memgate ${tenant.id}: the API answered 5xx in two of the last three 5-minute periods (500: logged by the api Lambda; 503: the table throttled or contended; 502/504: the Lambda failed or timed out). Read the api Lambda's logs.`,
    });
    alarm("AuditHeartbeatAlarm", {
      threshold: 1,
      comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: AUDIT_HEARTBEAT_HOURS,
      datapointsToAlarm: AUDIT_HEARTBEAT_HOURS,
      // No heartbeat is the finding: an audit that did not run (or never finished) emits nothing.
      treatMissingData: TreatMissingData.BREACHING,
      metric: new Metric({
        namespace: METRIC_NAMESPACE,
        metricName: MetricNames.AuditHeartbeat,
        dimensionsMap,
        statistic: "Sum",
        period: Duration.hours(1),
      }),
      alarmDescription: `memgate ${tenant.id}: no audit finished in ${AUDIT_HEARTBEAT_HOURS} hours, so StaleVisible and FalseFact say nothing. Read the audit Lambda's logs; run \`memgate audit --store aws\` by hand meanwhile.`,
    });
    alarm("QueueAgeAlarm", {
      threshold: QUEUE_AGE_ALARM_SECONDS,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 3,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      metric: this.queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(5) }),
      alarmDescription: `memgate ${tenant.id}: rebuilds wait over ${QUEUE_AGE_ALARM_SECONDS / 60} minutes; recall serves raw meanwhile. Raise workerConcurrency or check the model.`,
    });
    // enforceSSL gives the topic a policy holding only its TLS deny, which replaces SNS's default
    // one: without this allow, no alarm would ever be delivered. A tenant's own topic
    // (alarmTopicArn) needs the same statement in its policy (README).
    if (this.alarmTopic instanceof Topic)
      this.alarmTopic.addToResourcePolicy(
        new PolicyStatement({
          sid: "CloudWatchAlarmsOfThisStack",
          principals: [new ServicePrincipal("cloudwatch.amazonaws.com")],
          actions: ["sns:Publish"],
          resources: [this.alarmTopic.topicArn],
          conditions: {
            StringEquals: { "aws:SourceAccount": this.account },
            ArnEquals: { "aws:SourceArn": alarms.map((created) => created.alarmArn) },
          },
        }),
      );

    const dashboard = new Dashboard(this, "Dashboard", { defaultInterval: Duration.days(1) });
    dashboard.addWidgets(
      new SingleValueWidget({
        title: "Stale visible / false facts (must be 0)",
        metrics: [staleVisible, falseFact],
        width: 8,
      }),
      new GraphWidget({
        title: "Gate rejections by reason",
        left: [byDimension(MetricNames.GateRejected, "reason", "")],
        width: 8,
      }),
      new GraphWidget({ title: "CAS losses", left: [metric(MetricNames.CasLost)], width: 8 }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: "Publish latency (ms)",
        left: [metric(MetricNames.PublishLatency, "p50"), metric(MetricNames.PublishLatency, "p99")],
        width: 8,
      }),
      new GraphWidget({
        title: "Recall: summary vs raw",
        left: [byDimension(MetricNames.RecallServed, "mode", "")],
        width: 8,
      }),
      new GraphWidget({
        title: "Rebuilds requested, generation failures, poison messages",
        left: [
          metric(MetricNames.RebuildRequested),
          metric(MetricNames.GenerationFailed),
          metric(MetricNames.PoisonMessage),
        ],
        width: 8,
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: "Queue age (s) and dead letters",
        left: [this.queue.metricApproximateAgeOfOldestMessage()],
        right: [this.deadLetters.metricApproximateNumberOfMessagesVisible()],
        width: 12,
      }),
      new GraphWidget({
        title: "Lambda errors and throttles",
        left: Object.values(functions).map((fn) => fn.metricErrors()),
        right: Object.values(functions).map((fn) => fn.metricThrottles()),
        width: 12,
      }),
    );
  }
}
