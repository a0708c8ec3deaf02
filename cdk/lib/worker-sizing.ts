/**
 * How long the worker may take for one snapshot message, from the settings that bound it: every
 * attempt (the first answer and each gate-guided repair) is one model call under the generation
 * deadline, followed, when a judge is configured, by the judge's call under the same deadline. The
 * margin covers what is not a model call: reading the log, the S3 writes, the publish.
 */
export const WORKER_MARGIN_SECONDS = 60;

/** Lambda's longest timeout. */
export const LAMBDA_MAX_TIMEOUT_SECONDS = 900;

/** AWS's rule for SQS event sources: the queue's visibility at least six times the function's timeout. */
export const VISIBILITY_PER_TIMEOUT = 6;

/** The deterministic consolidator answers in one attempt (it does not repair). */
const ONE_ATTEMPT_MODELS = new Set(["deterministic-v1"]);

export interface WorkerLoad {
  model: string;
  repairAttempts: number;
  generationTimeoutSeconds: number;
  judge?: string | undefined;
}

/** The worst case of one message, in seconds: attempts × (generation + judge) deadlines + the margin. */
export function workerTimeoutSeconds(load: WorkerLoad): number {
  return attemptsOf(load) * perAttemptSeconds(load) + WORKER_MARGIN_SECONDS;
}

/** The arithmetic behind `workerTimeoutSeconds`, as a person checks it: "3 × (120 s + 120 s) + 60 s". */
export function workerTimeoutFormula(load: WorkerLoad): string {
  const judge = load.judge === undefined ? "" : ` + ${load.generationTimeoutSeconds} s judge`;
  return `${attemptsOf(load)} × (${load.generationTimeoutSeconds} s${judge}) + ${WORKER_MARGIN_SECONDS} s`;
}

function attemptsOf(load: WorkerLoad): number {
  return ONE_ATTEMPT_MODELS.has(load.model) ? 1 : load.repairAttempts;
}

function perAttemptSeconds(load: WorkerLoad): number {
  return load.generationTimeoutSeconds * (load.judge === undefined ? 1 : 2);
}
