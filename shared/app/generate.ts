import {
  type Assessment,
  assessCandidateText,
  compactReport,
  type GateContext,
  type GateReport,
  type RefusedAttempts,
} from "#domain/gate/index.ts";
import { inputRefs, inputRoot } from "#domain/hashing.ts";
import { earlierReadingInputs } from "#domain/readings.ts";
import type { GenerationRecord, Manifest, Snapshot } from "#domain/schemas.ts";
import { SELECTOR_VERSION } from "#domain/selector.ts";
import type { ArtifactRecord } from "#ports/artifact-records.ts";
import { SnapshotRefusedError } from "#ports/errors.ts";
import {
  type Generation,
  GenerationFailedError,
  type ModelCallRecord,
  type ModelRequest,
  type RepairRequest,
  type SegmentCache,
} from "#ports/model.ts";
import { newArtifactId } from "./artifact-id.ts";
import { currentSummary } from "./current-summary.ts";
import type { GenerateDeps } from "./deps.ts";
import { judgeUndecided } from "./judge.ts";
import { buildRecallIndex } from "./recall-index.ts";
import { readInputs, refuseBelowEpoch } from "./snapshot.ts";

/**
 * The generate use case, with gate-guided repair: select the snapshot's inputs, ask the model
 * under a deadline, gate the answer (and put what the gate cannot decide to the judge), ask again
 * with the gate's reasons while it refuses and the model can repair, then write the artifact and
 * record it CANDIDATE or REJECTED. Invariant: nothing generated is readable until it is
 * published, a generation never reads a previous summary, and a model that gives no first answer
 * records nothing (a repair it cannot answer leaves the refusal standing).
 */

export const DEFAULT_REPAIR_ATTEMPTS = 2;

export type GenerateOutcome =
  | { status: "dropped"; reason: string }
  | { status: "CANDIDATE" | "REJECTED"; artifactId: string; manifest: Manifest; gate: GateReport };

/**
 * Generation: drop a snapshot whose epoch already moved (a fresher one comes), refuse one below
 * where its epoch began (CONTRACT §2); select and hash the inputs; ask the model, with a deadline;
 * gate its answer; write artifact and manifest under a new id; record it CANDIDATE or REJECTED
 * with the full gate report. Nothing generated is readable until it is published. Generation
 * never reads a previous summary.
 */
export async function generate(deps: GenerateDeps, snapshot: Snapshot): Promise<GenerateOutcome> {
  const current = await deps.events.snapshot(snapshot.subject);
  if (snapshot.highWater > current.highWater)
    throw new SnapshotRefusedError(
      "beyond-log",
      `the snapshot covers through ${snapshot.highWater}, but the log of ${snapshot.subject} ends at ${current.highWater}`,
    );
  if (current.inputEpoch !== snapshot.inputEpoch)
    return {
      status: "dropped",
      reason: `the epoch moved from ${snapshot.inputEpoch} to ${current.inputEpoch}; a fresher snapshot supersedes this one`,
    };
  refuseBelowEpoch(current, snapshot.highWater, `the snapshot through ${snapshot.highWater}`);
  // The switch would refuse a candidate made against an alias that moved since: drop it before
  // paying for a generation (a fresher snapshot comes with the alias that moved it).
  const expected = snapshot.expectedAlias?.parentArtifactId ?? null;
  const served = current.expectedAlias?.parentArtifactId ?? null;
  if (expected !== served)
    return {
      status: "dropped",
      reason: `the alias moved from ${expected ?? "none"} to ${served ?? "none"}; a fresher snapshot supersedes this one`,
    };
  const built = await currentSummary(deps, snapshot);
  if (built !== null)
    return { status: "dropped", reason: `the published summary ${built.reason}; nothing to consolidate` };
  deps.progress(`selecting the inputs of ${snapshot.subject} through ${snapshot.highWater}`);
  const { context } = await readInputs(
    deps,
    snapshot.subject,
    snapshot.highWater,
    deps.selectorVersion ?? SELECTOR_VERSION,
  );
  const budget = await consolidationBudget(deps);
  const refs = inputRefs(context.selection.validInputs);
  const artifactId = newArtifactId(snapshot.subject, snapshot.highWater, deps.newId());
  deps.progress(
    `${refs.length} valid inputs, ${context.mustPreserve.length} must-preserve items; asking ${deps.model.name}`,
  );

  const { generation, judged, attempts, calls, repairFailure } = await generateWithRepair(
    deps,
    snapshot,
    context,
    budget,
  );
  const answer = generation.answer;
  const report = judged.report;
  const manifest: Manifest = {
    artifactId,
    subject: snapshot.subject,
    newCoversThrough: snapshot.highWater,
    inputEpoch: snapshot.inputEpoch,
    expectedAlias: snapshot.expectedAlias,
    inputIds: refs.map((ref) => ref.eventId),
    inputs: refs,
    inputRoot: inputRoot(refs),
    selectorVersion: context.selection.selectorVersion,
    promptVersion: generation.templates?.map((t) => t.version).join("+") ?? deps.prompt.version,
    promptHash: generation.templates?.map((t) => t.hash).join("+") ?? deps.prompt.hash,
    modelSnapshot: deps.model.name,
    policy: context.selection.policy,
    ...(context.selection.readings.some((r) => r.earlier.length > 0)
      ? { earlierReadings: earlierReadingInputs(context.selection.readings) }
      : {}),
    createdAt: deps.now().toISOString(),
    ...(deps.model.rendererVersion === undefined
      ? {}
      : {
          generation: {
            ...generationRecord(deps.model.rendererVersion, generation, attempts.length + 1, calls),
            ...(repairFailure === undefined ? {} : { repairFailure }),
          },
        }),
  };
  const body = artifactBody(answer);
  // A passing candidate gets its recall index (budget order, cold search) written beside it.
  const recallIndex =
    report.verdict === "pass" && judged.output && judged.checklist
      ? buildRecallIndex(context, judged.output, judged.checklist())
      : undefined;
  await deps.artifacts.writeArtifact(snapshot.subject, artifactId, {
    body,
    manifest,
    report,
    ...(recallIndex === undefined ? {} : { recallIndex }),
    attempts,
  });
  deps.failpoints.hit("after-artifact-write");
  const status = report.verdict === "pass" ? "CANDIDATE" : "REJECTED";
  const record: ArtifactRecord = {
    subject: snapshot.subject,
    artifactId,
    status,
    stale: false,
    coversThrough: snapshot.highWater,
    inputEpoch: snapshot.inputEpoch,
    parentArtifactId: snapshot.expectedAlias?.parentArtifactId ?? null,
    inputRoot: manifest.inputRoot,
    // The record keeps the verdict, counts and first reasons: recording never fails on size.
    gate: compactReport(report),
    createdAt: manifest.createdAt ?? deps.now().toISOString(),
  };
  await deps.artifacts.recordArtifact(record);
  deps.progress(`${artifactId}: ${status} (${report.reasons.length} gate reasons)`);
  return { status, artifactId, manifest, gate: report };
}

/**
 * The summary's token budget for this consolidation: the one given to the process (`--budget`),
 * else the store's setting (`memgate settings --budget`), else the deployment's default (a tenant
 * stack's `budgetTokens`), else none. The one-prompt and the segmented generation both get it.
 */
export async function consolidationBudget(
  deps: Pick<GenerateDeps, "budget" | "defaultBudget" | "settings">,
): Promise<number | undefined> {
  if (deps.budget !== undefined) return deps.budget;
  return (await deps.settings.settings()).budget ?? deps.defaultBudget;
}

/** The stored body: the parsed answer when it is JSON, otherwise the raw text (kept for audit). */
function artifactBody(answer: string): unknown {
  try {
    return JSON.parse(answer);
  } catch {
    return { unparsedModelAnswer: answer };
  }
}

/**
 * Asks the model, gates its answer and, while the gate refuses and the model can repair, asks
 * again with the gate's reasons (at most `repairAttempts` attempts in all). The refused attempts
 * are returned for the artifact's audit trail.
 */
async function generateWithRepair(
  deps: GenerateDeps,
  snapshot: Snapshot,
  context: GateContext,
  budget: number | undefined,
): Promise<{
  generation: Generation;
  judged: Assessment;
  attempts: RefusedAttempts;
  calls: ModelCallRecord[];
  repairFailure?: string;
}> {
  const maxAttempts = deps.model.repairs ? (deps.repairAttempts ?? DEFAULT_REPAIR_ATTEMPTS) : 1;
  const segments: SegmentCache = {
    read: (key) => deps.artifacts.readSegment(snapshot.subject, key),
    write: (key, answer) => deps.artifacts.writeSegment(snapshot.subject, key, answer),
  };
  const attempts: RefusedAttempts = [];
  const calls: ModelCallRecord[] = [];
  let repair: RepairRequest | undefined;
  let refused: { generation: Generation; judged: Assessment } | undefined;
  for (let attempt = 1; ; attempt++) {
    let generation: Generation;
    let judged: Assessment;
    try {
      generation = await askModel(deps, {
        snapshot,
        context,
        prompt: deps.prompt,
        segments,
        ...(budget === undefined ? {} : { budget }),
        ...(repair ? { repair } : {}),
      });
      calls.push(...generation.calls);
      judged = await judgeAttempt(deps, context, generation, attempt, calls, budget);
    } catch (error) {
      // A repair is one more chance: when the model cannot answer it, the refusal stands.
      if (!refused || !(error instanceof GenerationFailedError)) throw error;
      deps.progress(`the repair of attempt ${attempt - 1} failed (${error.message}); the refusal stands`);
      attempts.pop();
      return { ...refused, attempts, calls, repairFailure: error.message };
    }
    if (judged.report.verdict === "pass" || attempt >= maxAttempts)
      return { generation, judged, attempts, calls };
    refused = { generation, judged };
    attempts.push({ answer: artifactBody(generation.answer), report: judged.report });
    deps.progress(
      `attempt ${attempt} refused (${judged.report.reasons.length} gate reasons); asking ${deps.model.name} to repair`,
    );
    repair = { attempt: attempt + 1, previous: generation.answer, reasons: judged.report.reasons };
  }
}

/** The gate's verdict on one attempt, and the judge's on what the gate could not decide (when configured). */
async function judgeAttempt(
  deps: GenerateDeps,
  context: GateContext,
  generation: Generation,
  attempt: number,
  calls: ModelCallRecord[],
  budget: number | undefined,
): Promise<Assessment> {
  // With a judge, every summary sentence is put to it (in the same call as the undecided claims).
  const judged = assessCandidateText(context, generation.answer, {
    ...(budget === undefined ? {} : { budget }),
    ...(deps.judge ? { judgeSummary: true } : {}),
  });
  const { judge } = deps;
  if (!judge || judged.report.verdict !== "pass" || judged.undecided.length === 0) return judged;
  const verdicts = await withDeadline(deps, (signal) => judgeUndecided(context, judged, judge, signal));
  calls.push(...verdicts.calls.map((call) => ({ ...call, attempt })));
  const warnings = [...(judged.report.warnings ?? []), ...verdicts.warnings];
  return {
    ...judged,
    report: {
      ...judged.report,
      ...(verdicts.reasons.length > 0
        ? { verdict: "reject" as const, reasons: [...judged.report.reasons, ...verdicts.reasons] }
        : {}),
      ...(warnings.length > 0 ? { warnings } : {}),
    },
  };
}

function generationRecord(
  rendererVersion: string,
  generation: Generation,
  attempts: number,
  calls: readonly ModelCallRecord[],
): GenerationRecord {
  const segmentCalls = calls.filter((call) => call.kind === "segment" && call.attempt === 1);
  return {
    rendererVersion,
    ...(generation.templates ? { templates: generation.templates } : {}),
    attempts,
    calls: [...calls],
    inputTokens: calls.reduce((sum, call) => sum + call.inputTokens, 0),
    outputTokens: calls.reduce((sum, call) => sum + call.outputTokens, 0),
    ...(segmentCalls.length > 0
      ? {
          segments: { total: segmentCalls.length, reused: segmentCalls.filter((call) => call.reused).length },
        }
      : {}),
  };
}

async function askModel(deps: GenerateDeps, request: ModelRequest): Promise<Generation> {
  if (deps.failpoints.action("generate") === "timeout")
    return withDeadline(deps, () => new Promise(() => {}));
  deps.failpoints.hit("generate");
  return withDeadline(deps, (signal) => deps.model.generate(request, signal));
}

/**
 * Runs a model's work under the generation deadline: its signal aborts at the deadline, and the
 * deadline wins even over work that ignores the signal. Any failure is a GenerationFailedError.
 */
async function withDeadline<T>(deps: GenerateDeps, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(
    () =>
      controller.abort(
        new GenerationFailedError(`${deps.model.name} did not answer within ${deps.generationTimeoutMs} ms`),
      ),
    deps.generationTimeoutMs,
  );
  try {
    // Work that stops at once (between retries) gets a turn first to say what it was waiting out.
    const deadline = new Promise<never>((_resolve, reject) =>
      controller.signal.addEventListener(
        "abort",
        () => setImmediate(() => reject(controller.signal.reason)),
        {
          once: true,
        },
      ),
    );
    const answer = work(controller.signal);
    answer.catch(() => {}); // a late failure after the deadline is not an unhandled rejection
    return await Promise.race([answer, deadline]);
  } catch (error) {
    if (error instanceof GenerationFailedError) throw error;
    throw new GenerationFailedError(
      `${deps.model.name} failed: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  } finally {
    clearTimeout(timer);
  }
}
