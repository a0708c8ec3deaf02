import { z } from "zod";
import {
  buildGateContext,
  compactReport,
  type GateContext,
  type GateReport,
  type Judgement,
  judgeCandidateText,
  type RefusedAttempts,
} from "#domain/gate.ts";
import { inputRefs, inputRoot } from "#domain/hashing.ts";
import { rebuildReason } from "#domain/rebuild.ts";
import type {
  ConsolidationOutput,
  GenerationRecord,
  Manifest,
  MemoryEvent,
  SequencedEvent,
  Snapshot,
  TrustPolicy,
} from "#domain/schemas.ts";
import {
  ConsolidationOutput as ConsolidationOutputSchema,
  MemoryEvent as MemoryEventSchema,
} from "#domain/schemas.ts";
import {
  checkEventLog,
  SELECTOR_VERSION,
  type Selection,
  type SelectorVersion,
  selectInputs,
  selectionDifferences,
} from "#domain/selector.ts";
import { rawBeforeRecord, rawForRecord } from "#domain/serving.ts";
import { StandingResolver } from "#domain/standing-resolver.ts";
import { countTokens } from "#domain/tokens.ts";
import { selectorNamed } from "#domain/validity.ts";
import { InputError } from "#io/event-file.ts";
import {
  NotFoundError,
  PublishRefusedError,
  SnapshotRefusedError,
  StoreContentionError,
} from "#ports/errors.ts";
import type { JudgePort } from "#ports/judge.ts";
import {
  type Generation,
  GenerationFailedError,
  type ModelCallRecord,
  type ModelPort,
  type ModelRequest,
  type Prompt,
  type RepairRequest,
  type SegmentCache,
} from "#ports/model.ts";
import type {
  AliasPort,
  AliasState,
  AppendResult,
  ArtifactRecord,
  ArtifactStore,
  EventLog,
  SettingsPort,
  SnapshotQueue,
} from "#ports/store.ts";
import { shownStatus } from "#ports/store.ts";
import type { TimeSource } from "#ports/time.ts";
import type { Failpoints } from "./failpoints.ts";
import { judgeUndecided } from "./judge.ts";
import { buildRecallIndex, RecallIndex, searchCold } from "./recall-index.ts";

/**
 * The consolidation lifecycle as use cases: append, snapshot, generate, publish, recall,
 * invalidate. The CLI, the local server and the Lambdas call exactly these; each gets its
 * dependencies passed in (stores, model, prompt, clock, ids, failpoints), never from globals.
 */
export interface Deps {
  events: EventLog;
  alias: AliasPort;
  artifacts: ArtifactStore;
  queue: SnapshotQueue;
  settings: SettingsPort;
  model: ModelPort;
  prompt: Prompt;
  now: TimeSource;
  newId: () => string;
  failpoints: Failpoints;
  generationTimeoutMs: number;
  /** Token budget for summaries; none when absent. */
  budget?: number;
  /** Attempts per generation, the first included, when a model that can repair is refused (default 2). */
  repairAttempts?: number;
  /** A model judge for the texts the gate cannot decide; none: the deterministic verdict stands. */
  judge?: JudgePort;
  /** The selector new artifacts are built with (forward recovery may pick v1); default the current one. */
  selectorVersion?: SelectorVersion;
  progress: (line: string) => void;
}

/** What each use case needs, and no more: an append needs no model, a publish no prompt. */
export type StoreDeps = Pick<Deps, "events" | "artifacts" | "queue" | "settings" | "progress">;
export type AppendDeps = StoreDeps & Pick<Deps, "failpoints" | "newId">;
export type GenerateDeps = Pick<
  Deps,
  | "events"
  | "artifacts"
  | "model"
  | "prompt"
  | "now"
  | "newId"
  | "failpoints"
  | "generationTimeoutMs"
  | "budget"
  | "repairAttempts"
  | "judge"
  | "selectorVersion"
  | "progress"
>;
export type PublishDeps = Pick<
  Deps,
  "events" | "alias" | "artifacts" | "settings" | "failpoints" | "progress"
>;

/** The selected inputs of a snapshot and the gate's index over them. */
export interface SnapshotInputs {
  events: SequencedEvent[];
  context: GateContext;
}

/** The events through `highWater` and which of them are valid inputs, under the subject's policy. */
export async function readSelection(
  deps: Pick<Deps, "events">,
  subject: string,
  highWater: number,
  version: SelectorVersion = SELECTOR_VERSION,
): Promise<{ events: SequencedEvent[]; selection: Selection }> {
  const [events, policy] = await Promise.all([
    deps.events.eventsThrough(subject, highWater),
    deps.events.trustPolicy(subject),
  ]);
  return { events, selection: selectInputs(checkEventLog(events), highWater, policy, version) };
}

/** The selection plus the gate's index over it (must-preserve set, conflicts, held tokens). */
export async function readInputs(
  deps: Pick<Deps, "events">,
  subject: string,
  highWater: number,
  version: SelectorVersion = SELECTOR_VERSION,
): Promise<SnapshotInputs> {
  const { events, selection } = await readSelection(deps, subject, highWater, version);
  return { events, context: buildGateContext(selection, events.length) };
}

// ---------------------------------------------------------------- append and invalidation

export interface AppendOutcome extends AppendResult {
  /** Artifacts marked STALE because an input they used stopped being valid. */
  staled: string[];
  rebuildRequested: boolean;
}

/**
 * Appends events; when the epoch moved, marks every artifact whose inputs lost validity STALE and
 * requests a rebuild. Recall stopped serving the old summary already, in the append's transaction
 * (alias epoch != clock epoch): marking is for audit and the artifact listing, not for safety.
 */
export async function appendEvents(
  deps: AppendDeps,
  subject: string,
  batch: readonly unknown[],
): Promise<AppendOutcome> {
  const events: MemoryEvent[] = batch.map((raw) => MemoryEventSchema.parse(raw));
  const result = await deps.events.append(subject, events);
  // Everything below is bookkeeping a later sweep redoes from committed state if we die here.
  deps.failpoints.hit("after-append");
  if (result.validityChanged) return { ...result, ...(await invalidate(deps, subject)) };
  const snapshot = await deps.events.snapshot(subject);
  const { rebuildAfterEvents } = await deps.settings.settings();
  const alias = snapshot.expectedAlias;
  const now = rebuildReason(snapshot, alias, rebuildAfterEvents);
  const before = rebuildReason(
    {
      highWater: snapshot.highWater - result.appended.length,
      inputEpoch: snapshot.inputEpoch - (result.epochMoved ? 1 : 0),
    },
    alias,
    rebuildAfterEvents,
  );
  // Requested once, when this append makes the subject need it (a new conflict, the tail reaching
  // rebuildAfterEvents, the first events); the sweep asks again for anything still not rebuilt.
  if (now === null || before !== null) return { ...result, staled: [], rebuildRequested: false };
  await deps.queue.send(snapshot);
  deps.progress(`rebuild requested for ${subject}: ${now}`);
  return { ...result, staled: [], rebuildRequested: true };
}

/**
 * The sweep: every subject that needs a rebuild by committed state (rebuildReason) gets one
 * requested, and what a dead process left undone (STALE marks after an epoch move) is finished:
 * invalidation is idempotent. Subjects found current are unmarked (DynamoDB's sparse index).
 */
export async function sweep(deps: StoreDeps): Promise<Array<{ subject: string; reason: string }>> {
  const { rebuildAfterEvents } = await deps.settings.settings();
  const requested: Array<{ subject: string; reason: string }> = [];
  for (const subject of await deps.events.subjectsToCheck(rebuildAfterEvents)) {
    const reason = await requestRebuildIfNeeded(deps, subject, rebuildAfterEvents);
    if (reason !== null) requested.push({ subject, reason });
  }
  return requested;
}

/**
 * One subject by its committed state: when it needs a rebuild (rebuildReason) the snapshot is
 * sent (after finishing the STALE marks of an epoch move) and the reason returned; otherwise its
 * check mark is cleared. The sweep and the outbox (DynamoDB Streams) both come here; repeats are
 * harmless, the queue deduplicates on subject:highWater:epoch.
 */
export async function requestRebuildIfNeeded(
  deps: StoreDeps,
  subject: string,
  rebuildAfterEvents: number,
): Promise<string | null> {
  const snapshot = await deps.events.snapshot(subject);
  const alias = snapshot.expectedAlias;
  const reason = rebuildReason(snapshot, alias, rebuildAfterEvents);
  if (reason === null) {
    await deps.events.markChecked(subject, snapshot);
    return null;
  }
  if (alias !== null && alias.sourceEpoch !== snapshot.inputEpoch) await invalidate(deps, subject);
  else await deps.queue.send(snapshot);
  return reason;
}

/** Changes the subject's trust policy (the epoch moves) and marks what it invalidated STALE. */
export async function changeTrustPolicy(deps: StoreDeps, subject: string, policy: TrustPolicy) {
  for (let attempt = 0; attempt < 5; attempt++) {
    const snapshot = await deps.events.snapshot(subject);
    const before = await readSelection(deps, subject, snapshot.highWater);
    const after = selectInputs(before.events, snapshot.highWater, policy);
    // A change that leaves every event's validity as it was moves no epoch: the summary stands.
    const differences = selectionDifferences(before.selection, after);
    const clock = await deps.events.setTrustPolicy(subject, policy, snapshot, differences.length > 0);
    if (clock === null) continue; // an append came between: judge again on the new log
    if (differences.length === 0)
      return { ...clock, policy, epochMoved: false, staled: [], rebuildRequested: false };
    deps.progress(`${subject}: ${differences.join("; ")}`);
    return { ...clock, policy, epochMoved: true, ...(await invalidate(deps, subject)) };
  }
  throw new StoreContentionError(`the log of ${subject} kept changing while its policy was being set`);
}

/** Marks STALE every live artifact that used an input which is no longer valid; requests a rebuild. */
export async function invalidate(
  deps: Pick<Deps, "events" | "artifacts" | "queue" | "progress">,
  subject: string,
): Promise<{ staled: string[]; rebuildRequested: boolean }> {
  const snapshot = await deps.events.snapshot(subject);
  // Each artifact's inputs are judged by the selector that chose them (recovery may use v1).
  const selections = new Map<SelectorVersion, Selection>();
  const selectionFor = async (version: SelectorVersion) => {
    let selection = selections.get(version);
    if (!selection) {
      selection = (await readSelection(deps, subject, snapshot.highWater, version)).selection;
      selections.set(version, selection);
    }
    return selection;
  };
  const staled: string[] = [];
  for (const record of await deps.artifacts.listRecords(subject)) {
    if (record.stale || !["PUBLISHED", "CANDIDATE", "SHADOW"].includes(record.status)) continue;
    // The input list lives in the manifest: one read per live artifact, never an item per input.
    const manifest = await deps.artifacts.readManifest(subject, record.artifactId);
    const selection = await selectionFor(selectorNamed(manifest.selectorVersion));
    const lost = manifest.inputIds.filter((id) => !selection.validIds.has(id));
    if (lost.length === 0) continue;
    if (await deps.artifacts.markStale(subject, record.artifactId, ["PUBLISHED", "CANDIDATE", "SHADOW"])) {
      staled.push(record.artifactId);
      deps.progress(
        `${record.artifactId} is STALE: ${lost.slice(0, 5).join(", ")}${lost.length > 5 ? " ..." : ""} no longer valid`,
      );
    }
  }
  await deps.queue.send(snapshot);
  return { staled, rebuildRequested: true };
}

/** Revokes events (one revocation event naming them all); the epoch moves, what used them goes STALE. */
export async function revokeEvents(
  deps: AppendDeps,
  subject: string,
  eventIds: readonly string[],
  reason?: string,
): Promise<AppendOutcome> {
  return appendEvents(deps, subject, [
    {
      eventId: `rev-${deps.newId()}`,
      kind: "revocation",
      revokes: [...eventIds],
      ...(reason ? { text: reason } : {}),
    },
  ]);
}

// ---------------------------------------------------------------- snapshot

/** The queue message: clock and alias from one consistent read, optionally capped at `through`. */
export async function takeSnapshot(
  deps: Pick<Deps, "events">,
  subject: string,
  through?: number,
): Promise<Snapshot> {
  const snapshot = await deps.events.snapshot(subject);
  if (through === undefined || through === snapshot.highWater) return snapshot;
  if (through > snapshot.highWater)
    throw new InputError(
      `--through ${through} is beyond the log of ${subject}, which ends at ${snapshot.highWater}; a snapshot covers only appended events`,
    );
  if (snapshot.expectedAlias && through < snapshot.expectedAlias.coversThrough)
    throw new SnapshotRefusedError(
      "coverage-decrease",
      `--through ${through} is below the alias's coverage ${snapshot.expectedAlias.coversThrough}; coverage never goes back`,
    );
  return { ...snapshot, highWater: through };
}

// ---------------------------------------------------------------- generate

export const DEFAULT_REPAIR_ATTEMPTS = 2;

export type GenerateOutcome =
  | { status: "dropped"; reason: string }
  | { status: "CANDIDATE" | "REJECTED"; artifactId: string; manifest: Manifest; gate: GateReport };

/** A fresh artifact id: the subject and coverage are readable in it, the suffix makes it new. */
export function newArtifactId(subject: string, highWater: number, suffix: string): string {
  return `summary:${subject}:${String(highWater).padStart(6, "0")}:${suffix}`;
}

/** The subject an artifact id names (`summary:<subject>:<coverage>:<suffix>`). */
export function subjectOfArtifact(artifactId: string): string {
  const match = /^summary:(.+):\d{6,}:[^:]+$/.exec(artifactId);
  if (!match?.[1])
    throw new NotFoundError(
      `"${artifactId}" is not a memgate artifact id (summary:<subject>:<coverage>:<id>)`,
    );
  return match[1];
}

/**
 * Generation: drop a snapshot whose epoch already moved (a fresher one comes); select and hash the
 * inputs; ask the model, with a deadline; gate its answer; write artifact and manifest under a new
 * id; record it CANDIDATE or REJECTED with the full gate report. Nothing generated is readable
 * until it is published. Generation never reads a previous summary.
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
  deps.progress(`selecting the inputs of ${snapshot.subject} through ${snapshot.highWater}`);
  const { context } = await readInputs(
    deps,
    snapshot.subject,
    snapshot.highWater,
    deps.selectorVersion ?? SELECTOR_VERSION,
  );
  const refs = inputRefs(context.selection.validInputs);
  const artifactId = newArtifactId(snapshot.subject, snapshot.highWater, deps.newId());
  deps.progress(
    `${refs.length} valid inputs, ${context.mustPreserve.length} must-preserve items; asking ${deps.model.name}`,
  );

  const { generation, judged, attempts, calls, repairFailure } = await generateWithRepair(
    deps,
    snapshot,
    context,
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
): Promise<{
  generation: Generation;
  judged: Judgement;
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
  let refused: { generation: Generation; judged: Judgement } | undefined;
  for (let attempt = 1; ; attempt++) {
    let generation: Generation;
    let judged: Judgement;
    try {
      generation = await askModel(deps, {
        snapshot,
        context,
        prompt: deps.prompt,
        segments,
        ...(deps.budget === undefined ? {} : { budget: deps.budget }),
        ...(repair ? { repair } : {}),
      });
      calls.push(...generation.calls);
      judged = await judgeAttempt(deps, context, generation, attempt, calls);
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
): Promise<Judgement> {
  const judged = judgeCandidateText(
    context,
    generation.answer,
    deps.budget === undefined ? {} : { budget: deps.budget },
  );
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

// ---------------------------------------------------------------- publish

export type PublishOutcome =
  | { status: "PUBLISHED"; alias: AliasState }
  | { status: "SHADOW"; artifactId: string };

/**
 * The switch: re-check the inputs (every one still valid, its hash unchanged, the clock still at
 * the artifact's epoch), then the single compare-and-set. A lost CAS or a moved epoch is
 * PublishRefusedError and nothing changed; the snapshot is dead, a rebuild takes a new one.
 * In shadow mode a passing candidate becomes SHADOW and waits for review instead.
 */
export async function publish(
  deps: PublishDeps,
  artifactId: string,
  options: { approve?: boolean } = {},
): Promise<PublishOutcome> {
  const subject = subjectOfArtifact(artifactId);
  const record = await deps.artifacts.getRecord(subject, artifactId);
  if (!record) throw new NotFoundError(`no artifact ${artifactId}`);
  const allowed = options.approve ? ["SHADOW", "CANDIDATE"] : ["CANDIDATE"];
  if (record.stale || !allowed.includes(record.status))
    throw new PublishRefusedError(
      "artifact-not-publishable",
      `${artifactId} is ${shownStatus(record)}, not ${allowed.join(" or ")}`,
    );
  const manifest = await deps.artifacts.readManifest(subject, artifactId);
  try {
    return await switchAlias(deps, manifest, options);
  } catch (error) {
    // A dead snapshot: its candidate is never live again, so invalidation stops reading it.
    if (error instanceof PublishRefusedError && error.reason !== "artifact-not-publishable")
      await deps.artifacts.transition(subject, artifactId, ["CANDIDATE", "SHADOW"], "ABANDONED");
    throw error;
  }
}

/** The re-check, then the shadow record or the one compare-and-set. */
async function switchAlias(
  deps: PublishDeps,
  manifest: Manifest,
  options: { approve?: boolean },
): Promise<PublishOutcome> {
  const { subject, artifactId } = manifest;
  await recheckInputs(deps, manifest);
  const settings = await deps.settings.settings();
  if (settings.publishMode === "shadow" && !options.approve) {
    if (!(await deps.artifacts.transition(subject, artifactId, ["CANDIDATE"], "SHADOW")))
      throw new PublishRefusedError("artifact-not-publishable", `${artifactId} stopped being a CANDIDATE`);
    deps.progress(`${artifactId} recorded as SHADOW; review it with memgate review ${subject}`);
    return { status: "SHADOW", artifactId };
  }
  deps.failpoints.hit("before-publish");
  const alias = await deps.alias.publishIfUnchanged({
    subject,
    artifactId,
    expectedAlias: manifest.expectedAlias,
    inputEpoch: manifest.inputEpoch,
    newCoversThrough: manifest.newCoversThrough,
  });
  deps.failpoints.hit("after-publish");
  deps.progress(
    `${artifactId} PUBLISHED: the alias covers ${alias.coversThrough} at epoch ${alias.sourceEpoch}`,
  );
  return { status: "PUBLISHED", alias };
}

/** The validity re-check before the switch: same epoch, same valid inputs, same hashes. */
async function recheckInputs(deps: PublishDeps, manifest: Manifest): Promise<void> {
  const snapshot = await deps.events.snapshot(manifest.subject);
  if (snapshot.inputEpoch !== manifest.inputEpoch)
    throw new PublishRefusedError(
      "epoch-moved",
      `the clock is at epoch ${snapshot.inputEpoch}, ${manifest.artifactId} was built at ${manifest.inputEpoch}`,
    );
  // Re-read every input version and re-derive validity (no gate index is needed here).
  const { selection } = await readSelection(
    deps,
    manifest.subject,
    manifest.newCoversThrough,
    selectorNamed(manifest.selectorVersion),
  );
  const root = inputRoot(inputRefs(selection.validInputs));
  if (root !== manifest.inputRoot)
    throw new PublishRefusedError(
      "epoch-moved",
      `the valid inputs of ${manifest.artifactId} changed (input root ${root} != ${manifest.inputRoot})`,
    );
}

export type RunOutcome =
  | GenerateOutcome
  | {
      status: "PUBLISHED" | "SHADOW";
      artifactId: string;
      alias?: AliasState;
      gate: GateReport;
      /** How the candidate was generated (language models only): calls, tokens, attempts. */
      generation?: GenerationRecord;
    };

/** The worker: generate, then publish a passing candidate (`approve` publishes even in shadow mode). */
export async function run(
  deps: GenerateDeps & PublishDeps,
  snapshot: Snapshot,
  options: { approve?: boolean } = {},
): Promise<RunOutcome> {
  const generated = await generate(deps, snapshot);
  if (generated.status !== "CANDIDATE") return generated;
  const published = await publish(deps, generated.artifactId, options);
  const { artifactId, gate, manifest } = generated;
  const generation = manifest.generation ? { generation: manifest.generation } : {};
  return published.status === "PUBLISHED"
    ? { status: "PUBLISHED", artifactId, alias: published.alias, gate, ...generation }
    : { status: "SHADOW", artifactId, gate, ...generation };
}

// ---------------------------------------------------------------- recall

export interface Recall {
  mode: "summary" | "raw";
  reason: string;
  /** The clock this answer was read at. */
  highWater: number;
  inputEpoch: number;
  artifactId: string | null;
  /** The scope asked for (its items and the global ones are served), null for all. */
  scope: string | null;
  claims: ConsolidationOutput["claims"];
  pending: ConsolidationOutput["pending"];
  unresolvedConflicts: ConsolidationOutput["unresolvedConflicts"];
  summary: string | null;
  /** Valid events after the summary's coverage (summary mode), one page. */
  tail: SequencedEvent[];
  /** Valid events (raw mode), one page. */
  events: SequencedEvent[];
  /** Cold-layer events of the summary matching `query`, best first (first page only). */
  cold: SequencedEvent[];
  /** What the token budget left out of this answer (the tail and raw events continue by cursor). */
  omitted: { claims: number; pending: number; unresolvedConflicts: number; summary: boolean; cold: number };
  /** Pass as `cursor` for the next page of `tail` or `events`; null when this page is the last. */
  nextCursor: string | null;
}

export interface RecallOptions {
  /** At most this many tokens (cl100k_base) in the answer's items and events. */
  budget?: number | undefined;
  /** From `nextCursor`: continue the tail or the raw events after the previous page. */
  cursor?: string | undefined;
  /** Only this scope's items and events, and the global ones. */
  scope?: string | undefined;
  /** Lexical search over the served summary's cold layer. */
  query?: string | undefined;
}

/** At most this many events in one recall answer; `nextCursor` pages on. */
export const RECALL_PAGE_EVENTS = 1000;
/** At most this many cold events matching a query. */
export const RECALL_COLD_MATCHES = 20;

const NOTHING_OMITTED: Recall["omitted"] = {
  claims: 0,
  pending: 0,
  unresolvedConflicts: 0,
  summary: false,
  cold: 0,
};

/** Spends a token budget item by item, in the order the caller offers them. */
class TokenBudget {
  private used = 0;
  constructor(private readonly limit: number | undefined) {}
  /** True (and counted) when the item fits what is left; always true without a budget. */
  take(item: unknown): boolean {
    if (this.limit === undefined) return true;
    const cost = countTokens(typeof item === "string" ? item : JSON.stringify(item));
    if (this.used + cost > this.limit) return false;
    this.used += cost;
    return true;
  }
  get remaining(): number | undefined {
    return this.limit === undefined ? undefined : this.limit - this.used;
  }
}

/** Whether something in `scope` is served to a recall for `wanted` (its scope and the global one). */
function inScope(wanted: string | undefined, scope: string): boolean {
  return wanted === undefined || scope === wanted || scope === "global";
}

/** An event is in a scope when it asserts nothing (it is about the subject) or asserts in it. */
function eventInScope(wanted: string | undefined, event: MemoryEvent): boolean {
  if (wanted === undefined || !event.assertions || event.assertions.length === 0) return true;
  return event.assertions.some((assertion) => inScope(wanted, assertion.scope));
}

/**
 * Serves the summary plus its tail only when the alias's epoch equals the clock's, the artifact is
 * PUBLISHED and the tenant is not in bypass; otherwise the raw valid events and why. Revoked,
 * superseded and untrusted events are never served. Events come a page at a time (never the whole
 * log per call). Under a token budget the first page spends it in this order: claims that keep
 * must-preserve items, pending items, unresolved conflicts, the other claims, the prose summary,
 * the tail, then cold events matching `query`; what did not fit is counted in `omitted`.
 */
export async function recall(
  deps: Pick<Deps, "events" | "artifacts" | "settings">,
  subject: string,
  options: RecallOptions = {},
): Promise<Recall> {
  const after = options.cursor === undefined ? null : decodeCursor(options.cursor);
  const snapshot = await deps.events.snapshot(subject);
  const alias = snapshot.expectedAlias;
  const reason = rawBeforeRecord(await deps.settings.settings(), snapshot);
  const base = {
    highWater: snapshot.highWater,
    inputEpoch: snapshot.inputEpoch,
    scope: options.scope ?? null,
  };
  const budget = new TokenBudget(options.budget);
  const raw = async (why: string): Promise<Recall> => {
    const page = await validPage(deps, snapshot, after ?? 0, budget, options.scope);
    return {
      mode: "raw",
      reason: why,
      ...base,
      artifactId: null,
      claims: [],
      pending: [],
      unresolvedConflicts: [],
      summary: null,
      tail: [],
      events: page.events,
      cold: [],
      omitted: NOTHING_OMITTED,
      nextCursor: page.nextCursor,
    };
  };
  if (reason !== null || !alias) return raw(reason ?? "no summary");
  const record = await deps.artifacts.getRecord(subject, alias.parentArtifactId);
  const unserved = rawForRecord(alias.parentArtifactId, record);
  if (unserved !== null) return raw(unserved);
  let body: ConsolidationOutput;
  try {
    body = ConsolidationOutputSchema.parse(
      await deps.artifacts.readArtifact(subject, alias.parentArtifactId),
    );
  } catch (error) {
    // A missing or damaged body never fails a recall: the raw layer answers, saying why.
    return raw(
      `summary ${alias.parentArtifactId} cannot be read (${error instanceof Error ? error.name : "error"}: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}); raw until it is rebuilt`,
    );
  }
  if (after !== null) {
    const page = await validPage(deps, snapshot, after, budget, options.scope);
    return {
      mode: "summary",
      reason: `summary ${alias.parentArtifactId}: the tail continues`,
      ...base,
      artifactId: alias.parentArtifactId,
      claims: [],
      pending: [],
      unresolvedConflicts: [],
      summary: null,
      tail: page.events,
      events: [],
      cold: [],
      omitted: NOTHING_OMITTED,
      nextCursor: page.nextCursor,
    };
  }
  const index =
    options.budget !== undefined || options.query !== undefined
      ? await readRecallIndex(deps, subject, alias.parentArtifactId)
      : null;
  const served = serveWithin(budget, body, options.scope, new Set(index?.mustPreserveClaims ?? []));
  const page = await validPage(deps, snapshot, alias.coversThrough, budget, options.scope);
  const cold = await coldMatches(deps, snapshot, index, options, budget);
  return {
    mode: "summary",
    reason: `summary ${alias.parentArtifactId} covers through ${alias.coversThrough}; ${page.events.length} newer events follow${page.nextCursor ? " (more with the cursor)" : ""}${options.query !== undefined && index === null ? "; this summary has no search index: query not answered" : ""}`,
    ...base,
    artifactId: alias.parentArtifactId,
    ...served.parts,
    tail: page.events,
    events: [],
    cold: cold.events,
    omitted: { ...served.omitted, cold: cold.omitted },
    nextCursor: page.nextCursor,
  };
}

async function readRecallIndex(
  deps: Pick<Deps, "artifacts">,
  subject: string,
  artifactId: string,
): Promise<RecallIndex | null> {
  try {
    return RecallIndex.parse(await deps.artifacts.readRecallIndex(subject, artifactId));
  } catch (error) {
    // Older artifacts have none; recall then orders claims as written and answers no query.
    if (error instanceof NotFoundError || error instanceof z.ZodError) return null;
    throw error;
  }
}

/** The summary's parts in budget order (see `recall`), restored to the artifact's own order. */
function serveWithin(
  budget: TokenBudget,
  body: ConsolidationOutput,
  scope: string | undefined,
  mustPreserveClaims: ReadonlySet<number>,
) {
  const claims = body.claims
    .map((claim, index) => ({ claim, index }))
    .filter((c) => inScope(scope, c.claim.scope));
  const first = claims.filter((c) => mustPreserveClaims.has(c.index));
  const rest = claims.filter((c) => !mustPreserveClaims.has(c.index));
  const keptFirst = first.filter((c) => budget.take(c.claim));
  const pending = body.pending.filter((item) => budget.take(item));
  const conflicts = body.unresolvedConflicts.filter((c) => inScope(scope, c.scope));
  const keptConflicts = conflicts.filter((conflict) => budget.take(conflict));
  const keptRest = rest.filter((c) => budget.take(c.claim));
  const summary = budget.take(body.summary) ? body.summary : null;
  const kept = [...keptFirst, ...keptRest].sort((a, b) => a.index - b.index).map((c) => c.claim);
  return {
    parts: { claims: kept, pending, unresolvedConflicts: keptConflicts, summary },
    omitted: {
      claims: claims.length - kept.length,
      pending: body.pending.length - pending.length,
      unresolvedConflicts: conflicts.length - keptConflicts.length,
      summary: summary === null,
    },
  };
}

/** Cold events matching the query (from the artifact's index, never a scan), within the budget. */
async function coldMatches(
  deps: Pick<Deps, "events">,
  snapshot: Snapshot,
  index: RecallIndex | null,
  options: RecallOptions,
  budget: TokenBudget,
): Promise<{ events: SequencedEvent[]; omitted: number }> {
  if (index === null || options.query === undefined || options.query.trim() === "")
    return { events: [], omitted: 0 };
  const ids = searchCold(index, options.query, RECALL_COLD_MATCHES);
  if (ids.length === 0) return { events: [], omitted: 0 };
  const stored = await deps.events.eventsById(snapshot.subject, ids);
  const matches = ids
    .map((id) => stored.get(id)?.event)
    .filter((event): event is SequencedEvent => event !== undefined && eventInScope(options.scope, event));
  const events = matches.filter((event) => budget.take(event));
  return { events, omitted: matches.length - events.length };
}

/**
 * The valid events after `after` up to the snapshot's high-water mark, one page: the log is read
 * in store pages, each event judged by the selector's rule from its own actors (never the whole
 * log), until RECALL_PAGE_EVENTS valid events or the token budget.
 */
async function validPage(
  deps: Pick<Deps, "events">,
  snapshot: Snapshot,
  after: number,
  budget: TokenBudget,
  scope: string | undefined,
): Promise<{ events: SequencedEvent[]; nextCursor: string | null }> {
  const { subject, highWater } = snapshot;
  const policy = await deps.events.trustPolicy(subject);
  const resolver = new StandingResolver((ids) => deps.events.eventsById(subject, ids), policy, highWater);
  const events: SequencedEvent[] = [];
  let position = after;
  while (position < highWater) {
    const records = await deps.events.eventsPage(subject, position, highWater, RECALL_PAGE_EVENTS);
    if (records.length === 0) break;
    resolver.remember(records);
    for (const { event } of records) {
      if (eventInScope(scope, event) && (await resolver.isValidInput(event.eventId))) {
        if (events.length >= RECALL_PAGE_EVENTS || !budget.take(event))
          return { events, nextCursor: encodeCursor(position) };
        events.push(event);
      }
      position = event.sequence;
    }
  }
  return { events, nextCursor: null };
}

const Cursor = z.object({ after: z.number().int().nonnegative() });

/** An opaque cursor: the sequence a page ended after. */
function encodeCursor(after: number): string {
  return Buffer.from(JSON.stringify({ after })).toString("base64url");
}

function decodeCursor(cursor: string): number {
  try {
    return Cursor.parse(JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))).after;
  } catch (error) {
    throw new InputError(
      `cursor: "${cursor.slice(0, 40)}" is not a cursor memgate issued; pass nextCursor as it came`,
      { cause: error, field: "cursor" },
    );
  }
}
