import { Duration, RemovalPolicy, Stack, type StackProps, Tags } from "aws-cdk-lib";
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
import { AnyPrincipal, Effect, PolicyStatement, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { Key } from "aws-cdk-lib/aws-kms";
import { FilterCriteria, FilterRule, StartingPosition } from "aws-cdk-lib/aws-lambda";
import { DynamoEventSource, SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from "aws-cdk-lib/aws-s3";
import { Secret } from "aws-cdk-lib/aws-secretsmanager";
import { type ITopic, Topic } from "aws-cdk-lib/aws-sns";
import { EmailSubscription } from "aws-cdk-lib/aws-sns-subscriptions";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import type { Construct } from "constructs";
import { TABLE_ITEM_KEYS, TABLE_KEYS } from "#adapters/aws/table-layout.ts";
import { METRIC_NAMESPACE, MetricNames, SERVICE_NAME } from "#observability/metric-names.ts";
import { bedrockModelId, lambdaEnvironment, REVIEW_PAGE_PATHS } from "#runtime/settings.ts";
import { MemgateFunction } from "./memgate-function.ts";
import type { Tenant } from "./tenants.ts";

export interface TenantStackProps extends StackProps {
  tenant: Tenant;
}

/** Queue age (seconds) above which the queue-age alarm fires: rebuilds are falling behind. */
export const QUEUE_AGE_ALARM_SECONDS = 900;

/**
 * One tenant's memgate: its table (events, clocks, aliases, records), its bucket (artifacts,
 * manifests, reports: write-once, never deleted), its snapshot queue and DLQ, the four Lambdas,
 * the HTTP API, the dashboard and the alarms. No physical names: two tenants deploy side by side.
 */
export class TenantStack extends Stack {
  readonly table: TableV2;
  readonly bucket: Bucket;
  readonly queue: Queue;
  readonly deadLetters: Queue;
  readonly alarmTopic: ITopic;
  readonly api: HttpApi;
  /** The review page's static routes: the only ones without an authorizer. */
  readonly reviewPageRoutes: HttpRoute[];

  constructor(scope: Construct, id: string, props: TenantStackProps) {
    super(scope, id, props);
    const { tenant } = props;
    Tags.of(this).add("memgate:tenant", tenant.id);

    const key = new Key(this, "Key", {
      description: `memgate ${tenant.id}: table, bucket, queues and alarm topic`,
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
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

    const workerTimeout = Duration.seconds(tenant.generationTimeoutSeconds + 60);
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
      encryption: QueueEncryption.KMS,
      encryptionMasterKey: key,
      enforceSSL: true,
      // AWS's rule for SQS event sources: at least six times the function's timeout.
      visibilityTimeout: Duration.seconds(workerTimeout.toSeconds() * 6),
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
    });
    const worker = new MemgateFunction(this, "WorkerFunction", {
      lambda: "worker",
      description: `memgate ${tenant.id}: consolidation worker (generate, gate, publish)`,
      timeout: workerTimeout,
      memorySize: 2048,
      environment,
    });
    const outbox = new MemgateFunction(this, "OutboxFunction", {
      lambda: "outbox",
      description: `memgate ${tenant.id}: rebuild outbox on the table's stream`,
      timeout: Duration.seconds(60),
      environment,
    });
    const sweeper = new MemgateFunction(this, "SweepFunction", {
      lambda: "sweep",
      description: `memgate ${tenant.id}: the sweep for rebuilds the stream missed`,
      timeout: Duration.minutes(5),
      environment,
    });

    const auditor = new MemgateFunction(this, "AuditFunction", {
      lambda: "audit",
      description: `memgate ${tenant.id}: the daily audit of what recall serves`,
      timeout: Duration.minutes(15),
      memorySize: 2048,
      environment,
    });

    // Least privilege: what each one's use cases touch.
    for (const fn of [apiFunction, worker, outbox, sweeper, auditor]) this.table.grantReadWriteData(fn);
    for (const fn of [apiFunction, outbox, sweeper, auditor]) this.bucket.grantRead(fn);
    // The worker writes new keys only (IfNoneMatch: '*'); it never deletes or overwrites.
    this.bucket.grantRead(worker);
    this.bucket.grantPut(worker);
    for (const fn of [apiFunction, outbox, sweeper, auditor]) this.queue.grantSendMessages(fn);
    // The tenant's Bedrock models only: the writer for the worker, the judge for worker and audit.
    const grantModels = (fn: MemgateFunction, ids: Array<string | undefined>) => {
      const models = [...new Set(ids.filter((id): id is string => id !== undefined))];
      if (models.length === 0) return;
      fn.addToRolePolicy(
        new PolicyStatement({
          sid: "InvokeTheTenantsModelOnly",
          actions: ["bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream"],
          resources: models.flatMap((id) => [
            `arn:${this.partition}:bedrock:${this.region}::foundation-model/${id}`,
            `arn:${this.partition}:bedrock:${this.region}:${this.account}:inference-profile/${id}`,
          ]),
        }),
      );
    };
    grantModels(worker, [bedrockModelId(tenant.model), bedrockModelId(tenant.judge)]);
    grantModels(auditor, [bedrockModelId(tenant.judge)]);
    // The OpenAI-compatible key: read by the functions that call a model (worker, audit's judge).
    if (tenant.openAiKeySecretArn) {
      const key = Secret.fromSecretCompleteArn(this, "OpenAiKey", tenant.openAiKeySecretArn);
      key.grantRead(worker);
      key.grantRead(auditor);
    }

    worker.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: 10,
        reportBatchItemFailures: true,
        ...(tenant.workerConcurrency === undefined ? {} : { maxConcurrency: tenant.workerConcurrency }),
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

    new Rule(this, "AuditSchedule", {
      description: `memgate ${tenant.id}: the daily audit (StaleVisible, FalseFact)`,
      schedule: Schedule.cron({ minute: "17", hour: "3" }),
      targets: [new LambdaFunction(auditor)],
    });

    const accessLogGroup = new LogGroup(this, "ApiAccessLogs", {
      retention: RetentionDays.THREE_MONTHS,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.api = new HttpApi(this, "HttpApi", {
      description: `memgate ${tenant.id}: agents' memory API (CONTRACT §6)`,
      createDefaultStage: false,
      defaultIntegration: new HttpLambdaIntegration("ApiIntegration", apiFunction),
      defaultAuthorizer: tenant.jwt
        ? new HttpJwtAuthorizer("JwtAuthorizer", tenant.jwt.issuer, { jwtAudience: tenant.jwt.audience })
        : new HttpIamAuthorizer(),
    });
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
    new HttpStage(this, "DefaultStage", {
      httpApi: this.api,
      stageName: "$default",
      autoDeploy: true,
      throttle: { rateLimit: 200, burstLimit: 400 },
      accessLogSettings: { destination: new LogGroupLogDestination(accessLogGroup) },
    });

    this.monitor(tenant, { api: apiFunction, worker, outbox, sweep: sweeper, audit: auditor });
  }

  /** The dashboard and the alarms, on exactly the metrics the Lambdas emit. */
  private monitor(tenant: Tenant, functions: Record<string, MemgateFunction>): void {
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
    const alarm = (id: string, props: ConstructorParameters<typeof Alarm>[2]) => {
      const created = new Alarm(this, id, props);
      created.addAlarmAction(action);
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
    alarm("DeadLettersAlarm", {
      ...blocking,
      metric: this.deadLetters.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5) }),
      alarmDescription: `memgate ${tenant.id}: snapshots failed past their retries (model down, timeouts): read the worker's logs; the sweep requests the rebuilds again.`,
    });
    alarm("WorkerErrorsAlarm", {
      ...blocking,
      metric: (functions.worker as MemgateFunction).metricErrors({ period: Duration.minutes(5) }),
      alarmDescription: `memgate ${tenant.id}: the worker Lambda failed (not a rejected summary: an error). Read its logs.`,
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
