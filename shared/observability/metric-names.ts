/**
 * The metrics memgate emits (CloudWatch embedded metric format), in one place: the Lambdas emit
 * them and the CDK stack alarms on them, both by importing these names, so a renamed metric breaks
 * the build rather than silently orphaning an alarm. Every metric carries the `tenant` dimension.
 */
export const METRIC_NAMESPACE = "memgate";
/** Powertools adds the service as a dimension of every metric: alarms name it too. */
export const SERVICE_NAME = "memgate";

export const MetricNames = {
  /** Served summaries whose inputs no longer match (audit). Alarmed above 0. */
  StaleVisible: "StaleVisible",
  /** Claims of served summaries found unsupported (audit). Alarmed above 0. */
  FalseFact: "FalseFact",
  /** The audit's gate reasons over served summaries, with the `reason` dimension. */
  AuditReason: "AuditReason",
  /**
   * 1 each time an audit pass has checked every subject (the `service` and `tenant` dimensions
   * only). Alarmed when none arrives for a day and an hour, missing data breaching: an audit that
   * did not run, or timed out, emits no StaleVisible or FalseFact either.
   */
  AuditHeartbeat: "AuditHeartbeat",
  /** Candidates the gate refused, with the `reason` dimension (one datapoint per reason code). */
  GateRejected: "GateRejected",
  /** Publishes refused by the compare-and-set (alias or epoch moved, coverage, parent). */
  CasLost: "CasLost",
  /** Milliseconds from the start of a generation to its publish. */
  PublishLatency: "PublishLatency",
  /** Recalls answered, with the `mode` dimension: summary or raw. */
  RecallServed: "RecallServed",
  /** Snapshots sent to the queue because a subject needed a rebuild. */
  RebuildRequested: "RebuildRequested",
  /**
   * Subjects a sweep found needing a rebuild whose attempts are used up at their epoch and alias
   * (every generation refused or failed): left for a person. Alarmed above 0.
   */
  RebuildsLeft: "RebuildsLeft",
  /** Generations that failed (model error, timeout): the message is retried. */
  GenerationFailed: "GenerationFailed",
  /** Tokens sent to (direction input) and received from (direction output) a model, per generation. */
  ModelTokens: "ModelTokens",
  /** Queue messages that were not snapshots: logged, counted and acknowledged. */
  PoisonMessage: "PoisonMessage",
} as const;

export type MetricName = (typeof MetricNames)[keyof typeof MetricNames];

export const MetricDimensions = {
  service: "service",
  tenant: "tenant",
  reason: "reason",
  mode: "mode",
  direction: "direction",
} as const;
