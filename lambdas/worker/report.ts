import { MetricUnit } from "@aws-lambda-powertools/metrics";
import type { LambdaRuntime } from "#adapters/aws/lambda-runtime.ts";
import type { WorkOutcome } from "#app/worker.ts";
import { countReasons } from "#domain/gate/index.ts";
import { MetricDimensions, MetricNames } from "#observability/metric-names.ts";

/** The worker leaves a message for SQS to deliver again (and, past maxReceiveCount, to the DLQ). */
export class RetryLaterError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "RetryLaterError";
  }
}

/** One log line and the metrics of one worked message (the names the CDK stack alarms on). */
export function reportWork(runtime: LambdaRuntime, messageId: string, outcome: WorkOutcome): void {
  const { logger, metrics } = runtime;
  const context = { messageId, subject: outcome.subject, status: outcome.status, action: outcome.action };
  switch (outcome.status) {
    case "poison":
      metrics.addMetric(MetricNames.PoisonMessage, MetricUnit.Count, 1);
      logger.error("not a snapshot message: acknowledged, not retried", {
        ...context,
        detail: outcome.detail,
      });
      return;
    case "refused":
      metrics.addMetric(MetricNames.CasLost, MetricUnit.Count, 1);
      logger.info("publish refused: the snapshot is dead, a fresher one comes", {
        ...context,
        refusal: outcome.refusal,
        detail: outcome.detail,
      });
      return;
    case "dropped":
      logger.info("snapshot dropped", { ...context, detail: outcome.detail });
      return;
    case "generation-failed":
      metrics.addMetric(MetricNames.GenerationFailed, MetricUnit.Count, 1);
      logger.warn("generation failed: the message will be retried", { ...context, detail: outcome.detail });
      return;
    case "contention":
    case "error":
      logger.error("worker failed: the message will be retried", {
        ...context,
        detail: outcome.detail,
        error: outcome.error instanceof Error ? outcome.error : String(outcome.error),
      });
      return;
    default: {
      const { artifactId, gate } = outcome;
      logger.info(`artifact ${outcome.status}`, { ...context, artifactId, verdict: gate.verdict });
      if (outcome.status === "REJECTED")
        for (const [code, count] of Object.entries(countReasons(gate.reasons)))
          runtime.countBy(MetricNames.GateRejected, MetricDimensions.reason, code, count);
      if (outcome.status === "PUBLISHED")
        metrics.addMetric(MetricNames.PublishLatency, MetricUnit.Milliseconds, Math.round(outcome.elapsedMs));
      if (outcome.tokens) {
        runtime.countBy(MetricNames.ModelTokens, MetricDimensions.direction, "input", outcome.tokens.input);
        runtime.countBy(MetricNames.ModelTokens, MetricDimensions.direction, "output", outcome.tokens.output);
      }
    }
  }
}
