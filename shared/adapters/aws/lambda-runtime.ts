import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { Tracer } from "@aws-lambda-powertools/tracer";
import { z } from "zod";
import type { Deps } from "#app/deps.ts";
import { NO_FAILPOINTS } from "#app/failpoints.ts";
import { DEFAULT_PROMPT_VERSION } from "#app/prompts.ts";
import { DETERMINISTIC_MODEL } from "#domain/consolidator.ts";
import {
  METRIC_NAMESPACE,
  MetricDimensions,
  type MetricName,
  SERVICE_NAME,
} from "#observability/metric-names.ts";
import { composeDeps } from "#runtime/compose.ts";
import { describeIssues } from "#runtime/issues.ts";
import { ENV } from "#runtime/settings.ts";
import { modelOptionsFromEnv } from "../models/models.ts";
import { composeAwsStores } from "./compose.ts";
import { secretKey } from "./secret-key.ts";

/**
 * Every Lambda's settings, from its environment (the CDK stack sets them by the same names),
 * parsed once at cold start: a missing or bad one fails the cold start with one line naming it.
 */
export const LambdaConfig = z.object({
  [ENV.tenant]: z.string().min(1),
  [ENV.table]: z.string().min(1),
  [ENV.bucket]: z.string().min(1),
  [ENV.queueUrl]: z.string().min(1),
  [ENV.model]: z.string().min(1).default(DETERMINISTIC_MODEL),
  [ENV.prompt]: z.string().min(1).default(DEFAULT_PROMPT_VERSION),
  [ENV.generationTimeoutMs]: z.coerce.number().int().positive().default(60_000),
  [ENV.budgetTokens]: z.coerce.number().int().positive().optional(),
  [ENV.repairAttempts]: z.coerce.number().int().min(1).max(10).optional(),
  [ENV.judge]: z.string().min(1).optional(),
  /** A Secrets Manager secret holding the OpenAI-compatible endpoint's key (never the key itself). */
  [ENV.openAiKeySecret]: z.string().min(1).optional(),
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
  const problems = describeIssues(parsed.error, {
    each: (field, message) => `${field} (${message})`,
    separator: ", ",
  });
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
  const instrument = <T extends object>(client: T): T => tracer.captureAWSv3Client(client);
  const stores = composeAwsStores(
    { table: config.MEMGATE_TABLE, bucket: config.MEMGATE_BUCKET, queueUrl: config.MEMGATE_QUEUE_URL },
    { instrument },
  );
  const deps = composeDeps(
    stores,
    {
      model: config.MEMGATE_MODEL,
      prompt: config.MEMGATE_PROMPT,
      generationTimeoutMs: config.MEMGATE_GENERATION_TIMEOUT_MS,
      defaultBudget: config.MEMGATE_BUDGET_TOKENS,
      repairAttempts: config.MEMGATE_REPAIR_ATTEMPTS,
      judge: config.MEMGATE_JUDGE,
      failpoints: NO_FAILPOINTS,
      progress: (line) => logger.debug(line),
    },
    {
      ...modelOptionsFromEnv(),
      instrument,
      ...(config.MEMGATE_OPENAI_KEY_SECRET
        ? { openAiApiKey: secretKey(config.MEMGATE_OPENAI_KEY_SECRET, { instrument }) }
        : {}),
    },
  );
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
