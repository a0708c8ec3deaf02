import type { GateContext } from "../domain/gate.ts";
import type { Snapshot } from "../domain/schemas.ts";

/** The prompt a generation used: its version names it, its hash pins its exact text in the manifest. */
export interface Prompt {
  version: string;
  text: string;
  hash: string;
}

export interface ModelRequest {
  snapshot: Snapshot;
  /** The snapshot's valid inputs, must-preserve set and conflicts (the gate's own index). */
  context: GateContext;
  prompt: Prompt;
  budget?: number;
}

/**
 * A generator of candidate summaries: a model behind an API, the deterministic consolidator, or a
 * test double. It returns text that should parse as a ConsolidationOutput; the gate decides.
 */
export interface ModelPort {
  /** The model snapshot name recorded in the manifest. */
  readonly name: string;
  generate(request: ModelRequest, signal: AbortSignal): Promise<string>;
}

/** The model failed to answer (timeout, error): exit 5, nothing recorded as a candidate. */
export class GenerationFailedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "GenerationFailedError";
  }
}
