import type { GateContext, GateReason } from "#domain/gate/index.ts";
import type { Snapshot } from "#domain/schemas.ts";

/**
 * The model port: what the use cases ask of a generator of candidate summaries (`ModelPort`) and
 * of a language model behind an API (`LanguageModel`), the records a generation leaves in its
 * manifest, and the one error an adapter raises when the model cannot answer. Invariant: nothing
 * a model answers is trusted; the gate judges every answer, whichever adapter wrote it.
 */

/** The prompt a generation used: its version names it, its hash pins its exact text in the manifest. */
export interface Prompt {
  version: string;
  text: string;
  hash: string;
}

/** What a generator is asked to do again after the gate refused its answer (gate-guided repair). */
export interface RepairRequest {
  /** 2 for the first repair. */
  attempt: number;
  /** The refused answer, as the model wrote it. */
  previous: string;
  /** The gate's reasons, each naming its code, event id and the words or tokens at fault. */
  reasons: readonly GateReason[];
}

/** Write-once storage of segment answers, keyed by (segment input root, rendered-prompt hash, model). */
export interface SegmentCache {
  read(key: string): Promise<string | undefined>;
  write(key: string, answer: string): Promise<void>;
}

export interface ModelRequest {
  snapshot: Snapshot;
  /** The snapshot's valid inputs, must-preserve set and conflicts (the gate's own index). */
  context: GateContext;
  prompt: Prompt;
  budget?: number;
  repair?: RepairRequest;
  /** Where a segmented generator keeps and finds its segments' answers; none: ask every time. */
  segments?: SegmentCache;
}

/** One prompt sent (or answered from the segment cache) during a generation: the manifest lists each. */
export interface ModelCallRecord {
  kind: ModelCallKind;
  attempt: number;
  /** sha256 of the rendered prompt (system and user text): the exact bytes sent. */
  promptHash: string;
  /** The input root of the segment's events (segmented generation only). */
  segment?: string;
  /** Answered from the segment cache: no model call was made. */
  reused: boolean;
  inputTokens: number;
  outputTokens: number;
  /** Why the answer could not be used (it did not fit its schema); the gate sees what it lacks. */
  problem?: string;
}

/** A candidate answer and the calls that produced it. */
export interface Generation {
  answer: string;
  calls: ModelCallRecord[];
  /** The templates rendered, when they are not the request's prompt (segmented generation). */
  templates?: Array<{ version: string; hash: string }>;
}

/**
 * A generator of candidate summaries: a language model behind a rendered prompt (one prompt or
 * segments), the deterministic consolidator, or a test double. Its answer should parse as a
 * ConsolidationOutput; the gate decides.
 */
export interface ModelPort {
  /** The model snapshot name recorded in the manifest. */
  readonly name: string;
  /** The renderer that wrote its prompts (absent for generators that send none). */
  readonly rendererVersion?: string;
  /** Whether asking again with the gate's reasons can change the answer (a language model can). */
  readonly repairs?: boolean;
  generate(request: ModelRequest, signal: AbortSignal): Promise<Generation>;
  /** The prompts a generation would send first, without sending them (`memgate prompt`). */
  preview?(request: ModelRequest): PromptPreview[];
}

/** A rendered prompt as `memgate prompt` shows it. */
export interface PromptPreview {
  kind: ModelCallKind;
  /** The input root of the segment's events (segmented generation). */
  segment?: string;
  system: string;
  prompt: string;
  hash: string;
}

export type ModelCallKind = "consolidate" | "segment" | "summary" | "judge";

/**
 * What a request to a language model asks: a generation's calls (`ModelCallKind`, recorded in
 * manifests), and, in the LoCoMo evaluation, a question answered from what it is given (`answer`)
 * and answers graded against their gold answers (`grade`).
 */
export type LanguageCallKind = ModelCallKind | "answer" | "grade";

/** One request to a language model: a rendered prompt and the JSON Schema its answer must follow. */
export interface ModelCall {
  kind: LanguageCallKind;
  system: string;
  prompt: string;
  /** sha256 of system + prompt, as `renderedPromptHash` computes it. */
  promptHash: string;
  schemaName: string;
  schema: Record<string, unknown>;
  maxOutputTokens: number;
}

export interface ModelAnswer {
  /** The answer as JSON text (a forced tool's input, or the message content). */
  text: string;
  inputTokens: number;
  outputTokens: number;
}

/** A language model behind an API (OpenAI-compatible, Bedrock), or replayed answers. */
export interface LanguageModel {
  readonly name: string;
  complete(call: ModelCall, signal: AbortSignal): Promise<ModelAnswer>;
}

/** The model failed to answer (timeout, error): exit 5, nothing recorded as a candidate. */
export class GenerationFailedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "GenerationFailedError";
  }
}
