import { itemlessRecall, type Recall } from "#app/recall.ts";
import { servedDays } from "#app/recall-index.ts";
import { renderRecallText, showDays } from "#app/recall-text.ts";
import { uncitedInputs } from "#domain/cold-layer.ts";
import type { ConsolidationOutput, SequencedEvent } from "#domain/schemas.ts";
import { countTokens } from "#domain/tokens.ts";

/**
 * What an agent reads, measured the same way on both sides: the raw valid events as a raw recall
 * and a consolidation as the summary recall that would serve it (tail empty), both in the compact
 * text rendering (CONTRACT §5 "Recall as text"), counted with cl100k_base. The ratio served / raw
 * is what consolidation saves an agent's prompt; JSON is counted beside it for reference.
 */
export interface CompressionMeasure {
  rawTokens: number;
  servedTokens: number;
  /** The same two, as canonical-order JSON (the raw events without sequence; the answer without coldRefs). */
  rawJsonTokens: number;
  servedJsonTokens: number;
  /** Valid inputs no claim or pending item derives from: what stays cold. */
  coldInputs: number;
}

/** The recall of the raw valid events (no summary): what an agent reads without consolidation. */
export function rawRecall(validInputs: readonly SequencedEvent[], highWater: number): Recall {
  return {
    ...itemlessRecall({
      mode: "raw",
      reason: "no summary published yet",
      highWater,
      inputEpoch: 0,
      artifactId: null,
      scope: null,
      coldInputs: 0,
    }),
    events: [...validInputs],
  };
}

/** The recall that would serve `body` as a published summary covering every input (tail empty). */
export function summaryRecall(body: ConsolidationOutput, artifactId: string, highWater: number): Recall {
  return {
    ...itemlessRecall({
      mode: "summary",
      reason: `summary ${artifactId} covers through ${highWater}; 0 newer events follow`,
      highWater,
      inputEpoch: 0,
      artifactId,
      scope: null,
      coldInputs: null,
    }),
    claims: body.claims,
    pending: body.pending,
    unresolvedConflicts: body.unresolvedConflicts,
    summary: body.summary,
  };
}

/** Valid inputs that no claim or pending item of `body` derives from (CONTRACT §2: the cold layer). */
export function coldInputCount(body: ConsolidationOutput, validInputs: readonly SequencedEvent[]): number {
  return uncitedInputs(body, validInputs).length;
}

export function measureCompression(
  body: ConsolidationOutput,
  validInputs: readonly SequencedEvent[],
  options: { artifactId: string; highWater: number },
): CompressionMeasure {
  const coldInputs = coldInputCount(body, validInputs);
  // The days the text shows beside claims and tasks, as recall shows a published summary's.
  const byId = new Map(validInputs.map((event) => [event.eventId, event]));
  showDays(
    body,
    servedDays(body, (id) => byId.get(id)),
  );
  const { coldRefs: _cold, ...served } = body;
  return {
    rawTokens: countTokens(renderRecallText(rawRecall(validInputs, options.highWater))),
    servedTokens: countTokens(
      renderRecallText(summaryRecall(body, options.artifactId, options.highWater), { coldInputs }),
    ),
    rawJsonTokens: countTokens(JSON.stringify(validInputs.map(({ sequence: _s, ...event }) => event))),
    servedJsonTokens: countTokens(JSON.stringify(served)),
    coldInputs,
  };
}
