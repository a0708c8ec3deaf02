import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { MetricUnit } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import middy from "@middy/core";
import { lambdaStoreRuntime } from "#adapters/aws/lambda-store-runtime.ts";
import { sweep } from "#app/append.ts";
import { MetricNames } from "#observability/metric-names.ts";

/**
 * The sweep (EventBridge rate): requests a rebuild for every subject whose committed state calls
 * for one and the outbox missed (unless its last attempt waits out a backoff or a review), finishes
 * STALE marks a dead process left, and counts the subjects left for a person (RebuildsLeft).
 */
const runtime = lambdaStoreRuntime();

export const handler = middy(async () => {
  const { requested, waiting, left } = await sweep(runtime.deps);
  runtime.metrics.addMetric(MetricNames.RebuildRequested, MetricUnit.Count, requested.length);
  runtime.metrics.addMetric(MetricNames.RebuildsLeft, MetricUnit.Count, left.length);
  for (const { subject, reason } of requested) runtime.logger.info("rebuild requested", { subject, reason });
  for (const { subject, reason } of left)
    runtime.logger.warn("rebuild left for a person", { subject, reason });
  return { requested: requested.length, waiting: waiting.length, left: left.length };
})
  .use(captureLambdaHandler(runtime.tracer))
  .use(injectLambdaContext(runtime.logger))
  .use(logMetrics(runtime.metrics));
