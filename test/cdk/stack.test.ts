// The tenant stack, synthesised offline: what matters for safety and operations, asserted on the
// template; cdk-nag's findings from the validation report; two tenants side by side.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { METRIC_NAMESPACE, MetricNames, SERVICE_NAME } from "#observability/metric-names.ts";
import { addTenantStacks } from "../../cdk/lib/memgate-app.ts";
import { QUEUE_AGE_ALARM_SECONDS, type TenantStack } from "../../cdk/lib/tenant-stack.ts";
import { parseTenants, type Tenant, TenantsError } from "../../cdk/lib/tenants.ts";

const ROOT = join(import.meta.dirname, "../..");

/** An app that synthesises without bundling the Lambdas (the `cdk synth` test bundles for real). */
function synth(tenants: Tenant[]) {
  const outdir = mkdtempSync(join(tmpdir(), "memgate-cdk-"));
  const app = new App({ outdir, context: { "aws:cdk:bundling-stacks": [] } });
  const stacks = addTenantStacks(app, tenants);
  app.synth();
  return { outdir, stacks, templates: stacks.map((stack) => Template.fromStack(stack)) };
}

const tenant = (fields: Record<string, unknown>) =>
  parseTenants(JSON.stringify([fields]), "test")[0] as Tenant;

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
];

function resourcesOf(
  template: Template,
): Record<string, { Type: string; Properties?: Record<string, unknown> }> {
  return template.toJSON().Resources;
}

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
      GlobalSecondaryIndexes: [Match.objectLike({ IndexName: "byRebuildCheck" })],
      Replicas: [
        Match.objectLike({
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
          DeletionProtectionEnabled: true,
        }),
      ],
    });
  });

  it("keeps memory write-once: versioned, encrypted, private, TLS only, deletes denied to everyone", () => {
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
        ]),
      },
    });
  });

  it("queues snapshots on an encrypted FIFO queue with a DLQ and a visibility of six worker timeouts", () => {
    const worker = Object.values(resourcesOf(template)).find(
      (r) => r.Type === "AWS::Lambda::Function" && String(r.Properties?.Description).includes("worker"),
    );
    const timeout = Number(worker?.Properties?.Timeout);
    expect(timeout).toBeGreaterThan(0);
    template.hasResourceProperties("AWS::SQS::Queue", {
      FifoQueue: true,
      VisibilityTimeout: timeout * 6,
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

  it("wires the worker to the queue with batch item failures, and the outbox to clock items of the stream", () => {
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      EventSourceArn: Match.anyValue(),
      FunctionResponseTypes: ["ReportBatchItemFailures"],
      BatchSize: 10,
    });
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      StartingPosition: "TRIM_HORIZON",
      FunctionResponseTypes: ["ReportBatchItemFailures"],
      FilterCriteria: {
        Filters: [{ Pattern: JSON.stringify({ dynamodb: { Keys: { sk: { S: ["CLOCK"] } } } }) }],
      },
    });
    template.hasResourceProperties("AWS::Events::Rule", { ScheduleExpression: "rate(5 minutes)" });
    template.hasResourceProperties("AWS::Events::Rule", { ScheduleExpression: "cron(17 3 * * ? *)" });
  });

  it("grants the worker no model outside the tenant's (none for the deterministic model) and no deletes", () => {
    const policies = JSON.stringify(
      Object.values(resourcesOf(template)).filter((r) => r.Type === "AWS::IAM::Policy"),
    );
    expect(policies).not.toContain("bedrock:");
    expect(policies).not.toContain("s3:DeleteObject");
  });

  it("serves the API with IAM authorization, access logs and throttling", () => {
    template.hasResourceProperties("AWS::ApiGatewayV2::Route", {
      RouteKey: "$default",
      AuthorizationType: "AWS_IAM",
    });
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

  it("alarms on dead letters, worker errors and queue age", () => {
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "ApproximateNumberOfMessagesVisible",
      Namespace: "AWS/SQS",
      Threshold: 0,
    });
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "Errors",
      Namespace: "AWS/Lambda",
      Threshold: 0,
    });
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "ApproximateAgeOfOldestMessage",
      Threshold: QUEUE_AGE_ALARM_SECONDS,
    });
    template.resourceCountIs("AWS::CloudWatch::Alarm", 5);
    template.hasResourceProperties("AWS::SNS::Subscription", {
      Protocol: "email",
      Endpoint: "ops@example.com",
    });
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

  it("passes cdk-nag's AWS Solutions checks with every acknowledgement carrying a reason", () => {
    const report = JSON.parse(readFileSync(join(outdir, "validation-report.json"), "utf8"));
    const plugin = report.pluginReports.find((p: { pluginName: string }) => p.pluginName === "AwsSolutions");
    expect(plugin.conclusion).toBe("success");
    expect(plugin.violations).toEqual([]);
    for (const suppressed of plugin.suppressedViolations)
      expect(
        String(suppressed.acknowledgement?.reason ?? suppressed.reason ?? "").length,
        suppressed.ruleName,
      ).toBeGreaterThan(20);
  });
});

describe("a tenant with a JWT issuer and a Bedrock model", () => {
  let template: Template;
  beforeAll(() => {
    template = synth([
      tenant({
        id: "globex",
        jwt: { issuer: "https://auth.globex.example/", audience: ["memgate"] },
        model: "segmented:bedrock:anthropic.claude-sonnet-4-5-v1:0",
        contextTokens: 200_000,
        maxOutputTokens: 8192,
        repairAttempts: 3,
        budgetTokens: 1500,
        judge: "bedrock:anthropic.claude-haiku-4-5-v1:0",
        workerConcurrency: 5,
      }),
    ]).templates[0] as Template;
  });

  it("authorizes with the JWT authorizer", () => {
    template.hasResourceProperties("AWS::ApiGatewayV2::Authorizer", {
      AuthorizerType: "JWT",
      JwtConfiguration: { Issuer: "https://auth.globex.example/", Audience: ["memgate"] },
    });
    template.hasResourceProperties("AWS::ApiGatewayV2::Route", { AuthorizationType: "JWT" });
  });

  it("hands every function the model, its sizes, the repair attempts and the tenant's summary budget", () => {
    template.hasResourceProperties("AWS::Lambda::Function", {
      Environment: {
        Variables: Match.objectLike({
          MEMGATE_MODEL: "segmented:bedrock:anthropic.claude-sonnet-4-5-v1:0",
          MEMGATE_CONTEXT_TOKENS: "200000",
          MEMGATE_MAX_OUTPUT_TOKENS: "8192",
          MEMGATE_REPAIR_ATTEMPTS: "3",
          MEMGATE_BUDGET_TOKENS: "1500",
          MEMGATE_JUDGE: "bedrock:anthropic.claude-haiku-4-5-v1:0",
        }),
      },
    });
  });

  it("lets the audit invoke the judge model only", () => {
    const judgeOnly = Object.values(template.findResources("AWS::IAM::Policy")).filter((policy) => {
      const text = JSON.stringify(policy);
      return text.includes("claude-haiku-4-5") && !text.includes("claude-sonnet-4-5");
    });
    expect(judgeOnly).toHaveLength(1);
  });

  it("lets the worker invoke that model only, with the tenant's concurrency", () => {
    template.hasResourceProperties("AWS::IAM::Policy", {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Sid: "InvokeTheTenantsModelOnly",
            Action: ["bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream"],
            Resource: Match.arrayWith([
              {
                "Fn::Join": [
                  "",
                  Match.arrayWith([
                    Match.stringLikeRegexp("foundation-model/anthropic.claude-sonnet-4-5-v1:0$"),
                  ]),
                ],
              },
            ]),
          }),
        ]),
      },
    });
    const bedrockPolicies = Object.values(resourcesOf(template)).filter(
      (r) => r.Type === "AWS::IAM::Policy" && JSON.stringify(r).includes("bedrock:"),
    );
    // The worker's (writer and judge) and the audit's (judge only), nobody else's.
    expect(bedrockPolicies).toHaveLength(2);
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      ScalingConfig: { MaximumConcurrency: 5 },
    });
  });
});

describe("a tenant with an OpenAI-compatible model and its key in Secrets Manager", () => {
  const secret = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:memgate/openai-AbCdEf";
  let template: Template;
  beforeAll(() => {
    template = synth([
      tenant({
        id: "initech",
        model: "segmented:openai:gpt-4o-mini",
        openAiBaseUrl: "https://llm.initech.example/v1",
        openAiKeySecretArn: secret,
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

  it("lets the worker and the audit read that secret, and nobody else", () => {
    const readers = Object.values(template.findResources("AWS::IAM::Policy")).filter((policy) =>
      JSON.stringify(policy).includes("secretsmanager:GetSecretValue"),
    );
    expect(readers).toHaveLength(2);
    for (const policy of readers) expect(JSON.stringify(policy)).toContain("memgate/openai-AbCdEf");
    expect(JSON.stringify(template.toJSON())).not.toContain("bedrock:InvokeModel");
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
