import type { SequencedEvent } from "#domain/schemas.ts";
import type { ModelCallRecord } from "./model.ts";

/**
 * The judge port: is this text supported by these events? A language model answers for what the
 * deterministic rules cannot decide (a claim text whose sources lack some of its words, a summary
 * sentence with low support). `unsupported` refuses the candidate with the gate's own codes; an
 * `unclear` verdict is reported, never a refusal on its own. Invariant: a judge only adds reasons
 * to a verdict the gate already reached; it never turns a refusal into a pass.
 */
export type Verdict = "supported" | "unsupported" | "unclear";

export interface JudgeItem {
  id: string;
  text: string;
  events: readonly SequencedEvent[];
}

export interface JudgePort {
  readonly name: string;
  judge(
    items: readonly JudgeItem[],
    signal: AbortSignal,
  ): Promise<{ verdicts: Map<string, { verdict: Verdict; reason: string }>; calls: ModelCallRecord[] }>;
}
