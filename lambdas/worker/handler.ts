import { processPartialResponse, SqsFifoPartialProcessorAsync } from "@aws-lambda-powertools/batch";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import middy from "@middy/core";
import type { Context, SQSEvent, SQSRecord } from "aws-lambda";
import { lambdaRuntime } from "#adapters/aws/lambda-runtime.ts";
import { workOnMessage } from "#app/worker.ts";
import { RetryLaterError, reportWork } from "./report.ts";

/**
 * The consolidation worker: SQS FIFO snapshot messages → generate → gate → write-once artifact →
 * publish CAS. Acknowledged: published, shadowed, rejected, dropped, refused, poison. Reported
 * as failed (SQS retries, then the DLQ): generation failed, contention, engine errors; the rest of
 * that subject's group in the batch is skipped, other subjects go on.
 */
const runtime = lambdaRuntime();
const processor = new SqsFifoPartialProcessorAsync();

async function processSnapshot(record: SQSRecord): Promise<void> {
  const outcome = await workOnMessage(runtime.deps, record.body);
  reportWork(runtime, record.messageId, outcome);
  if (outcome.action === "retry") throw new RetryLaterError(outcome.detail, { cause: outcome.error });
}

export const handler = middy((event: SQSEvent, context: Context) =>
  processPartialResponse(event, processSnapshot, processor, {
    context,
    skipGroupOnError: true,
    throwOnFullBatchFailure: false,
  }),
)
  .use(captureLambdaHandler(runtime.tracer))
  .use(injectLambdaContext(runtime.logger))
  .use(logMetrics(runtime.metrics));
