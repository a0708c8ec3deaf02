import type { GateReport } from "#domain/gate/index.ts";
import { nextRebuildAttempt, type RebuildAttempt } from "#domain/rebuild.ts";
import { Snapshot } from "#domain/schemas.ts";
import { type PublishRefusal, PublishRefusedError, StoreContentionError } from "#ports/errors.ts";
import { GenerationFailedError } from "#ports/model.ts";
import type { Stopwatch } from "#ports/time.ts";
import { describeIssues } from "#runtime/issues.ts";
import type { GenerateDeps, PublishDeps } from "./deps.ts";
import { run } from "./run.ts";

/**
 * What the queue must do with a snapshot message once the worker has tried it: `ack` removes it
 * (done, or nothing a retry could change), `retry` leaves it to come back (and, past the queue's
 * maxReceiveCount, to the dead-letter queue).
 */
export type WorkOutcome =
  | {
      action: "ack";
      status: "PUBLISHED" | "SHADOW" | "REJECTED" | "CANDIDATE";
      subject: string;
      artifactId: string;
      gate: GateReport;
      elapsedMs: number;
      /** Tokens a language model read and wrote for it (absent for the deterministic consolidator). */
      tokens?: { input: number; output: number };
    }
  | { action: "ack"; status: "dropped"; subject: string; detail: string }
  | { action: "ack"; status: "refused"; subject: string; refusal: PublishRefusal; detail: string }
  | { action: "ack"; status: "poison"; subject?: undefined; detail: string }
  | {
      action: "retry";
      status: "generation-failed" | "contention" | "error";
      subject: string;
      detail: string;
      error: unknown;
    };

/**
 * The worker's use case for one queue message: parse it as a snapshot, generate, gate, publish.
 * A dropped snapshot (epoch moved), a REJECTED candidate and a refused publish are final for this
 * snapshot (a fresher one comes): acknowledged. A failed generation, store contention and engine
 * errors may pass: retried. A body that is not a snapshot can never succeed: acknowledged as
 * poison (the caller logs and counts it), never retried forever.
 */
export async function workOnMessage(
  deps: GenerateDeps & PublishDeps,
  body: unknown,
  clock: Stopwatch = () => performance.now(),
): Promise<WorkOutcome> {
  const snapshot = Snapshot.safeParse(typeof body === "string" ? parseJson(body) : body);
  if (!snapshot.success) return { action: "ack", status: "poison", detail: describeIssues(snapshot.error) };
  const started = clock();
  const { subject } = snapshot.data;
  try {
    const outcome = await run(deps, snapshot.data);
    if (outcome.status === "REJECTED" || outcome.status === "SHADOW")
      await rememberAttempt(deps, snapshot.data, outcome.status, outcome.artifactId);
    if (outcome.status === "dropped")
      return { action: "ack", status: "dropped", subject, detail: outcome.reason };
    const generation = "manifest" in outcome ? outcome.manifest.generation : outcome.generation;
    return {
      action: "ack",
      status: outcome.status,
      subject,
      artifactId: outcome.artifactId,
      gate: outcome.gate,
      elapsedMs: clock() - started,
      ...(generation ? { tokens: { input: generation.inputTokens, output: generation.outputTokens } } : {}),
    };
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    if (error instanceof PublishRefusedError)
      return { action: "ack", status: "refused", subject, refusal: error.reason, detail };
    if (error instanceof GenerationFailedError) {
      await rememberAttempt(deps, snapshot.data, "failed");
      return { action: "retry", status: "generation-failed", subject, detail, error };
    }
    if (error instanceof StoreContentionError)
      return { action: "retry", status: "contention", subject, detail, error };
    return { action: "retry", status: "error", subject, detail, error };
  }
}

/**
 * Keeps a rebuild that did not publish on the subject's clock, counted on from the last one at the
 * same epoch and alias: the sweep and the outbox then wait out its backoff, and after the last
 * attempt leave the subject for a person, instead of paying for the same refusal every few minutes.
 */
async function rememberAttempt(
  deps: Pick<GenerateDeps, "events" | "now">,
  snapshot: Snapshot,
  outcome: RebuildAttempt["outcome"],
  artifactId?: string,
): Promise<void> {
  const previous = await deps.events.rebuildAttempt(snapshot.subject);
  await deps.events.recordRebuildAttempt(
    snapshot.subject,
    nextRebuildAttempt(previous, {
      highWater: snapshot.highWater,
      inputEpoch: snapshot.inputEpoch,
      parentArtifactId: snapshot.expectedAlias?.parentArtifactId ?? null,
      outcome,
      ...(artifactId === undefined ? {} : { artifactId }),
      at: deps.now().toISOString(),
    }),
  );
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
