import { randomUUID } from "node:crypto";
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { Tracer } from "@aws-lambda-powertools/tracer";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { S3Client } from "@aws-sdk/client-s3";
import { SQSClient } from "@aws-sdk/client-sqs";
import { z } from "zod";
import type { Deps } from "#app/deps.ts";
import { NO_FAILPOINTS } from "#app/failpoints.ts";
import { DEFAULT_PROMPT_VERSION, loadPrompt } from "#app/prompts.ts";
import { DETERMINISTIC_MODEL } from "#domain/consolidator.ts";
import {
  METRIC_NAMESPACE,
  MetricDimensions,
  type MetricName,
  SERVICE_NAME,
} from "#observability/metric-names.ts";
import { judgeNamed, modelNamed, modelOptionsFromEnv } from "../models/models.ts";
import { DynamoStore } from "./dynamo-store.ts";
import { S3ArtifactStore } from "./s3-artifacts.ts";
import { secretKey } from "./secret-key.ts";
import { SqsSnapshotQueue } from "./sqs-queue.ts";

/**
 * Every Lambda's settings, from its environment (the CDK stack sets them), parsed once at cold
 * start: a missing or bad one fails the cold start with one line naming it.
 */
export const LambdaConfig = z.object({
  MEMGATE_TENANT: z.string().min(1),
  MEMGATE_TABLE: z.string().min(1),
  MEMGATE_BUCKET: z.string().min(1),
  MEMGATE_QUEUE_URL: z.string().min(1),
  MEMGATE_MODEL: z.string().min(1).default(DETERMINISTIC_MODEL),
  MEMGATE_PROMPT: z.string().min(1).default(DEFAULT_PROMPT_VERSION),
  MEMGATE_GENERATION_TIMEOUT_MS: z.coerce.number().int().positive().default(60_000),
  MEMGATE_BUDGET_TOKENS: z.coerce.number().int().positive().optional(),
  MEMGATE_REPAIR_ATTEMPTS: z.coerce.number().int().min(1).max(10).optional(),
  MEMGATE_JUDGE: z.string().min(1).optional(),
  /** A Secrets Manager secret holding the OpenAI-compatible endpoint's key (never the key itself). */
  MEMGATE_OPENAI_KEY_SECRET: z.string().min(1).optional(),
});
export type LambdaConfig = z.infer<typeof LambdaConfig>;

export class LambdaConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LambdaConfigError";
  }
}

export function parseLambdaConfig(environment: Record<string, string | undefined>): LambdaConfig {
  const parsed = LambdaConfig.safeParse(environment);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues
    .map((issue) => `${issue.path.join(".")} (${issue.message})`)
    .join(", ");
  throw new LambdaConfigError(
    `memgate: bad Lambda configuration: set ${problems} in the function's environment`,
  );
}

export interface LambdaRuntime {
  config: LambdaConfig;
  deps: Deps;
  logger: Logger;
  metrics: Metrics;
  tracer: Tracer;
  /** One datapoint of a metric with an extra dimension (a gate reason, a recall mode). */
  countBy(name: MetricName, dimension: string, value: string, count?: number): void;
}

/**
 * The AWS composition root of the Lambdas: the tenant's table, bucket and queue behind the ports,
 * the model, Powertools' logger, metrics (one namespace, the tenant as a dimension) and tracer.
 * Built once per cold start and shared by every invocation.
 */
export function lambdaRuntime(environment: Record<string, string | undefined> = process.env): LambdaRuntime {
  const config = parseLambdaConfig(environment);
  const tracer = new Tracer({ serviceName: SERVICE_NAME });
  const logger = new Logger({ serviceName: SERVICE_NAME, persistentKeys: { tenant: config.MEMGATE_TENANT } });
  const metrics = new Metrics({
    namespace: METRIC_NAMESPACE,
    serviceName: SERVICE_NAME,
    defaultDimensions: { [MetricDimensions.tenant]: config.MEMGATE_TENANT },
  });
  const dynamo = tracer.captureAWSv3Client(new DynamoDBClient({}));
  const s3 = tracer.captureAWSv3Client(new S3Client({ forcePathStyle: true }));
  const sqs = tracer.captureAWSv3Client(new SQSClient({}));
  const store = new DynamoStore(dynamo, config.MEMGATE_TABLE);
  const instrument = <T extends object>(client: T): T => tracer.captureAWSv3Client(client);
  const models = {
    ...modelOptionsFromEnv(),
    instrument,
    ...(config.MEMGATE_OPENAI_KEY_SECRET
      ? { openAiApiKey: secretKey(config.MEMGATE_OPENAI_KEY_SECRET, { instrument }) }
      : {}),
  };
  const deps: Deps = {
    events: store,
    alias: store,
    artifacts: new S3ArtifactStore(s3, config.MEMGATE_BUCKET, store),
    queue: new SqsSnapshotQueue(sqs, config.MEMGATE_QUEUE_URL),
    settings: store,
    model: modelNamed(config.MEMGATE_MODEL, models),
    prompt: loadPrompt(config.MEMGATE_PROMPT),
    now: () => new Date(),
    newId: () => randomUUID().slice(0, 8),
    failpoints: NO_FAILPOINTS,
    generationTimeoutMs: config.MEMGATE_GENERATION_TIMEOUT_MS,
    ...(config.MEMGATE_BUDGET_TOKENS === undefined ? {} : { budget: config.MEMGATE_BUDGET_TOKENS }),
    ...(config.MEMGATE_REPAIR_ATTEMPTS === undefined
      ? {}
      : { repairAttempts: config.MEMGATE_REPAIR_ATTEMPTS }),
    ...(config.MEMGATE_JUDGE === undefined ? {} : { judge: judgeNamed(config.MEMGATE_JUDGE, models) }),
    progress: (line) => logger.debug(line),
  };
  return {
    config,
    deps,
    logger,
    metrics,
    tracer,
    countBy(name, dimension, value, count = 1) {
      const single = metrics.singleMetric();
      single.addDimension(dimension, value);
      single.addMetric(name, MetricUnit.Count, count);
    },
  };
}
