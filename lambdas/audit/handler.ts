import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { MetricUnit } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import middy from "@middy/core";
import type { Context } from "aws-lambda";
import { lambdaRuntime } from "#adapters/aws/lambda-runtime.ts";
import { auditRound } from "#app/audit-round.ts";
import { MetricDimensions, MetricNames } from "#observability/metric-names.ts";

/**
 * The audit (EventBridge, every 15 minutes): one round a day over every subject, resumed from its
 * checkpoint by each invocation until it is complete. Each subject's StaleVisible, FalseFact and
 * gate reasons are published as soon as it is audited (the stack alarms on both above 0); the
 * heartbeat only when the round completes, so its alarm tells when a whole round did not.
 */
const runtime = lambdaRuntime();

export const handler = middy(async (_event: unknown, context: Context) => {
  const round = await auditRound(
    { ...runtime.deps, rounds: runtime.rounds },
    {
      remainingMs: () => context.getRemainingTimeInMillis(),
      judgeTimeoutMs: runtime.config.MEMGATE_GENERATION_TIMEOUT_MS,
      onSubject: (_subject, found) => {
        runtime.metrics.addMetric(MetricNames.StaleVisible, MetricUnit.Count, found.staleVisible);
        runtime.metrics.addMetric(MetricNames.FalseFact, MetricUnit.Count, found.falseFact);
        for (const [code, count] of Object.entries(found.reasonCounts))
          runtime.countBy(MetricNames.AuditReason, MetricDimensions.reason, code, count);
        for (const finding of found.findings) runtime.logger.error("audit finding", { ...finding });
        runtime.metrics.publishStoredMetrics();
      },
    },
  );
  // Emitted only by the invocation that completed a round: its absence is what the alarm sees.
  if (round.status === "complete") runtime.metrics.addMetric(MetricNames.AuditHeartbeat, MetricUnit.Count, 1);
  runtime.logger.info(`audit ${round.status}`, { audited: round.audited, checkpoint: round.checkpoint });
  const totals = round.checkpoint;
  return {
    status: round.status,
    audited: round.audited,
    subjects: totals?.subjects ?? 0,
    staleVisible: totals?.staleVisible ?? 0,
    falseFact: totals?.falseFact ?? 0,
  };
})
  .use(captureLambdaHandler(runtime.tracer))
  .use(injectLambdaContext(runtime.logger))
  .use(logMetrics(runtime.metrics));
