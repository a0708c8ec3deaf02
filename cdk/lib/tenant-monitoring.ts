import { Duration, type Stack } from "aws-cdk-lib";
import type { HttpStage } from "aws-cdk-lib/aws-apigatewayv2";
import {
  Alarm,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  SingleValueWidget,
  TreatMissingData,
} from "aws-cdk-lib/aws-cloudwatch";
import { SnsAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import { PolicyStatement, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { Topic } from "aws-cdk-lib/aws-sns";
import { METRIC_NAMESPACE, MetricNames, SERVICE_NAME } from "#observability/metric-names.ts";
import type { MemgateFunction } from "./memgate-function.ts";
import { capitalised } from "./tenant-api.ts";
import type { TenantStorage } from "./tenant-storage.ts";
import type { Tenant } from "./tenants.ts";

/** Queue age (seconds) above which the queue-age alarm fires: rebuilds are falling behind. */
export const QUEUE_AGE_ALARM_SECONDS = 900;

/**
 * Hours without an audit heartbeat before its alarm fires: a round starts each UTC day and is
 * carried over as many invocations as it needs, so a round may finish up to six hours later than
 * the last one did before the alarm says the audit is not keeping up. (Alarms of one-hour periods
 * may look back seven days; missing hours count as breaching.)
 */
export const AUDIT_HEARTBEAT_HOURS = 30;

/** The tenant's five functions, by the name of their handler. */
export type FunctionName = "api" | "worker" | "outbox" | "sweep" | "audit";

/**
 * The dashboard and the alarms, on exactly the metrics the Lambdas emit; the topic they notify
 * lets CloudWatch publish, for this account's alarms of this stack only.
 */
export function monitorTenant(
  stack: Stack,
  tenant: Tenant,
  storage: TenantStorage,
  functions: Record<FunctionName, MemgateFunction>,
  stage: HttpStage,
): void {
  const dimensionsMap = { service: SERVICE_NAME, tenant: tenant.id };
  const metric = (metricName: string, statistic = "Sum") =>
    new Metric({
      namespace: METRIC_NAMESPACE,
      metricName,
      dimensionsMap,
      statistic,
      period: Duration.minutes(5),
    });
  const byDimension = (metricName: string, dimension: string, label: string) =>
    new MathExpression({
      expression: `SEARCH('{${METRIC_NAMESPACE},service,tenant,${dimension}} MetricName="${metricName}" tenant="${tenant.id}"', 'Sum', 300)`,
      label,
      period: Duration.minutes(5),
    });
  const staleVisible = metric(MetricNames.StaleVisible);
  const falseFact = metric(MetricNames.FalseFact);
  const action = new SnsAction(storage.alarmTopic);
  const alarms: Alarm[] = [];
  const alarm = (id: string, props: ConstructorParameters<typeof Alarm>[2]) => {
    const created = new Alarm(stack, id, props);
    created.addAlarmAction(action);
    alarms.push(created);
    return created;
  };
  const blocking = {
    threshold: 0,
    comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 1,
    datapointsToAlarm: 1,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  };
  alarm("StaleVisibleAlarm", {
    ...blocking,
    metric: staleVisible,
    alarmDescription: `memgate ${tenant.id}: a served summary no longer matches its inputs. Turn recall bypass on (PUT /v1/settings {"recallBypass":true}), then memgate recover.`,
  });
  alarm("FalseFactAlarm", {
    ...blocking,
    metric: falseFact,
    alarmDescription: `memgate ${tenant.id}: a served summary holds an unsupported claim. Turn recall bypass on, read the audit's finding, then memgate recover.`,
  });
  alarm("RebuildsLeftAlarm", {
    ...blocking,
    metric: metric(MetricNames.RebuildsLeft, "Maximum"),
    alarmDescription: `memgate ${tenant.id}: a subject's rebuilds were refused or failed at every attempt (four, 15 to 60 minutes apart) and are left for a person; recall serves raw for it. Read the sweep's "left for a person" log and the REJECTED artifacts' reports (memgate artifacts SUBJECT), then memgate recover or fix the model or policy.`,
  });
  alarm("DeadLettersAlarm", {
    ...blocking,
    metric: storage.deadLetters.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5) }),
    alarmDescription: `memgate ${tenant.id}: snapshots failed past their retries (model down, timeouts): read the worker's logs; the sweep requests the rebuilds again.`,
  });
  alarm("WorkerErrorsAlarm", {
    ...blocking,
    metric: functions.worker.metricErrors({ period: Duration.minutes(5) }),
    alarmDescription: `memgate ${tenant.id}: the worker Lambda failed (not a rejected summary: an error). Read its logs.`,
  });
  // A failed (or timed-out) run of the others leaves rebuilds unrequested or the audit unfinished.
  const failedRun = {
    outbox:
      "clock changes of the failed batch may have no rebuild requested (the sweep catches up within five minutes)",
    sweep: "rebuilds the stream missed wait for the next sweep that succeeds",
    audit: "served summaries went unchecked today (its heartbeat alarm follows if no run finishes)",
  } as const;
  for (const [name, consequence] of Object.entries(failedRun))
    alarm(`${capitalised(name)}ErrorsAlarm`, {
      ...blocking,
      metric: functions[name as keyof typeof failedRun].metricErrors({ period: Duration.minutes(5) }),
      alarmDescription: `memgate ${tenant.id}: the ${name} Lambda failed or timed out: ${consequence}. Read its logs.`,
    });
  alarm("ApiServerErrorsAlarm", {
    threshold: 0,
    comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 3,
    datapointsToAlarm: 2,
    treatMissingData: TreatMissingData.NOT_BREACHING,
    metric: stage.metricServerError({ period: Duration.minutes(5), statistic: "Sum" }),
    alarmDescription: `memgate ${tenant.id}: the API answered 5xx in two of the last three 5-minute periods (500: logged by the api Lambda; 503: the table throttled or contended; 502/504: the Lambda failed or timed out). Read the api Lambda's logs.`,
  });
  alarm("AuditHeartbeatAlarm", {
    threshold: 1,
    comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
    evaluationPeriods: AUDIT_HEARTBEAT_HOURS,
    datapointsToAlarm: AUDIT_HEARTBEAT_HOURS,
    // No heartbeat is the finding: an audit that did not run (or never finished) emits nothing.
    treatMissingData: TreatMissingData.BREACHING,
    metric: new Metric({
      namespace: METRIC_NAMESPACE,
      metricName: MetricNames.AuditHeartbeat,
      dimensionsMap,
      statistic: "Sum",
      period: Duration.hours(1),
    }),
    alarmDescription: `memgate ${tenant.id}: no audit finished in ${AUDIT_HEARTBEAT_HOURS} hours, so StaleVisible and FalseFact say nothing. Read the audit Lambda's logs; run \`memgate audit --store aws\` by hand meanwhile.`,
  });
  alarm("QueueAgeAlarm", {
    threshold: QUEUE_AGE_ALARM_SECONDS,
    comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 3,
    datapointsToAlarm: 3,
    treatMissingData: TreatMissingData.NOT_BREACHING,
    metric: storage.queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(5) }),
    alarmDescription: `memgate ${tenant.id}: rebuilds wait over ${QUEUE_AGE_ALARM_SECONDS / 60} minutes; recall serves raw meanwhile. Raise workerConcurrency or check the model.`,
  });
  // enforceSSL gives the topic a policy holding only its TLS deny, which replaces SNS's default
  // one: without this allow, no alarm would ever be delivered. A tenant's own topic
  // (alarmTopicArn) needs the same statement in its policy (README).
  if (storage.alarmTopic instanceof Topic)
    storage.alarmTopic.addToResourcePolicy(
      new PolicyStatement({
        sid: "CloudWatchAlarmsOfThisStack",
        principals: [new ServicePrincipal("cloudwatch.amazonaws.com")],
        actions: ["sns:Publish"],
        resources: [storage.alarmTopic.topicArn],
        conditions: {
          StringEquals: { "aws:SourceAccount": stack.account },
          ArnEquals: { "aws:SourceArn": alarms.map((created) => created.alarmArn) },
        },
      }),
    );

  const dashboard = new Dashboard(stack, "Dashboard", { defaultInterval: Duration.days(1) });
  dashboard.addWidgets(
    new SingleValueWidget({
      title: "Stale visible / false facts (must be 0)",
      metrics: [staleVisible, falseFact],
      width: 8,
    }),
    new GraphWidget({
      title: "Gate rejections by reason",
      left: [byDimension(MetricNames.GateRejected, "reason", "")],
      width: 8,
    }),
    new GraphWidget({ title: "CAS losses", left: [metric(MetricNames.CasLost)], width: 8 }),
  );
  dashboard.addWidgets(
    new GraphWidget({
      title: "Publish latency (ms)",
      left: [metric(MetricNames.PublishLatency, "p50"), metric(MetricNames.PublishLatency, "p99")],
      width: 8,
    }),
    new GraphWidget({
      title: "Recall: summary vs raw",
      left: [byDimension(MetricNames.RecallServed, "mode", "")],
      width: 8,
    }),
    new GraphWidget({
      title: "Rebuilds requested, generation failures, poison messages",
      left: [
        metric(MetricNames.RebuildRequested),
        metric(MetricNames.GenerationFailed),
        metric(MetricNames.PoisonMessage),
      ],
      width: 8,
    }),
  );
  dashboard.addWidgets(
    new GraphWidget({
      title: "Queue age (s) and dead letters",
      left: [storage.queue.metricApproximateAgeOfOldestMessage()],
      right: [storage.deadLetters.metricApproximateNumberOfMessagesVisible()],
      width: 12,
    }),
    new GraphWidget({
      title: "Lambda errors and throttles",
      left: Object.values(functions).map((fn) => fn.metricErrors()),
      right: Object.values(functions).map((fn) => fn.metricThrottles()),
      width: 12,
    }),
  );
}
