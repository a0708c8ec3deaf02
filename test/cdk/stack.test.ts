import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Validations } from "aws-cdk-lib";
import { Match, type Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { METRIC_NAMESPACE, MetricNames, SERVICE_NAME } from "#observability/metric-names.ts";
import { API_ROLES, API_ROUTES, routesOf } from "#runtime/api-roles.ts";
import { AUDIT_HEARTBEAT_HOURS, QUEUE_AGE_ALARM_SECONDS } from "../../cdk/lib/tenant-monitoring.ts";
import type { TenantStack } from "../../cdk/lib/tenant-stack.ts";
import {
  actionsOf,
  functionPolicies,
  invokeTail,
  NAME_PROPERTIES,
  resourcesOf,
  routeKey,
  type Statement,
  statementNamed,
  synth,
  tenant,
} from "./templates.ts";

describe("one tenant stack (IAM authorization, deterministic model)", () => {
  let template: Template;
  let stack: TenantStack;
  let outdir: string;

  beforeAll(() => {
    const built = synth([tenant({ id: "acme", alarmEmail: "ops@example.com" })]);
    template = built.templates[0] as Template;
    stack = built.stacks[0] as TenantStack;
    outdir = built.outdir;
  });

  it("keeps the table safe: on demand, PITR, deletion protection, encryption, a key stream and the indexes", () => {
    template.hasResourceProperties("AWS::DynamoDB::GlobalTable", {
      BillingMode: "PAY_PER_REQUEST",
      SSESpecification: { SSEEnabled: true },
      StreamSpecification: { StreamViewType: "KEYS_ONLY" },
      LocalSecondaryIndexes: [Match.objectLike({ IndexName: "bySequence" })],
      GlobalSecondaryIndexes: [
        Match.objectLike({ IndexName: "byRebuildCheck" }),
        // Every subject in one partition, sorted by pk: the subjects' listing pages by Query.
        {
          IndexName: "bySubject",
          KeySchema: [
            { AttributeName: "subjectList", KeyType: "HASH" },
            { AttributeName: "pk", KeyType: "RANGE" },
          ],
          Projection: { ProjectionType: "KEYS_ONLY" },
        },
      ],
      Replicas: [
        Match.objectLike({
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
          DeletionProtectionEnabled: true,
        }),
      ],
    });
  });

  it("keeps memory write-once: versioned, encrypted, private, TLS only, deletes and overwrites denied to everyone", () => {
    template.hasResourceProperties("AWS::S3::Bucket", {
      VersioningConfiguration: { Status: "Enabled" },
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          Match.objectLike({ ServerSideEncryptionByDefault: Match.objectLike({ SSEAlgorithm: "aws:kms" }) }),
        ],
      },
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      LoggingConfiguration: Match.objectLike({ LogFilePrefix: "artifacts/" }),
    });
    template.hasResourceProperties("AWS::S3::BucketPolicy", {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: "Deny", Condition: { Bool: { "aws:SecureTransport": "false" } } }),
          Match.objectLike({
            Sid: "DenyDeletingMemory",
            Effect: "Deny",
            Principal: { AWS: "*" },
            Action: Match.arrayWith(["s3:DeleteObject", "s3:DeleteObjectVersion"]),
          }),
          // A put without If-None-Match could replace an object: the bucket refuses it, whoever asks.
          Match.objectLike({
            Sid: "DenyOverwritingMemory",
            Effect: "Deny",
            Principal: { AWS: "*" },
            Action: "s3:PutObject",
            Condition: { Null: { "s3:if-none-match": "true" } },
          }),
        ]),
      },
    });
  });

  it("sizes the worker to one message: one attempt of the deterministic model, its deadline and a margin", () => {
    // deterministic-v1 answers in one attempt; generationTimeoutSeconds 120 by default, 60 s margin.
    template.hasResourceProperties("AWS::Lambda::Function", {
      Description: Match.stringLikeRegexp("consolidation worker"),
      Timeout: 180,
      Environment: { Variables: Match.objectLike({ MEMGATE_GENERATION_TIMEOUT_MS: "120000" }) },
    });
  });

  it("queues snapshots on an encrypted high-throughput FIFO queue with a DLQ and a visibility of six worker timeouts", () => {
    template.hasResourceProperties("AWS::SQS::Queue", {
      FifoQueue: true,
      VisibilityTimeout: 180 * 6,
      DeduplicationScope: "messageGroup",
      FifoThroughputLimit: "perMessageGroupId",
      KmsMasterKeyId: Match.anyValue(),
      RedrivePolicy: { deadLetterTargetArn: Match.anyValue(), maxReceiveCount: 5 },
    });
    template.resourcePropertiesCountIs(
      "AWS::SQS::Queue",
      { FifoQueue: true, KmsMasterKeyId: Match.anyValue() },
      2,
    );
    template.resourcePropertiesCountIs(
      "AWS::SQS::QueuePolicy",
      {
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: "Deny", Condition: { Bool: { "aws:SecureTransport": "false" } } }),
          ]),
        },
      },
      2,
    );
  });

  it("runs five arm64 Lambdas on Node.js 24 with tracing and log retention", () => {
    template.resourceCountIs("AWS::Lambda::Function", 5);
    template.allResourcesProperties("AWS::Lambda::Function", {
      Runtime: "nodejs24.x",
      Architectures: ["arm64"],
      TracingConfig: { Mode: "Active" },
      Environment: {
        Variables: Match.objectLike({ MEMGATE_TENANT: "acme", MEMGATE_MODEL: "deterministic-v1" }),
      },
    });
    template.allResourcesProperties("AWS::Logs::LogGroup", { RetentionInDays: 90 });
  });

  it("wires the worker to the queue one message at a time with the default concurrency cap, and the outbox to clock items of the stream", () => {
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      EventSourceArn: Match.anyValue(),
      FunctionResponseTypes: ["ReportBatchItemFailures"],
      BatchSize: 1,
      ScalingConfig: { MaximumConcurrency: 5 },
    });
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      StartingPosition: "TRIM_HORIZON",
      FunctionResponseTypes: ["ReportBatchItemFailures"],
      FilterCriteria: {
        Filters: [{ Pattern: JSON.stringify({ dynamodb: { Keys: { sk: { S: ["CLOCK"] } } } }) }],
      },
    });
    template.hasResourceProperties("AWS::Events::Rule", { ScheduleExpression: "rate(5 minutes)" });
    // The audit's round is resumed every 15 minutes from its checkpoint.
    template.hasResourceProperties("AWS::Events::Rule", {
      ScheduleExpression: "rate(15 minutes)",
      Targets: [Match.objectLike({ RetryPolicy: { MaximumRetryAttempts: 0 } })],
    });
  });

  it("gives each function one policy of its own: no grant made elsewhere, no managed policy", () => {
    // Event sources, grants and tracing add nothing: each role holds exactly the stack's statements.
    template.resourceCountIs("AWS::IAM::Policy", 0);
    template.resourceCountIs("AWS::IAM::Role", 5);
    expect(Object.keys(functionPolicies(template)).sort()).toEqual([
      "api",
      "audit",
      "outbox",
      "sweep",
      "worker",
    ]);
  });

  it.each([
    [
      "api",
      [
        "dynamodb:GetItem",
        "dynamodb:BatchGetItem",
        "dynamodb:Query",
        "dynamodb:Scan",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:ConditionCheckItem",
        "s3:GetObject",
        "s3:ListBucket",
        "sqs:SendMessage",
      ],
    ],
    [
      "worker",
      [
        "dynamodb:GetItem",
        "dynamodb:Query",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:ConditionCheckItem",
        "s3:GetObject",
        "s3:ListBucket",
        "s3:PutObject",
        "sqs:ReceiveMessage",
        "sqs:DeleteMessage",
        "sqs:GetQueueAttributes",
      ],
    ],
    [
      "outbox",
      [
        "dynamodb:GetItem",
        "dynamodb:Query",
        "dynamodb:UpdateItem",
        "dynamodb:DescribeStream",
        "dynamodb:GetRecords",
        "dynamodb:GetShardIterator",
        "dynamodb:ListStreams",
        "s3:GetObject",
        "sqs:SendMessage",
      ],
    ],
    [
      "sweep",
      [
        "dynamodb:GetItem",
        "dynamodb:Query",
        "dynamodb:UpdateItem",
        "dynamodb:Scan",
        "dynamodb:PutItem",
        "s3:GetObject",
        "sqs:SendMessage",
      ],
    ],
    [
      "audit",
      [
        "dynamodb:GetItem",
        "dynamodb:Query",
        "dynamodb:Scan",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "s3:GetObject",
        "sqs:SendMessage",
      ],
    ],
  ])("lets the %s function call only what its use cases call", (name, expected) => {
    const statements = functionPolicies(template)[name] as Statement[];
    const everyone = [
      "logs:CreateLogStream",
      "logs:PutLogEvents",
      "xray:PutTraceSegments",
      "xray:PutTelemetryRecords",
      "kms:Decrypt",
      "kms:GenerateDataKey",
    ];
    expect(new Set(actionsOf(statements))).toEqual(new Set([...everyone, ...expected]));
    for (const forbidden of ["dynamodb:DeleteItem", "dynamodb:BatchWriteItem", "s3:DeleteObject", "bedrock:"])
      expect(JSON.stringify(statements)).not.toContain(forbidden);
    // The tenant key only as S3 and SQS use it on the function's behalf.
    expect(statementNamed(statements, "TenantKeyThroughS3AndSqs")?.Condition?.StringEquals).toHaveProperty(
      "kms:ViaService",
    );
  });

  it("names the table's indexes and the bucket's key prefixes exactly, and lets only the worker write, once", () => {
    const policies = functionPolicies(template);
    const flat = (value: unknown) => JSON.stringify(value);
    expect(flat(statementNamed(policies.sweep, "RebuildCheckIndex")?.Resource)).toContain(
      "/index/byRebuildCheck",
    );
    for (const name of ["api", "worker", "outbox", "audit"])
      expect(statementNamed(policies[name], "RebuildCheckIndex"), name).toBeUndefined();
    for (const name of ["api", "audit"])
      expect(flat(statementNamed(policies[name], "SubjectIndex")?.Resource), name).toContain(
        "/index/bySubject",
      );
    for (const name of ["worker", "outbox", "sweep"])
      expect(statementNamed(policies[name], "SubjectIndex"), name).toBeUndefined();
    expect(flat(statementNamed(policies.api, "SequenceIndex")?.Resource)).toContain("/index/bySequence");
    expect(flat(statementNamed(policies.outbox, "ReadObjects")?.Resource)).toMatch(/"\/manifests\/\*"\]/);
    expect(flat(statementNamed(policies.outbox, "ReadObjects")?.Resource)).not.toContain("/artifacts/");
    const writes = statementNamed(policies.worker, "WriteObjectsOnce");
    expect(writes?.Condition).toEqual({ StringEquals: { "s3:if-none-match": "*" } });
    for (const prefix of ["manifests", "artifacts", "reports", "recall", "attempts", "segments"])
      expect(flat(writes?.Resource)).toContain(`/${prefix}/*`);
    for (const name of ["api", "outbox", "sweep", "audit"])
      expect(actionsOf(policies[name] as Statement[]), name).not.toContain("s3:PutObject");
  });

  it("routes every API route by its role, with IAM authorization, and no catch-all route", () => {
    const routes = template.findResources("AWS::ApiGatewayV2::Route");
    const keys = Object.values(routes).map((route) => String(route.Properties.RouteKey));
    expect(keys).not.toContain("$default");
    for (const route of API_ROUTES)
      template.hasResourceProperties("AWS::ApiGatewayV2::Route", {
        RouteKey: routeKey(route),
        AuthorizationType: "AWS_IAM",
      });
    for (const path of ["/review", "/review/app.js", "/review/app.css"])
      template.hasResourceProperties("AWS::ApiGatewayV2::Route", {
        RouteKey: `GET ${path}`,
        AuthorizationType: "NONE",
      });
    expect(keys).toHaveLength(API_ROUTES.length + 3);
  });

  it.each(API_ROLES)("gives the %s role a managed policy invoking its routes only, as an output", (role) => {
    const policies = template.findResources("AWS::IAM::ManagedPolicy", {
      Properties: { Description: Match.stringLikeRegexp(`the ${role} role's routes`) },
    });
    const [id, policy] = Object.entries(policies)[0] ?? [];
    const statement = policy?.Properties.PolicyDocument.Statement[0] as Statement;
    expect(statement.Action).toBe("execute-api:Invoke");
    const tails = (statement.Resource as Array<{ "Fn::Join": [string, unknown[]] }>).map((arn) =>
      String(arn["Fn::Join"][1].at(-1)),
    );
    expect(tails.sort()).toEqual(routesOf(role).map(invokeTail).sort());
    template.hasOutput(`${role.charAt(0).toUpperCase()}${role.slice(1)}PolicyArn`, { Value: { Ref: id } });
  });

  it("serves the API with access logs and throttling", () => {
    template.hasResourceProperties("AWS::ApiGatewayV2::Stage", {
      StageName: "$default",
      AutoDeploy: true,
      AccessLogSettings: Match.objectLike({ DestinationArn: Match.anyValue() }),
      DefaultRouteSettings: { ThrottlingRateLimit: 200, ThrottlingBurstLimit: 400 },
    });
  });

  it.each([
    [MetricNames.StaleVisible, 0, 1],
    [MetricNames.FalseFact, 0, 1],
  ])(
    "alarms on %s > %i from the first datapoint, missing data not breaching, to the topic",
    (name, threshold, periods) => {
      template.hasResourceProperties("AWS::CloudWatch::Alarm", {
        Namespace: METRIC_NAMESPACE,
        MetricName: name,
        Dimensions: Match.arrayWith([
          { Name: "service", Value: SERVICE_NAME },
          { Name: "tenant", Value: "acme" },
        ]),
        Threshold: threshold,
        ComparisonOperator: "GreaterThanThreshold",
        EvaluationPeriods: periods,
        DatapointsToAlarm: periods,
        TreatMissingData: "notBreaching",
        AlarmActions: [Match.objectLike({ Ref: Match.stringLikeRegexp("AlarmTopic") })],
      });
    },
  );

  it("alarms on dead letters, queue age, the errors of every function but the API's, and the API's 5xx", () => {
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "ApproximateNumberOfMessagesVisible",
      Namespace: "AWS/SQS",
      Threshold: 0,
    });
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "ApproximateAgeOfOldestMessage",
      Threshold: QUEUE_AGE_ALARM_SECONDS,
    });
    for (const fn of ["Worker", "Outbox", "Sweep", "Audit"])
      template.hasResourceProperties("AWS::CloudWatch::Alarm", {
        MetricName: "Errors",
        Namespace: "AWS/Lambda",
        Threshold: 0,
        Dimensions: [{ Name: "FunctionName", Value: { Ref: Match.stringLikeRegexp(`^${fn}Function`) } }],
        AlarmActions: [Match.objectLike({ Ref: Match.stringLikeRegexp("AlarmTopic") })],
      });
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      Namespace: "AWS/ApiGateway",
      MetricName: "5xx",
      Statistic: "Sum",
      Threshold: 0,
      ComparisonOperator: "GreaterThanThreshold",
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
      Dimensions: Match.arrayWith([{ Name: "ApiId", Value: { Ref: Match.stringLikeRegexp("HttpApi") } }]),
    });
    template.resourceCountIs("AWS::CloudWatch::Alarm", 11);
    template.hasResourceProperties("AWS::SNS::Subscription", {
      Protocol: "email",
      Endpoint: "ops@example.com",
    });
  });

  it("alarms when a sweep leaves a subject's rebuilds for a person", () => {
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      Namespace: METRIC_NAMESPACE,
      MetricName: MetricNames.RebuildsLeft,
      Dimensions: Match.arrayWith([{ Name: "tenant", Value: "acme" }]),
      Statistic: "Maximum",
      Threshold: 0,
      ComparisonOperator: "GreaterThanThreshold",
      AlarmActions: [Match.objectLike({ Ref: Match.stringLikeRegexp("AlarmTopic") })],
    });
  });

  it("alarms when no audit heartbeat arrives for a day and an hour, missing data breaching", () => {
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      Namespace: METRIC_NAMESPACE,
      MetricName: MetricNames.AuditHeartbeat,
      Dimensions: Match.arrayWith([
        { Name: "service", Value: SERVICE_NAME },
        { Name: "tenant", Value: "acme" },
      ]),
      Statistic: "Sum",
      Period: 3600,
      Threshold: 1,
      ComparisonOperator: "LessThanThreshold",
      EvaluationPeriods: AUDIT_HEARTBEAT_HOURS,
      DatapointsToAlarm: AUDIT_HEARTBEAT_HOURS,
      TreatMissingData: "breaching",
    });
    // One-hour periods may be evaluated over seven days at most; the audit runs daily.
    expect(AUDIT_HEARTBEAT_HOURS).toBeGreaterThan(24);
    expect(AUDIT_HEARTBEAT_HOURS * 3600).toBeLessThanOrEqual(7 * 86_400);
  });

  it("lets CloudWatch publish the stack's alarms to the topic, beside the TLS-only deny", () => {
    const alarms = Object.keys(template.findResources("AWS::CloudWatch::Alarm"));
    template.hasResourceProperties("AWS::SNS::TopicPolicy", {
      PolicyDocument: {
        Statement: [
          Match.objectLike({ Effect: "Deny", Condition: { Bool: { "aws:SecureTransport": "false" } } }),
          {
            Sid: "CloudWatchAlarmsOfThisStack",
            Effect: "Allow",
            Principal: { Service: "cloudwatch.amazonaws.com" },
            Action: "sns:Publish",
            Resource: { Ref: Match.stringLikeRegexp("AlarmTopic") },
            Condition: {
              StringEquals: { "aws:SourceAccount": { Ref: "AWS::AccountId" } },
              ArnEquals: { "aws:SourceArn": alarms.map((id) => ({ "Fn::GetAtt": [id, "Arn"] })) },
            },
          },
        ],
      },
    });
  });

  it("outputs what --store aws and the API's callers need", () => {
    template.hasOutput("ApiUrl", { Value: Match.objectLike({ "Fn::Join": Match.anyValue() }) });
    template.hasOutput("TableName", { Value: { Ref: Match.stringLikeRegexp("^Table") } });
    template.hasOutput("BucketName", { Value: { Ref: Match.stringLikeRegexp("^Artifacts") } });
    template.hasOutput("QueueUrl", { Value: { Ref: Match.stringLikeRegexp("^Snapshots") } });
    template.hasOutput("DeadLetterQueueUrl", { Value: { Ref: Match.stringLikeRegexp("^DeadLetters") } });
    template.hasOutput("AlarmTopicArn", { Value: { Ref: Match.stringLikeRegexp("^AlarmTopic") } });
  });

  it("draws the dashboard from the metric names the Lambdas emit", () => {
    const body = JSON.stringify(template.findResources("AWS::CloudWatch::Dashboard"));
    for (const name of [
      MetricNames.StaleVisible,
      MetricNames.FalseFact,
      MetricNames.GateRejected,
      MetricNames.CasLost,
      MetricNames.PublishLatency,
      MetricNames.RecallServed,
      MetricNames.RebuildRequested,
      MetricNames.GenerationFailed,
    ])
      expect(body).toContain(name);
  });

  it("names nothing physically and tags every taggable resource with the tenant", () => {
    for (const [id, resource] of Object.entries(resourcesOf(template)))
      for (const property of NAME_PROPERTIES)
        expect(
          typeof resource.Properties?.[property],
          `${id} (${resource.Type}) names its ${property}`,
        ).not.toBe("string");
    template.hasResourceProperties("AWS::S3::Bucket", {
      Tags: Match.arrayWith([{ Key: "memgate:tenant", Value: "acme" }]),
    });
    template.hasResourceProperties("AWS::Lambda::Function", {
      Tags: Match.arrayWith([{ Key: "memgate:tenant", Value: "acme" }]),
    });
    expect(stack.stackName).toBe("memgate-acme");
  });

  it("passes cdk-nag's AWS Solutions checks, each acknowledgement on the resource it concerns, with a reason", () => {
    const report = JSON.parse(readFileSync(join(outdir, "validation-report.json"), "utf8"));
    const plugin = report.pluginReports.find((p: { pluginName: string }) => p.pluginName === "AwsSolutions");
    expect(plugin.conclusion).toBe("success");
    expect(plugin.violations).toEqual([]);
    // Nothing is acknowledged for the whole stack or app: only the role, policy or route it names.
    for (const scope of [stack.node, stack.node.scope?.node])
      expect(
        scope?.metadata.filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY),
      ).toEqual([]);
    for (const suppressed of plugin.suppressedViolations) {
      expect(String(suppressed.reason ?? "").length, suppressed.ruleName).toBeGreaterThan(20);
      expect(suppressed.acknowledgedAt, suppressed.ruleName).toMatch(
        /^memgate-acme\/(\w+FunctionRole|\w+ApiPolicy|HttpApi\/GET--review[\w.-]*)$/,
      );
      // An IAM5 acknowledgement names its finding: one resource or action, never the rule alone.
      if (suppressed.ruleName.startsWith("AwsSolutions-IAM5"))
        expect(suppressed.ruleName).toMatch(/^AwsSolutions-IAM5\[(Resource|Action)::.+\]$/);
    }
  });
});
