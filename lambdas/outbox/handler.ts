import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { MetricUnit } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import middy from "@middy/core";
import type { Context, DynamoDBRecord, DynamoDBStreamEvent } from "aws-lambda";
import { clockSubjectOf } from "#adapters/aws/dynamo-items.ts";
import { lambdaStoreRuntime } from "#adapters/aws/lambda-store-runtime.ts";
import { requestRebuildIfNeeded } from "#app/append.ts";
import { MetricNames } from "#observability/metric-names.ts";

/**
 * The rebuild outbox: DynamoDB Streams on the table (the stack filters to clock items). A
 * committed clock change that leaves a subject needing a rebuild sends its snapshot to the FIFO
 * queue (deduplicated on subject:highWater:epoch:alias, so repeats are harmless). The appending
 * process never has to survive for a revocation to be followed by a rebuild.
 */
const runtime = lambdaStoreRuntime();
const processor = new BatchProcessor(EventType.DynamoDBStreams);

async function followClock(record: DynamoDBRecord): Promise<void> {
  const subject = clockSubjectOf(record.dynamodb?.Keys ?? {});
  if (subject === null) return; // not a clock item: nothing to follow
  const { rebuildAfterEvents } = await runtime.deps.settings.settings();
  const decision = await requestRebuildIfNeeded(runtime.deps, subject, rebuildAfterEvents);
  if (decision.action !== "request") return;
  runtime.metrics.addMetric(MetricNames.RebuildRequested, MetricUnit.Count, 1);
  runtime.logger.info("rebuild requested", { subject, reason: decision.reason });
}

export const handler = middy((event: DynamoDBStreamEvent, context: Context) =>
  processPartialResponse(event, followClock, processor, { context, throwOnFullBatchFailure: false }),
)
  .use(captureLambdaHandler(runtime.tracer))
  .use(injectLambdaContext(runtime.logger))
  .use(logMetrics(runtime.metrics));
