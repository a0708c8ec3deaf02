import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import middy from "@middy/core";
import { handle, type LambdaContext, type LambdaEvent } from "hono/aws-lambda";
import { lambdaRuntime } from "#adapters/aws/lambda-runtime.ts";
import { createApi } from "#http/api.ts";
import { gatewayRoutedEvent, noRouteAnswer } from "#http/api-gateway-path.ts";
import { MetricDimensions, MetricNames } from "#observability/metric-names.ts";

/**
 * The agents' HTTP API (API Gateway HTTP API, payload format 2.0): the router `memgate serve` runs,
 * on the route API Gateway matched and authorized, never on rawPath (gatewayRoutedEvent).
 */
const runtime = lambdaRuntime();
const { logger, metrics, tracer } = runtime;

const api = createApi({
  deps: runtime.deps,
  logRequest: (line) => logger.info(line),
  logUnexpected: (error) => logger.error("unexpected error", error as Error),
  recallServed: (mode) => runtime.countBy(MetricNames.RecallServed, MetricDimensions.mode, mode),
});

const serveApi = handle(api);

/** Payload format 2.0, the only one the tenant stack's HTTP API sends. */
type HttpApiEvent = Extract<LambdaEvent, { rawPath: string; routeKey: string }>;

export const handler = middy(async (event: HttpApiEvent, context: LambdaContext) => {
  const routed = gatewayRoutedEvent(event);
  return routed === null ? noRouteAnswer(event) : serveApi(routed, context);
})
  .use(captureLambdaHandler(tracer))
  .use(injectLambdaContext(logger))
  .use(logMetrics(metrics));
