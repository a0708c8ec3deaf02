import { join } from "node:path";
import { type Duration, RemovalPolicy } from "aws-cdk-lib";
import { PolicyDocument, PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { Architecture, Runtime, Tracing } from "aws-cdk-lib/aws-lambda";
import { NodejsFunction, OutputFormat } from "aws-cdk-lib/aws-lambda-nodejs";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import type { Construct } from "constructs";
import { LAMBDA_BUNDLE } from "#runtime/settings.ts";
import { acknowledgeWildcards } from "./nag.ts";

export const PROJECT_ROOT = join(import.meta.dirname, "..", "..");

export interface MemgateFunctionProps {
  /** The folder under lambdas/ whose handler.ts this function runs. */
  lambda: "api" | "worker" | "outbox" | "sweep" | "audit";
  description: string;
  timeout: Duration;
  memorySize?: number;
  environment: Record<string, string>;
  /** Ship a source map and run Node with --enable-source-maps (Tenant.sourceMaps; off by default). */
  sourceMaps: boolean;
}

/**
 * What every memgate Lambda shares: Node.js 24 on arm64 (the runtime settings' Lambda bundle target), X-Ray tracing, its own log group with a
 * retention, and one self-contained ES module bundled by the locally installed esbuild (never
 * Docker) with the AWS SDK inside (the versions tested are the versions deployed) and the prompts
 * imported as text, as scripts/bundle-lambdas.mjs bundles them for the tests.
 *
 * Its permissions are one policy of its own (the role's only one, inline): writing its log group,
 * sending traces, and what the stack `allow`s, statement by statement. The function sees its role
 * without policy updates, so no grant made elsewhere (an event source's, a `grant*` call) can add
 * to it behind the stack's back: every action a function may take is written where it is allowed.
 */
export class MemgateFunction extends NodejsFunction {
  /** The function's only policy (inline in `executionRole`). */
  readonly permissions: PolicyDocument;
  readonly executionRole: Role;

  constructor(scope: Construct, id: string, props: MemgateFunctionProps) {
    const logGroup = new LogGroup(scope, `${id}Logs`, {
      retention: RetentionDays.THREE_MONTHS,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const permissions = new PolicyDocument({
      statements: [
        new PolicyStatement({
          sid: "WriteItsLogs",
          actions: ["logs:CreateLogStream", "logs:PutLogEvents"],
          resources: [logGroup.logGroupArn],
        }),
      ],
    });
    const executionRole = new Role(scope, `${id}Role`, {
      assumedBy: new ServicePrincipal("lambda.amazonaws.com"),
      description: props.description,
      inlinePolicies: { permissions },
    });
    super(scope, id, {
      entry: join(PROJECT_ROOT, "lambdas", props.lambda, "handler.ts"),
      handler: "handler",
      description: props.description,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      timeout: props.timeout,
      memorySize: props.memorySize ?? 1024,
      tracing: Tracing.ACTIVE,
      logGroup,
      role: executionRole.withoutPolicyUpdates(),
      environment: props.sourceMaps
        ? { ...props.environment, NODE_OPTIONS: "--enable-source-maps" }
        : props.environment,
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: join(PROJECT_ROOT, "package-lock.json"),
      // The options scripts/bundle-lambdas.mjs builds the tested bundles with, in CDK's words.
      bundling: {
        format: OutputFormat.ESM,
        target: LAMBDA_BUNDLE.target,
        minify: LAMBDA_BUNDLE.minify,
        sourceMap: props.sourceMaps,
        mainFields: [...LAMBDA_BUNDLE.mainFields],
        externalModules: [...LAMBDA_BUNDLE.external],
        loader: { ...LAMBDA_BUNDLE.loader },
        forceDockerBundling: false,
        banner: LAMBDA_BUNDLE.banner.js,
      },
    });
    this.permissions = permissions;
    this.executionRole = executionRole;
    this.allow(
      new PolicyStatement({
        sid: "SendTraces",
        actions: ["xray:PutTraceSegments", "xray:PutTelemetryRecords"],
        resources: ["*"],
      }),
      "X-Ray's PutTraceSegments and PutTelemetryRecords (active tracing) have no resource-level permissions.",
    );
  }

  /**
   * Adds one statement to the function's policy. A statement holding a wildcard (an object prefix,
   * a path parameter) says why, and its findings are acknowledged on this function's role alone.
   */
  allow(statement: PolicyStatement, wildcardReason?: string): void {
    this.permissions.addStatements(statement);
    if (wildcardReason !== undefined) acknowledgeWildcards(this.executionRole, statement, wildcardReason);
  }
}
