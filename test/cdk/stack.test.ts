// The tenant stack, synthesised offline: what matters for safety and operations, asserted on the
// template; cdk-nag's findings from the validation report; two tenants side by side.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Validations } from "aws-cdk-lib";
import { Match, type Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { METRIC_NAMESPACE, MetricNames, SERVICE_NAME } from "#observability/metric-names.ts";
import { API_ROLES, API_ROUTES, routesOf } from "#runtime/api-roles.ts";
import { INFERENCE_PROFILE_REGIONS } from "../../cdk/lib/bedrock-access.ts";
import { AUDIT_HEARTBEAT_HOURS, QUEUE_AGE_ALARM_SECONDS } from "../../cdk/lib/tenant-monitoring.ts";
import type { TenantStack } from "../../cdk/lib/tenant-stack.ts";
import { parseTenants, TenantsError } from "../../cdk/lib/tenants.ts";
import {
  actionsOf,
  functionPolicies,
  resourcesOf,
  type Statement,
  statementNamed,
  synth,
  tenant,
} from "./templates.ts";

const ROOT = join(import.meta.dirname, "../..");

/** Properties that give a resource a physical name: none may be a literal (two tenants share an account). */
const NAME_PROPERTIES = [
  "TableName",
  "BucketName",
  "QueueName",
  "TopicName",
  "FunctionName",
  "RoleName",
  "AlarmName",
  "DashboardName",
  "LogGroupName",
  "RuleName",
  "KeyAlias",
  "ManagedPolicyName",
];

/** The route keys API Gateway would match ("POST /v1/subjects/{subject}/events"). */
const routeKey = (route: { method: string; path: string }) => `${route.method} ${route.path}`;

/** The execute-api ARN's tail a role policy names for a route (path parameters as *). */
const invokeTail = (route: { method: string; path: string }) =>
  `/$default/${route.method}${route.path.replace(/\{[^}]+\}/g, "*")}`;

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

describe("a tenant with a JWT issuer, Bedrock models through inference profiles and a judge", () => {
  const writer = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
  const judge = "global.anthropic.claude-haiku-4-5-20251001-v1:0";
  let template: Template;
  let outdir: string;
  beforeAll(() => {
    const built = synth([
      tenant({
        id: "globex",
        jwt: { issuer: "https://auth.globex.example/", audience: ["memgate"] },
        model: `segmented:bedrock:${writer}`,
        contextTokens: 200_000,
        maxOutputTokens: 8192,
        repairAttempts: 3,
        budgetTokens: 1500,
        judge: `bedrock:${judge}`,
        workerConcurrency: 8,
      }),
    ]);
    template = built.templates[0] as Template;
    outdir = built.outdir;
  });

  it("authorizes every route with the JWT authorizer and the scopes of the roles that may call it", () => {
    template.hasResourceProperties("AWS::ApiGatewayV2::Authorizer", {
      AuthorizerType: "JWT",
      JwtConfiguration: { Issuer: "https://auth.globex.example/", Audience: ["memgate"] },
    });
    for (const route of API_ROUTES)
      template.hasResourceProperties("AWS::ApiGatewayV2::Route", {
        RouteKey: routeKey(route),
        AuthorizationType: "JWT",
        AuthorizationScopes: route.roles.map((role) => `memgate/${role}`),
      });
    template.hasResourceProperties("AWS::ApiGatewayV2::Route", {
      RouteKey: "POST /v1/artifacts/{artifactId}/approve",
      AuthorizationScopes: ["memgate/reviewer"],
    });
    template.hasResourceProperties("AWS::ApiGatewayV2::Route", {
      RouteKey: "PUT /v1/settings",
      AuthorizationScopes: ["memgate/admin"],
    });
    // Scopes replace IAM's managed policies: none for a JWT tenant.
    template.resourceCountIs("AWS::IAM::ManagedPolicy", 0);
    expect(Object.keys(template.toJSON().Outputs)).not.toContain("AgentPolicyArn");
  });

  it("hands every function the model, its sizes, the repair attempts and the tenant's summary budget", () => {
    template.hasResourceProperties("AWS::Lambda::Function", {
      Environment: {
        Variables: Match.objectLike({
          MEMGATE_MODEL: `segmented:bedrock:${writer}`,
          MEMGATE_CONTEXT_TOKENS: "200000",
          MEMGATE_MAX_OUTPUT_TOKENS: "8192",
          MEMGATE_REPAIR_ATTEMPTS: "3",
          MEMGATE_BUDGET_TOKENS: "1500",
          MEMGATE_JUDGE: `bedrock:${judge}`,
        }),
      },
    });
  });

  it("sizes the worker to three attempts of a generation and a judgement each, the queue to six times that", () => {
    // 3 × (120 s generation + 120 s judge) + 60 s
    template.hasResourceProperties("AWS::Lambda::Function", {
      Description: Match.stringLikeRegexp("consolidation worker"),
      Timeout: 780,
    });
    template.hasResourceProperties("AWS::SQS::Queue", { VisibilityTimeout: 780 * 6 });
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      BatchSize: 1,
      ScalingConfig: { MaximumConcurrency: 8 },
    });
  });

  it("lets the worker call the writer through its US profile: the profile here, the model in the US Regions through it only", () => {
    const statements = functionPolicies(template).worker;
    const profile = statementNamed(statements, "InvokeWriterProfile");
    expect(profile?.Action).toBe("bedrock:InvokeModel");
    expect(JSON.stringify(profile?.Resource)).toContain(`:inference-profile/${writer}`);
    const models = statementNamed(statements, "InvokeWriterThroughProfile");
    const arns = ((models?.Resource ?? []) as unknown[]).map((arn) => JSON.stringify(arn));
    expect(arns).toHaveLength((INFERENCE_PROFILE_REGIONS.us as readonly string[]).length);
    for (const region of INFERENCE_PROFILE_REGIONS.us as readonly string[])
      expect(
        arns.some((arn) => arn.includes(`:bedrock:${region}::foundation-model/anthropic.claude-sonnet-4-5`)),
      ).toBe(true);
    expect(Object.keys(models?.Condition?.StringEquals ?? {})).toEqual(["bedrock:InferenceProfileArn"]);
    expect(JSON.stringify(models?.Condition)).toContain(`inference-profile/${writer}`);
  });

  it("lets the worker and the audit call the judge through its global profile, and the audit nothing else", () => {
    const policies = functionPolicies(template);
    for (const name of ["worker", "audit"]) {
      const models = statementNamed(policies[name], "InvokeJudgeThroughProfile");
      const text = JSON.stringify(models?.Resource);
      expect(text, name).toContain(":bedrock:*::foundation-model/anthropic.claude-haiku-4-5");
      expect(text, name).toContain(":bedrock:::foundation-model/anthropic.claude-haiku-4-5");
      expect(JSON.stringify(models?.Condition), name).toContain(`inference-profile/${judge}`);
    }
    expect(JSON.stringify(policies.audit)).not.toContain("claude-sonnet");
    for (const name of ["api", "outbox", "sweep"])
      expect(JSON.stringify(policies[name]), name).not.toContain("bedrock:");
    expect(actionsOf(Object.values(policies).flat())).not.toContain("bedrock:InvokeModelWithResponseStream");
  });

  it("acknowledges the global profile's any-Region model ARN on the worker's and audit's roles only", () => {
    const report = JSON.parse(readFileSync(join(outdir, "validation-report.json"), "utf8"));
    const plugin = report.pluginReports.find((p: { pluginName: string }) => p.pluginName === "AwsSolutions");
    expect(plugin.violations).toEqual([]);
    const global = plugin.suppressedViolations.filter((s: { ruleName: string }) =>
      s.ruleName.includes("bedrock:*::foundation-model"),
    );
    expect(global.map((s: { acknowledgedAt: string }) => s.acknowledgedAt).sort()).toEqual([
      "memgate-globex/AuditFunctionRole",
      "memgate-globex/WorkerFunctionRole",
    ]);
  });
});

describe("a tenant with OpenAI-compatible models (writer and judge), their key in Secrets Manager under a customer key", () => {
  const secret = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:memgate/openai-AbCdEf";
  const secretKey = "arn:aws:kms:eu-west-1:123456789012:key/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0";
  let template: Template;
  beforeAll(() => {
    template = synth([
      tenant({
        id: "initech",
        model: "segmented:openai:gpt-4o-mini",
        openAiBaseUrl: "https://llm.initech.example/v1",
        judge: "openai:gpt-4o",
        openAiKeySecretArn: secret,
        openAiKeySecretKmsKeyArn: secretKey,
      }),
    ]).templates[0] as Template;
  });

  it("names the secret, never the key, in the functions' environment", () => {
    template.hasResourceProperties("AWS::Lambda::Function", {
      Environment: {
        Variables: Match.objectLike({
          MEMGATE_MODEL: "segmented:openai:gpt-4o-mini",
          OPENAI_BASE_URL: "https://llm.initech.example/v1",
          MEMGATE_OPENAI_KEY_SECRET: secret,
        }),
      },
    });
    expect(JSON.stringify(template.toJSON())).not.toContain("OPENAI_API_KEY");
  });

  it("lets the worker and the audit read that secret, and decrypt it with its key through Secrets Manager only", () => {
    const policies = functionPolicies(template);
    for (const name of ["worker", "audit"]) {
      expect(statementNamed(policies[name], "ReadOpenAiKey"), name).toEqual({
        Sid: "ReadOpenAiKey",
        Effect: "Allow",
        Action: "secretsmanager:GetSecretValue",
        Resource: secret,
      });
      expect(statementNamed(policies[name], "DecryptOpenAiKey"), name).toEqual({
        Sid: "DecryptOpenAiKey",
        Effect: "Allow",
        Action: "kms:Decrypt",
        Resource: secretKey,
        Condition: {
          StringEquals: {
            "kms:ViaService": "secretsmanager.eu-west-1.amazonaws.com",
            "kms:EncryptionContext:SecretARN": secret,
          },
        },
      });
    }
    for (const name of ["api", "outbox", "sweep"])
      expect(JSON.stringify(policies[name]), name).not.toMatch(/secretsmanager|0b1c2d3e/);
    expect(JSON.stringify(template.toJSON())).not.toContain("bedrock:InvokeModel");
  });

  it("sizes the worker to the default two attempts of the language model, each judged", () => {
    // 2 × (120 s + 120 s judge) + 60 s: the stack hands the attempts it sized for to the functions.
    template.hasResourceProperties("AWS::Lambda::Function", {
      Description: Match.stringLikeRegexp("consolidation worker"),
      Timeout: 540,
      Environment: { Variables: Match.objectLike({ MEMGATE_REPAIR_ATTEMPTS: "2" }) },
    });
  });
});

describe("two tenants in one app", () => {
  it("synthesise side by side with nothing named alike", () => {
    const { stacks, templates } = synth([tenant({ id: "acme" }), tenant({ id: "initech" })]);
    expect(stacks.map((s) => s.stackName)).toEqual(["memgate-acme", "memgate-initech"]);
    const names = templates.flatMap((template) =>
      Object.values(resourcesOf(template)).flatMap((resource) =>
        NAME_PROPERTIES.map((property) => resource.Properties?.[property]).filter(
          (value) => typeof value === "string",
        ),
      ),
    );
    expect(names).toEqual([]);
    const exports = templates.flatMap((template) => Object.values(template.toJSON().Outputs ?? {}));
    expect(exports.filter((output) => (output as { Export?: unknown }).Export !== undefined)).toEqual([]);
  });
});

describe("the tenants file", () => {
  it.each([
    ['[{"id":"Acme"}]', /tenants\[0\]\.id: must be 2–31 lowercase/],
    ['[{"model":"gpt"}]', /tenants\[0\]\.id: is required/],
    [
      '[{"id":"acme","jwt":{"issuer":"not a url","audience":["a"]}}]',
      /tenants\[0\]\.jwt\.issuer: must be the issuer URL/,
    ],
    ['[{"id":"acme"},{"id":"acme"}]', /tenants\[1\]\.id: "acme" is listed twice/],
    ['[{"id":"acme","workerConcurrency":1}]', /tenants\[0\]\.workerConcurrency: must be at least 2/],
    [
      '[{"id":"acme","model":"bedrock:m","judge":"bedrock:j","repairAttempts":4}]',
      /tenants\[0\]\.repairAttempts: .*4 × \(120 s \+ 120 s judge\) \+ 60 s = 1020 s, over Lambda's 900 s/,
    ],
    [
      '[{"id":"acme","openAiKeySecretKmsKeyArn":"arn:aws:kms:eu-west-1:123456789012:key/abc"}]',
      /tenants\[0\]\.openAiKeySecretKmsKeyArn: names the key of openAiKeySecretArn/,
    ],
    [
      '[{"id":"acme","bedrockRegions":["Frankfurt"]}]',
      /tenants\[0\]\.bedrockRegions\[0\]: must be Region names/,
    ],
    [
      '[{"id":"acme","jwt":{"issuer":"https://a.example/","audience":["a"],"scopePrefix":"a b"}}]',
      /tenants\[0\]\.jwt\.scopePrefix: must be up to 64/,
    ],
    ['[{"id":"acme","colour":"blue"}]', /tenants\[0\]: Unrecognized key/],
    ["[]", /tenants: must name at least one tenant/],
    ["{oops", /not valid JSON/],
  ])("%s is refused naming the field", (text, message) => {
    expect(() => parseTenants(text, "tenants.json")).toThrow(TenantsError);
    expect(() => parseTenants(text, "tenants.json")).toThrow(message);
  });

  it("a bad tenants file stops synth with one line", () => {
    const result = spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "cdk/bin/app.ts")], {
      cwd: ROOT,
      encoding: "utf8",
      env: {
        ...process.env,
        CDK_CONTEXT_JSON: JSON.stringify({ tenants: '[{"id":"acme","publishMode":"later"}]' }),
      },
    });
    expect(result.status).toBe(1);
    expect(result.stderr.trim()).toBe(
      'memgate: -c tenants: tenants[0].publishMode: must be "live" or "shadow"',
    );
  });
});

describe("npx cdk synth", () => {
  it("synthesises offline with the local esbuild (no Docker), cdk-nag clean, bundles that load", () => {
    const out = mkdtempSync(join(tmpdir(), "memgate-cdk-out-"));
    const result = spawnSync("npx", ["cdk", "synth", "--quiet", "--output", out], {
      cwd: ROOT,
      encoding: "utf8",
      env: { ...process.env, CDK_DISABLE_CLI_TELEMETRY: "true", DOCKER_HOST: "unix:///nonexistent" },
      timeout: 240_000,
    });
    expect(result.status, result.stderr.slice(-2000)).toBe(0);
    const report = JSON.parse(readFileSync(join(out, "validation-report.json"), "utf8"));
    expect(report.pluginReports[0].violations).toEqual([]);
    const template = JSON.parse(readFileSync(join(out, "memgate-demo.template.json"), "utf8"));
    const functions = Object.values(template.Resources).filter(
      (r) => (r as { Type: string }).Type === "AWS::Lambda::Function",
    ) as Array<{ Metadata?: Record<string, string> }>;
    expect(functions).toHaveLength(5);
    for (const fn of functions) {
      const asset = join(out, fn.Metadata?.["aws:asset:path"] as string, "index.mjs");
      const loaded = spawnSync(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          `const m = await import(${JSON.stringify(asset)}); console.log(typeof m.handler);`,
        ],
        {
          encoding: "utf8",
          env: {
            PATH: process.env.PATH,
            MEMGATE_TENANT: "demo",
            MEMGATE_TABLE: "t",
            MEMGATE_BUCKET: "b",
            MEMGATE_QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/123456789012/q.fifo",
            AWS_REGION: "us-east-1",
          },
        },
      );
      expect(loaded.stdout.trim(), loaded.stderr.slice(0, 500)).toBe("function");
    }
  }, 300_000);
});
