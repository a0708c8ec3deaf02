import type { z } from "zod";
import { uncitedInputs } from "#domain/cold-layer.ts";
import { assertionClaims } from "#domain/consolidator.ts";
import { budgetTokens, type GateContext, type GateReason } from "#domain/gate/index.ts";
import { sha256 } from "#domain/hashing.ts";
import type { Claim, ConsolidationOutput, PendingItem, SequencedEvent } from "#domain/schemas.ts";
import { isOpenTask } from "#domain/selector.ts";
import type {
  Generation,
  LanguageModel,
  ModelCallRecord,
  ModelPort,
  ModelRequest,
  PromptPreview,
  SegmentCache,
} from "#ports/model.ts";
import {
  type ModelAnswerOf,
  modelSchema,
  parseModelAnswer,
  SegmentAnswer,
  SummaryAnswer,
} from "./model-output.ts";
import { ask, type ModelSettings } from "./one-prompt.ts";
import {
  checklistStyle,
  RENDERER_VERSION,
  type RenderedPrompt,
  segmentChecklistByEvent,
} from "./prompt-render.ts";
import { loadPrompt, segmentedTemplates } from "./prompts.ts";
import { type FittedSegment, fitSegment, fitSummary, planSegments } from "./segment-plan.ts";

/**
 * Segmented consolidation (model `segmented:<model>`): a prompt per segment of the log, so any
 * subject fits any context window and a rebuild pays only for what changed.
 *
 * - Assertions and conflicts are restated deterministically (exact by construction); the model
 *   restates the events' texts segment by segment: free-text events as claims, every open task as
 *   a pending item (with assertions or not), and what an event with assertions says beyond them,
 *   which becomes the `text` of its restated assertion (so a window, condition or exception in its
 *   text is not lost); one final call writes the summary prose from the merged claims.
 * - Segment boundaries are content-defined: an event ends a segment when its id's hash falls
 *   under a threshold proportional to its size (or the segment is full), so appending events
 *   changes only the last segment and revoking one changes only its own (and rarely the next).
 *   Every prompt, the summary's too, is counted as rendered and fits the context with room for its
 *   answer (segment-plan.ts): a segment that does not is split.
 * - A segment's answer is kept write-once under (its input root, rendered-prompt hash, model):
 *   a rebuild asks the model only for segments whose inputs changed.
 * - The merged output is one ConsolidationOutput, gated as a whole against the whole snapshot.
 * - Repair re-asks only the segments the gate's reasons point at (and the summary when they
 *   concern it), handing each its own reasons.
 */

/** Segments asked at once. */
const CONCURRENCY = 4;

/**
 * The events a model restates: every valid input but notes and done tasks (they stay cold). An
 * open task always reaches a segment (its pending item is the model's to write); an event with
 * assertions does too, for what its text says beyond them.
 */
export function segmentedEvents(context: GateContext): SequencedEvent[] {
  return context.selection.validInputs.filter(
    (event) => event.kind !== "note" && (event.kind !== "task" || isOpenTask(event)),
  );
}

interface SegmentResult {
  claims: SegmentAnswer["claims"];
  pending: PendingItem[];
  record: ModelCallRecord;
}

/**
 * The templates of one segmented generation, chosen by the request's consolidate template (its
 * version is the setting: `--prompt`, MEMGATE_PROMPT), with the checklist worded as the segment
 * template reads it.
 */
function templatesFor(request: ModelRequest) {
  const { segment, summary } = segmentedTemplates(request.prompt.version);
  const segmentTemplate = loadPrompt(segment);
  return {
    segmentTemplate,
    summaryTemplate: loadPrompt(summary),
    checklist: segmentChecklistByEvent(request.context, checklistStyle(segmentTemplate)),
  };
}

export function segmentedGenerator(model: LanguageModel, settings: ModelSettings): ModelPort {
  const segmentSchema = { name: "SegmentAnswer", zod: SegmentAnswer, json: modelSchema(SegmentAnswer) };
  const summarySchema = { name: "SummaryAnswer", zod: SummaryAnswer, json: modelSchema(SummaryAnswer) };
  const name = `segmented:${model.name}`;

  /** Answers one rendered prompt from the cache, or asks the model and caches what parses. */
  async function answered<T>(
    rendered: RenderedPrompt,
    answerTokens: number,
    kind: "segment" | "summary",
    root: string,
    schema: { name: string; zod: z.ZodType<T>; json: Record<string, unknown> },
    attempt: number,
    cache: SegmentCache | undefined,
    signal: AbortSignal,
  ): Promise<{ parsed: ModelAnswerOf<T>; record: ModelCallRecord }> {
    const key = sha256(`${root}\n${rendered.hash}\n${model.name}`);
    const where = kind === "segment" ? { segment: root } : {};
    const cached = await cache?.read(key);
    if (cached !== undefined)
      return {
        parsed: parseModelAnswer(schema.zod, cached),
        record: {
          kind,
          attempt,
          promptHash: rendered.hash,
          ...where,
          reused: true,
          inputTokens: 0,
          outputTokens: 0,
        },
      };
    const { answer, record } = await ask(
      model,
      { contextTokens: settings.contextTokens, maxOutputTokens: answerTokens },
      kind,
      rendered,
      schema,
      attempt,
      signal,
    );
    const parsed = parseModelAnswer(schema.zod, answer.text);
    // Only an answer that fits its schema is kept: a truncated one is asked again next time.
    if (parsed.ok) await cache?.write(key, answer.text);
    return {
      parsed,
      record: { ...record, ...where, ...(parsed.ok ? {} : { problem: parsed.problem }) },
    };
  }

  return {
    name,
    rendererVersion: RENDERER_VERSION,
    repairs: true,
    preview(request: ModelRequest): PromptPreview[] {
      const { segmentTemplate, checklist } = templatesFor(request);
      // The summary prompt is rendered from the segments' answers, so only they can be shown first.
      return planSegments(segmentTemplate, checklist, segmentedEvents(request.context), settings).map(
        (segment) => ({ kind: "segment", segment: segment.root, ...segment.rendered }),
      );
    },
    async generate(request: ModelRequest, signal: AbortSignal): Promise<Generation> {
      const { context, repair } = request;
      const { segmentTemplate, summaryTemplate, checklist } = templatesFor(request);
      const segments = planSegments(segmentTemplate, checklist, segmentedEvents(context), settings);
      const attempt = repair?.attempt ?? 1;
      const focus = repair ? repairFocus(repair.reasons, segments) : undefined;
      // A segment the reasons point at is rendered again with them, split when they leave it no room.
      const asked = segments.flatMap((segment, index) => {
        const reasons = focus?.bySegment.get(index);
        return repair && reasons
          ? fitSegment(segmentTemplate, checklist, segment.events, settings, { request: repair, reasons })
          : [segment];
      });

      const results = await inPool(asked, CONCURRENCY, async (segment): Promise<SegmentResult> => {
        const { parsed, record } = await answered(
          segment.rendered,
          segment.answerTokens,
          "segment",
          segment.root,
          segmentSchema,
          attempt,
          request.segments,
          signal,
        );
        if (!parsed.ok) return { claims: [], pending: [], record };
        return { claims: parsed.value.claims, pending: parsed.value.pending, record };
      });

      const claims = withRestatements(
        assertionClaims(context),
        results.flatMap((result) => result.claims),
      );
      const pending = results.flatMap((result) => result.pending);
      const summaryRepair =
        repair && focus?.summary ? { request: repair, reasons: focus.summary } : undefined;
      const summaryPrompt = fitSummary(summaryTemplate, claims, settings, summaryRepair);
      const { parsed: summary, record: summaryRecord } = await answered(
        summaryPrompt.rendered,
        summaryPrompt.answerTokens,
        "summary",
        "summary",
        summarySchema,
        attempt,
        request.segments,
        signal,
      );
      const assemble = (kept: readonly Claim[]): ConsolidationOutput => {
        return {
          claims: [...kept],
          pending,
          unresolvedConflicts: context.selection.conflicts.map((conflict) => ({
            key: conflict.key,
            scope: conflict.scope,
            members: conflict.members,
          })),
          coldRefs: uncitedInputs({ claims: kept, pending }, context.selection.validInputs).map(
            (event) => event.eventId,
          ),
          summary: summary.ok ? summary.value.summary : "",
        };
      };
      const output =
        request.budget === undefined
          ? assemble(claims)
          : withinBudget(
              assemble,
              claims,
              request.budget,
              (claim) =>
                // Restatements of events with nothing must-preserve may go cold, newest kept longest.
                "text" in claim.value && claim.derivedFrom.every((id) => !checklist.has(id)),
            );
      return {
        answer: JSON.stringify(output),
        calls: [...results.map((result) => result.record), summaryRecord],
        templates: [segmentTemplate, summaryTemplate].map(({ version, hash }) => ({ version, hash })),
      };
    },
  };
}

/**
 * The assertions restated by code, with the model's restatements: one of exactly one event that has
 * assertions becomes the `text` of the first claim restating that event's assertions (two such
 * restatements joined by a space), so what its text says beyond them stays beside them; any other
 * restatement is a claim of its own with a {text} value.
 */
function withRestatements(structured: readonly Claim[], restatements: SegmentAnswer["claims"]): Claim[] {
  const claims = structured.map((claim) => ({ ...claim }));
  const firstClaimOf = new Map<string, Claim>();
  for (const claim of claims)
    for (const id of claim.derivedFrom) if (!firstClaimOf.has(id)) firstClaimOf.set(id, claim);
  const own: Claim[] = [];
  for (const restatement of restatements) {
    const [only, ...others] = restatement.derivedFrom;
    const target = only !== undefined && others.length === 0 ? firstClaimOf.get(only) : undefined;
    if (target)
      target.text = target.text === undefined ? restatement.text : `${target.text} ${restatement.text}`;
    else
      own.push({
        key: restatement.key,
        scope: "global",
        value: { text: restatement.text },
        polarity: "affirmed",
        status: "settled",
        derivedFrom: restatement.derivedFrom,
      });
  }
  return [...claims, ...own];
}

/**
 * The output within the token budget: claims `droppable` says may go cold are left out, the
 * earliest first, as few as the budget needs (the rest stays; the gate refuses what still does
 * not fit, as it would the deterministic consolidator's answer).
 */
function withinBudget(
  assemble: (claims: readonly Claim[]) => ConsolidationOutput,
  claims: readonly Claim[],
  budget: number,
  droppable: (claim: Claim) => boolean,
): ConsolidationOutput {
  const full = assemble(claims);
  if (budgetTokens(full) <= budget) return full;
  const optional = claims.filter(droppable).reverse();
  const keeping = (count: number) => {
    const kept = new Set(optional.slice(0, count));
    return assemble(claims.filter((claim) => !droppable(claim) || kept.has(claim)));
  };
  let low = 0;
  let high = optional.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (budgetTokens(keeping(middle)) <= budget) low = middle;
    else high = middle - 1;
  }
  return keeping(low);
}

/** Which segments (by index) and whether the summary each of the gate's reasons is about. */
function repairFocus(
  reasons: readonly GateReason[],
  segments: readonly FittedSegment[],
): { bySegment: Map<number, GateReason[]>; summary: GateReason[] | undefined } {
  const segmentOf = new Map<string, number>();
  segments.forEach((segment, index) => {
    for (const event of segment.events) segmentOf.set(event.eventId, index);
  });
  const bySegment = new Map<number, GateReason[]>();
  const summary: GateReason[] = [];
  for (const reason of reasons) {
    if (reason.code === "summary-foreign-token" || reason.code === "summary-unsupported") {
      summary.push(reason);
      continue;
    }
    const index = reason.eventId === null ? undefined : segmentOf.get(reason.eventId);
    if (index !== undefined) bySegment.set(index, [...(bySegment.get(index) ?? []), reason]);
    else if (reason.eventId === null)
      // A reason about the whole answer (its schema) sends every segment back with it.
      segments.forEach((_segment, i) => {
        bySegment.set(i, [...(bySegment.get(i) ?? []), reason]);
      });
  }
  return { bySegment, summary: summary.length > 0 ? summary : undefined };
}

/** Runs `work` over the items, at most `limit` at a time, results in the items' order. */
async function inPool<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
