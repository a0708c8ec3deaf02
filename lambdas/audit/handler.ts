import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { MetricUnit } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import middy from "@middy/core";
import { lambdaRuntime } from "#adapters/aws/lambda-runtime.ts";
import { audit } from "#app/audit.ts";
import { MetricDimensions, MetricNames } from "#observability/metric-names.ts";

/**
 * The daily audit (EventBridge): re-checks every served summary against the raw layer, emits
 * StaleVisible and FalseFact (the stack alarms on both above 0) and the gate's reasons, and
 * contains what it finds (STALE mark, raw recall, rebuild).
 */
const runtime = lambdaRuntime();

export const handler = middy(async () => {
  const report = await audit(runtime.deps);
  runtime.metrics.addMetric(MetricNames.StaleVisible, MetricUnit.Count, report.staleVisible);
  runtime.metrics.addMetric(MetricNames.FalseFact, MetricUnit.Count, report.falseFact);
  for (const [code, count] of Object.entries(report.reasonCounts))
    runtime.countBy(MetricNames.AuditReason, MetricDimensions.reason, code, count);
  for (const finding of report.findings) runtime.logger.error("audit finding", { ...finding });
  // Emitted only by a pass that checked every subject: its absence is what the heartbeat alarm sees.
  runtime.metrics.addMetric(MetricNames.AuditHeartbeat, MetricUnit.Count, 1);
  runtime.logger.info("audit done", {
    subjects: report.subjects,
    served: report.served,
    staleVisible: report.staleVisible,
    falseFact: report.falseFact,
    contained: report.contained,
  });
  return { subjects: report.subjects, staleVisible: report.staleVisible, falseFact: report.falseFact };
})
  .use(captureLambdaHandler(runtime.tracer))
  .use(injectLambdaContext(runtime.logger))
  .use(logMetrics(runtime.metrics));
