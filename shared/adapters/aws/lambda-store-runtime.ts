import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { Tracer } from "@aws-lambda-powertools/tracer";
import { z } from "zod";
import type { RebuildDeps } from "#app/append.ts";
import {
  METRIC_NAMESPACE,
  MetricDimensions,
  type MetricName,
  SERVICE_NAME,
} from "#observability/metric-names.ts";
import { describeIssues } from "#runtime/issues.ts";
import { ENV } from "#runtime/settings.ts";
import { type AwsStores, composeAwsStores } from "./compose.ts";

/**
 * The settings every Lambda needs, from its environment (the CDK stack sets them by the same
 * names), parsed once at cold start: a missing or bad one fails the cold start with one line
 * naming it. The functions that generate or judge read more (LambdaConfig, lambda-runtime.ts).
 */
export const LambdaStoreConfig = z.object({
  [ENV.tenant]: z.string().min(1),
  [ENV.table]: z.string().min(1),
  [ENV.bucket]: z.string().min(1),
  [ENV.queueUrl]: z.string().min(1),
});
export type LambdaStoreConfig = z.infer<typeof LambdaStoreConfig>;

export class LambdaConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LambdaConfigError";
  }
}

/** The environment parsed by `schema`, or LambdaConfigError naming every bad setting. */
export function parseEnvironment<T extends z.ZodType>(
  schema: T,
  environment: Record<string, string | undefined>,
): z.infer<T> {
  const parsed = schema.safeParse(environment);
  if (parsed.success) return parsed.data;
  const problems = describeIssues(parsed.error, {
    each: (field, message) => `${field} (${message})`,
    separator: ", ",
  });
  throw new LambdaConfigError(
    `memgate: bad Lambda configuration: set ${problems} in the function's environment`,
  );
}

export interface LambdaTools {
  logger: Logger;
  metrics: Metrics;
  tracer: Tracer;
  /** One datapoint of a metric with an extra dimension (a gate reason, a recall mode). */
  countBy(name: MetricName, dimension: string, value: string, count?: number): void;
}

export interface LambdaStoreRuntime extends LambdaTools {
  config: LambdaStoreConfig;
  stores: AwsStores;
  /** The stores, the clock and progress: no model, no prompt, no gate. */
  deps: RebuildDeps;
}

/** Powertools' logger, metrics (one namespace, the tenant as a dimension) and tracer. */
export function lambdaTools(tenant: string): LambdaTools {
  const tracer = new Tracer({ serviceName: SERVICE_NAME });
  const logger = new Logger({ serviceName: SERVICE_NAME, persistentKeys: { tenant } });
  const metrics = new Metrics({
    namespace: METRIC_NAMESPACE,
    serviceName: SERVICE_NAME,
    defaultDimensions: { [MetricDimensions.tenant]: tenant },
  });
  return {
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

/** The tenant's table, bucket and queue behind the ports, each client traced. */
export function lambdaStores(config: LambdaStoreConfig, tracer: Tracer): AwsStores {
  const instrument = <T extends object>(client: T): T => tracer.captureAWSv3Client(client);
  return composeAwsStores(
    { table: config.MEMGATE_TABLE, bucket: config.MEMGATE_BUCKET, queueUrl: config.MEMGATE_QUEUE_URL },
    { instrument },
  );
}

/**
 * The composition root of the Lambdas that run no model and no gate (the outbox, the sweep): the
 * stores and Powertools, nothing else, so their bundles carry neither the models' clients, the
 * tokenizer nor the lemmatiser's lexicon (test/lambdas/bundles.test.ts holds them to it).
 */
export function lambdaStoreRuntime(
  environment: Record<string, string | undefined> = process.env,
): LambdaStoreRuntime {
  const config = parseEnvironment(LambdaStoreConfig, environment);
  const tools = lambdaTools(config.MEMGATE_TENANT);
  const stores = lambdaStores(config, tools.tracer);
  const deps: RebuildDeps = {
    events: stores.events,
    artifacts: stores.artifacts,
    queue: stores.queue,
    settings: stores.settings,
    now: () => new Date(),
    progress: (line) => tools.logger.debug(line),
  };
  return { ...tools, config, stores, deps };
}
