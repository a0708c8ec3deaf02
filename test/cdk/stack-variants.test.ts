// The tenant stack's variants, synthesised offline: a JWT issuer with Bedrock models, OpenAI-compatible
// models with their key in Secrets Manager, two tenants in one app, the tenants file, and `npx cdk synth`.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Match, type Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { API_ROUTES } from "#runtime/api-roles.ts";
import { INFERENCE_PROFILE_REGIONS } from "../../cdk/lib/bedrock-access.ts";
import { parseTenants, TenantsError } from "../../cdk/lib/tenants.ts";
import {
  actionsOf,
  functionPolicies,
  NAME_PROPERTIES,
  ROOT,
  resourcesOf,
  routeKey,
  statementNamed,
  synth,
  tenant,
} from "./templates.ts";

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
