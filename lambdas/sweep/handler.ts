import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { MetricUnit } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import middy from "@middy/core";
import { lambdaRuntime } from "#adapters/aws/lambda-runtime.ts";
import { sweep } from "#app/append.ts";
import { MetricNames } from "#observability/metric-names.ts";

/**
 * The sweep (EventBridge rate): requests a rebuild for every subject whose committed state calls
 * for one and the outbox missed, and finishes STALE marks a dead process left.
 */
const runtime = lambdaRuntime();

export const handler = middy(async () => {
  const requested = await sweep(runtime.deps);
  runtime.metrics.addMetric(MetricNames.RebuildRequested, MetricUnit.Count, requested.length);
  for (const { subject, reason } of requested) runtime.logger.info("rebuild requested", { subject, reason });
  return { requested: requested.length };
})
  .use(captureLambdaHandler(runtime.tracer))
  .use(injectLambdaContext(runtime.logger))
  .use(logMetrics(runtime.metrics));
