import type { GateReason } from "#domain/gate/index.ts";
import { inputRefs, inputRoot, sha256 } from "#domain/hashing.ts";
import type { Claim, SequencedEvent } from "#domain/schemas.ts";
import { countTokens } from "#domain/tokens.ts";
import { GenerationFailedError, type Prompt, type RepairRequest } from "#ports/model.ts";
import type { ModelSettings } from "./one-prompt.ts";
import {
  claimLine,
  eventLine,
  promptTokens,
  REPAIR_REASONS_SHOWN,
  type RenderedPrompt,
  renderSegment,
  renderSummary,
} from "./prompt-render.ts";

/**
 * How a segmented generation sizes its prompts to the model's context (README "Segment sizes",
 * CONTRACT §5 "Sizes"). Every prompt is counted as rendered, and its answer may take what the context
 * leaves after it, at most MEMGATE_MAX_OUTPUT_TOKENS: a prompt fits when that room is at least the
 * answer it needs. A segment that does not fit is split in two until it fits, or until one event
 * alone cannot: then the error names the event and the sizes that would hold it.
 */

/** Tokens each restated event adds to an answer beyond its text (key, derivedFrom, JSON). */
const ANSWER_OVERHEAD = 40;
/** The room an answer needs: its estimate and a third more, so a wordier honest answer is not cut. */
const ANSWER_MARGIN = 4 / 3;
/** The room the summary's answer (one short sentence in JSON) needs, at most MEMGATE_MAX_OUTPUT_TOKENS. */
const SUMMARY_ANSWER_TOKENS = 512;

export interface Segment {
  events: SequencedEvent[];
  /** The input root of its events: what it is cached under, with the prompt's hash and the model. */
  root: string;
}

/** A segment with its prompt, rendered and counted, and the room its answer is given. */
export interface FittedSegment extends Segment {
  rendered: RenderedPrompt;
  /** The most tokens its answer may take (the call's max tokens): what the context leaves, capped. */
  answerTokens: number;
}

/** The gate's reasons a segment's prompt shows (repair), with the attempt they come from. */
export interface SegmentRepair {
  request: RepairRequest;
  reasons: readonly GateReason[];
}

/** The room an answer has after this prompt: the rest of the context, at most the output cap. */
export function answerRoom(settings: ModelSettings, rendered: RenderedPrompt): number {
  return Math.min(settings.maxOutputTokens, settings.contextTokens - promptTokens(rendered));
}

/** The room an honest restatement of these events needs: each event's text and its overhead, and the margin. */
export function answerNeed(events: readonly SequencedEvent[]): number {
  const estimate = events.reduce((sum, event) => sum + countTokens(event.text ?? "") + ANSWER_OVERHEAD, 0);
  return Math.ceil(estimate * ANSWER_MARGIN);
}

/**
 * The segments of a log, each with a prompt that fits the context with room for its answer.
 * Deterministic and content-defined: `cutSegments` draws the boundaries from the events' ids and
 * estimated sizes; a segment whose rendered prompt then does not fit is split in two (`fitSegment`),
 * so a tail append still changes only the last segments.
 */
export function planSegments(
  template: Prompt,
  checklist: ReadonlyMap<string, readonly string[]>,
  events: readonly SequencedEvent[],
  settings: ModelSettings,
): FittedSegment[] {
  // The boundaries are drawn with the answer planned at half of what the template leaves, at most the
  // output cap: where the context is ample that is the cap, and the cuts are the ones always drawn.
  const templateTokens = countTokens(template.text) + 200;
  const answerCap = Math.max(
    1,
    Math.min(settings.maxOutputTokens, Math.floor((settings.contextTokens - templateTokens) / 2)),
  );
  const cut = cutSegments(checklist, events, {
    inputTokens: Math.max(1, settings.contextTokens - answerCap - templateTokens),
    outputTokens: Math.max(1, Math.floor(answerCap * 0.75)),
  });
  return cut.flatMap((segment) => fitSegment(template, checklist, segment.events, settings));
}

/**
 * Cuts the events into segments whose estimated prompts fit `inputTokens` and answers
 * `outputTokens`: an event ends a segment when its id's hash falls under a threshold proportional to
 * its share of a segment, or the segment is full. An event bigger than a segment is one of its own
 * (whether it fits is `fitSegment`'s to say).
 */
function cutSegments(
  checklist: ReadonlyMap<string, readonly string[]>,
  events: readonly SequencedEvent[],
  limits: { inputTokens: number; outputTokens: number },
): Segment[] {
  const segments: Segment[] = [];
  let current: SequencedEvent[] = [];
  let fill = 0;
  const close = () => {
    if (current.length > 0) segments.push(segmentOf(current));
    current = [];
    fill = 0;
  };
  for (const event of events) {
    const input = eventInputTokens(checklist, event);
    const output = countTokens(event.text ?? "") + ANSWER_OVERHEAD;
    const weight = Math.max(input / limits.inputTokens, output / limits.outputTokens);
    if (fill + weight > 1) close();
    current.push(event);
    fill += weight;
    // Expected fill at a content-defined cut is about one half: few cuts are forced by size.
    if (weight >= 1 || hashFraction(event.eventId) < 2 * weight) close();
  }
  close();
  return segments;
}

function eventInputTokens(checklist: ReadonlyMap<string, readonly string[]>, event: SequencedEvent): number {
  return countTokens(eventLine(event)) + countTokens((checklist.get(event.eventId) ?? []).join("\n"));
}

function segmentOf(events: SequencedEvent[]): Segment {
  return { events, root: inputRoot(inputRefs(events)) };
}

function hashFraction(eventId: string): number {
  return Number.parseInt(sha256(eventId).slice(7, 15), 16) / 2 ** 32;
}

/**
 * A segment's events rendered (with the gate's reasons about them, on repair) into prompts that
 * fit: the whole segment when its answer has the room it needs, else each half in turn, each with
 * the reasons about its own events (and those about the whole answer). One event that does not fit
 * with its reasons shows fewer of them; one that does not fit alone is a GenerationFailedError
 * naming it and the context that would hold it.
 */
export function fitSegment(
  template: Prompt,
  checklist: ReadonlyMap<string, readonly string[]>,
  events: readonly SequencedEvent[],
  settings: ModelSettings,
  repair?: SegmentRepair,
): FittedSegment[] {
  const need = answerNeed(events);
  const render = (shown?: number) =>
    renderSegment(
      template,
      checklist,
      events,
      repair && repair.reasons.length > 0
        ? { ...repair, ...(shown === undefined ? {} : { shown }) }
        : undefined,
    );
  const fitted = (rendered: RenderedPrompt): FittedSegment[] | undefined => {
    const room = answerRoom(settings, rendered);
    return room >= need ? [{ ...segmentOf([...events]), rendered, answerTokens: room }] : undefined;
  };
  const whole = render();
  const fits = fitted(whole);
  if (fits) return fits;
  if (events.length > 1) {
    const half = Math.ceil(events.length / 2);
    return [events.slice(0, half), events.slice(half)].flatMap((part) =>
      fitSegment(template, checklist, part, settings, repair && reasonsAbout(repair, part)),
    );
  }
  if (repair && repair.reasons.length > 0)
    for (let shown = Math.min(repair.reasons.length, REPAIR_REASONS_SHOWN) - 1; shown >= 0; shown--) {
      const fewer = fitted(render(shown));
      if (fewer) return fewer;
    }
  throw tooBigError(events[0] as SequencedEvent, whole, need, settings);
}

function reasonsAbout(repair: SegmentRepair, events: readonly SequencedEvent[]): SegmentRepair {
  const ids = new Set(events.map((event) => event.eventId));
  return {
    request: repair.request,
    reasons: repair.reasons.filter((reason) => reason.eventId === null || ids.has(reason.eventId)),
  };
}

/**
 * What an event too big for a segment of its own needs: the context to hold its prompt and its
 * answer's room, the output cap to allow that room, or both (each named with the size that would do).
 */
function tooBigError(
  event: SequencedEvent,
  rendered: RenderedPrompt,
  need: number,
  settings: ModelSettings,
): GenerationFailedError {
  const prompt = promptTokens(rendered);
  const short = [
    ...(prompt + need > settings.contextTokens
      ? [
          `more than the context of ${settings.contextTokens} (MEMGATE_CONTEXT_TOKENS) holds: set it to at least ${prompt + need}`,
        ]
      : []),
    ...(need > settings.maxOutputTokens
      ? [
          `more than the answer cap of ${settings.maxOutputTokens} (MEMGATE_MAX_OUTPUT_TOKENS) allows: set it to at least ${need}`,
        ]
      : []),
  ];
  return new GenerationFailedError(
    `event ${event.eventId} does not fit a segment of its own: its prompt needs ${prompt} tokens and its answer room for ${need}, ${short.join("; and ")}`,
  );
}

/**
 * The summary's prompt: the merged claims, contested first, then in their order, as many as leave
 * its answer the room it needs (the rest named as not shown), counted as rendered with the repair's
 * reasons. A context that cannot hold the template with no claim is a GenerationFailedError.
 */
export function fitSummary(
  template: Prompt,
  claims: readonly Claim[],
  settings: ModelSettings,
  repair?: SegmentRepair,
): { rendered: RenderedPrompt; answerTokens: number } {
  const need = Math.min(settings.maxOutputTokens, SUMMARY_ANSWER_TOKENS);
  const lines = [
    ...claims.filter((claim) => claim.status === "contested"),
    ...claims.filter((claim) => claim.status !== "contested"),
  ].map(claimLine);
  const render = (count: number) =>
    renderSummary(
      template,
      count < lines.length ? [...lines.slice(0, count), "- (more claims are not shown)"] : lines,
      repair,
    );
  const fits = (count: number) => answerRoom(settings, render(count)) >= need;
  // As many lines as their own counts leave room for, then exactly: never more, sometimes fewer.
  const room = settings.contextTokens - need - promptTokens(render(0));
  let high = 0;
  for (let used = 0; high < lines.length; high++) {
    used += countTokens(lines[high] as string) + 1;
    if (used > room) break;
  }
  let low = -1;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (middle >= 0 && fits(middle)) low = middle;
    else high = middle - 1;
  }
  if (low < 0) {
    const rendered = render(0);
    throw new GenerationFailedError(
      `the summary prompt needs ${promptTokens(rendered)} tokens without a claim and its answer room for ${need}, more than the context of ${settings.contextTokens} (MEMGATE_CONTEXT_TOKENS) holds`,
    );
  }
  const rendered = render(low);
  return { rendered, answerTokens: answerRoom(settings, rendered) };
}
