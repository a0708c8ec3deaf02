import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import middy from "@middy/core";
import { handle } from "hono/aws-lambda";
import { lambdaRuntime } from "#adapters/aws/lambda-runtime.ts";
import { createApi } from "#http/api.ts";
import { MetricDimensions, MetricNames } from "#observability/metric-names.ts";

/** The agents' HTTP API (API Gateway HTTP API, payload format 2.0): the router `memgate serve` runs. */
const runtime = lambdaRuntime();
const { logger, metrics, tracer } = runtime;

const api = createApi({
  deps: runtime.deps,
  logRequest: (line) => logger.info(line),
  logUnexpected: (error) => logger.error("unexpected error", error as Error),
  recallServed: (mode) => runtime.countBy(MetricNames.RecallServed, MetricDimensions.mode, mode),
});

export const handler = middy(handle(api))
  .use(captureLambdaHandler(tracer))
  .use(injectLambdaContext(logger))
  .use(logMetrics(metrics));
