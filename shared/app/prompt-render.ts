import { type GateContext, type GateReason, type OldDates, wholeEventKeeps } from "#domain/gate/index.ts";
import { canonicalJson, sha256 } from "#domain/hashing.ts";
import {
  CUE_CLASSES,
  CUE_PHRASES,
  type CueClass,
  type CueCounts,
  countCues,
  hasCues,
} from "#domain/mentions.ts";
import { contributesMentions, eventMentions, type MustPreserveItem } from "#domain/must-preserve.ts";
import type { Claim, SequencedEvent } from "#domain/schemas.ts";
import { type ConflictPosition, isOpenTask } from "#domain/selector.ts";
import { countTokens } from "#domain/tokens.ts";
import type { Prompt, RepairRequest } from "#ports/model.ts";

/**
 * The prompt renderer: a versioned template (prompts/<version>.md) filled with a snapshot's data.
 * Rendering is a pure function of the template and the selection: inputs in sequence order, each
 * as RFC 8785 canonical JSON, checklist items in the order of their events, so the same snapshot
 * renders the same bytes however its events were written or batched. The manifest records this
 * renderer's version and the hash of every prompt actually sent.
 */
export const RENDERER_VERSION = "render-v1";

export interface RenderedPrompt {
  system: string;
  prompt: string;
  /** sha256 over the system and user text: what the manifest and the answer caches key on. */
  hash: string;
}

const PROMPT_TOKENS = new WeakMap<RenderedPrompt, number>();

/** The tokens a rendered prompt takes (system and user text, cl100k_base), counted once per prompt. */
export function promptTokens(rendered: RenderedPrompt): number {
  let tokens = PROMPT_TOKENS.get(rendered);
  if (tokens === undefined) {
    tokens = countTokens(rendered.system) + countTokens(rendered.prompt);
    PROMPT_TOKENS.set(rendered, tokens);
  }
  return tokens;
}

export function renderedPrompt(template: Prompt, schemaName: string, prompt: string): RenderedPrompt {
  const system = `memgate ${template.version} (${RENDERER_VERSION}): answer with one JSON object that fits the schema ${schemaName}, and nothing else.`;
  return { system, prompt, hash: sha256(`${system}\n\n${prompt}`) };
}

/** Fills every `{{name}}` of a template; a placeholder without a value is a defect of the template. */
export function fillTemplate(template: Prompt, values: Readonly<Record<string, string>>): string {
  return template.text.replace(/\{\{(\w+)\}\}/g, (_whole, name: string) => {
    const value = values[name];
    if (value === undefined)
      throw new Error(`prompt ${template.version} has {{${name}}}, which the renderer does not fill`);
    return value;
  });
}

/** One input as the model sees it: what it says and where it came from, keys in canonical order. */
export function eventLine(event: SequencedEvent): string {
  return canonicalJson({
    id: event.eventId,
    kind: event.kind,
    trust: event.trust,
    source: event.source,
    ...(event.occurredAt === undefined ? {} : { occurredAt: event.occurredAt }),
    ...(event.text === undefined ? {} : { text: event.text }),
    ...(event.kind === "task" ? { taskStatus: event.taskStatus } : {}),
    ...(event.assertions && event.assertions.length > 0 ? { assertions: event.assertions } : {}),
  });
}

/**
 * How a template's checklist is worded. `classes` (consolidate-v1/v2, segment-v1): cue classes by
 * their grammatical names, as those templates were written and answered (their rendered bytes, and
 * so the hashes recorded answers are filed under, never change). `words` (consolidate-v3, v4,
 * segment-v2): each class named by what its words mean, with the words the source holds ("at-least
 * / more-than words: 2 (超过)"), since models read "lower bound" for 超过 in 不要超过 as an error.
 */
export type ChecklistWording = "classes" | "words";

const WORDED_TEMPLATES = new Set([
  "consolidate-v3",
  "consolidate-v4",
  "consolidate-v5",
  "consolidate-v6",
  "consolidate-v7",
  "consolidate-v8",
  "segment-v2",
]);

/**
 * How a template's checklist is drawn: its wording, and whether it lists the must-preserve set as
 * the gate draws it now (`seedSet`) or as the gate drew it when the template's answers were
 * recorded. Recorded answers replay by the hash of the prompt they answered, so a template's
 * rendered bytes never change: consolidate-v1 … v6 and segment-v1, v2 also list, as they did, every
 * fact or preference carrying any cue word (since issue 38 only a number, date, id or negation makes
 * one must-preserve: `mustRestateText`). A template written after them lists the set as it is.
 */
export interface ChecklistStyle {
  wording: ChecklistWording;
  seedSet: boolean;
  /**
   * Whether a whole event's line names the old date of a change to its asserted date ("from Dec 22
   * to Mon Dec 28"), as the gate asked before issue 38 and every template recorded until then
   * names it; the gate no longer asks for it (CONTRACT §4b).
   */
  oldDates: OldDates;
}

const RECORDED_TEMPLATES = new Set([
  "consolidate-v1",
  "consolidate-v2",
  "consolidate-v3",
  "consolidate-v4",
  "consolidate-v5",
  "consolidate-v6",
  "segment-v1",
  "segment-v2",
]);

export function checklistStyle(template: Prompt): ChecklistStyle {
  return {
    wording: WORDED_TEMPLATES.has(template.version) ? "words" : "classes",
    seedSet: !RECORDED_TEMPLATES.has(template.version),
    oldDates: OLD_DATES_NAMED.has(template.version) ? "kept" : "history",
  };
}

/** The templates recorded while a change's old date was still named (all of them, at issue 38). */
const OLD_DATES_NAMED = new Set([...WORDED_TEMPLATES, "consolidate-v1", "consolidate-v2", "segment-v1"]);

const RECORDED_STYLE: ChecklistStyle = { wording: "classes", seedSet: false, oldDates: "kept" };

/**
 * The must-preserve items a checklist lists: the set, and for a template drawn before the set
 * followed the seed, a text item for every fact or preference whose text carries a cue word.
 */
function checklistItems(context: GateContext, style: ChecklistStyle): MustPreserveItem[] {
  if (style.seedSet) return context.mustPreserve;
  const listed = new Set(
    context.mustPreserve.flatMap((item) => (item.kind === "text" ? [item.eventId] : [])),
  );
  const formerly: MustPreserveItem[] = [];
  for (const event of context.selection.validInputs) {
    if (listed.has(event.eventId) || !contributesMentions(event)) continue;
    const { mentions, negationCues, cues } = eventMentions(event);
    if (hasCues(cues))
      formerly.push({
        kind: "text",
        itemId: `${event.eventId}#text`,
        eventId: event.eventId,
        mentions,
        negationCues,
        cues,
      });
  }
  return formerly.length === 0 ? context.mustPreserve : [...context.mustPreserve, ...formerly];
}

/** The must-preserve items of each event, one line each, in the order the set lists them. */
export function checklistByEvent(
  context: GateContext,
  style: ChecklistStyle = RECORDED_STYLE,
): Map<string, string[]> {
  const { wording, oldDates } = style;
  const byEvent = new Map<string, string[]>();
  for (const item of checklistItems(context, style)) {
    if (item.kind === "conflict") continue;
    const line = checklistLine(item, wording, context.eventsById.get(item.eventId)?.text ?? "");
    const lines = byEvent.get(item.eventId);
    if (lines) lines.push(line);
    else byEvent.set(item.eventId, [line]);
  }
  if (wording === "words")
    for (const event of context.selection.validInputs) {
      const keeps = wholeEventKeepsLine(event, oldDates);
      if (keeps)
        byEvent.get(event.eventId)?.push(`- ${event.eventId}: the text of its claims keeps ${keeps}`);
    }
  return byEvent;
}

/**
 * What the claims of a whole event with assertions must keep in their text beyond the assertions
 * (CONTRACT §4b "Whole-event text"), as the `words` checklist names it; "" when nothing.
 */
function wholeEventKeepsLine(event: SequencedEvent, oldDates: OldDates): string {
  const keeps = wholeEventKeeps(event, oldDates);
  if (!keeps) return "";
  return [
    [...new Set(keeps.mentions.map((mention) => mention.raw))].join(", "),
    keeps.conditions > 0
      ? `${CUE_WORDINGS.condition} ${keeps.conditions} (${cueWordsIn(event.text ?? "", "condition").join(", ")})`
      : "",
  ]
    .filter(Boolean)
    .join("; ");
}

/**
 * The checklist a segment shows: an event with assertions gets one line instead of its assertion
 * lines (the assertions are restated exactly by code, beside the model's answer): a pending item for
 * an open task, otherwise a restatement of what its text says beyond them.
 */
export function segmentChecklistByEvent(
  context: GateContext,
  style: ChecklistStyle = RECORDED_STYLE,
): Map<string, string[]> {
  const { wording } = style;
  const byEvent = checklistByEvent(context, style);
  for (const event of context.selection.validInputs) {
    if (!event.assertions || event.assertions.length === 0) continue;
    byEvent.set(event.eventId, [
      isOpenTask(event)
        ? pendingChecklistLine(event.eventId, wording)
        : wording === "words"
          ? segmentWordsLine(event, style.oldDates)
          : `- ${event.eventId}: its assertions are restated exactly elsewhere: restate what its text says beyond them (a condition, exception, time window, reason, name), keeping their numbers, dates, ids and cue words`,
    ]);
  }
  return byEvent;
}

function segmentWordsLine(event: SequencedEvent, oldDates: OldDates): string {
  const keeps = wholeEventKeepsLine(event, oldDates);
  return keeps
    ? `- ${event.eventId}: its assertions are restated exactly elsewhere: restate what its text adds to them, keeping ${keeps}`
    : `- ${event.eventId}: its assertions are restated exactly elsewhere: restate only what its text adds to them (a condition, exception, time window, reason, name), or nothing when it adds nothing`;
}

/** The checklist of the given events, in their (sequence) order. */
function checklistOf(
  events: readonly SequencedEvent[],
  byEvent: ReadonlyMap<string, readonly string[]>,
): string[] {
  return events.flatMap((event) => byEvent.get(event.eventId) ?? []);
}

function checklistLine(
  item: Exclude<MustPreserveItem, { kind: "conflict" }>,
  wording: ChecklistWording,
  text: string,
): string {
  switch (item.kind) {
    case "assertion":
      return wording === "words"
        ? `- ${item.eventId}: key ${JSON.stringify(item.key)}, scope ${JSON.stringify(item.scope)}, value ${canonicalJson(item.value)}, ${item.polarity}`
        : `- ${item.eventId}: a claim with key ${JSON.stringify(item.key)}, scope ${JSON.stringify(item.scope)}, value ${canonicalJson(item.value)}, polarity ${item.polarity}, derivedFrom [${JSON.stringify(item.eventId)}]`;
    case "pending":
      return pendingChecklistLine(item.eventId, wording);
    case "text": {
      const keep = [...new Set(item.mentions.map((mention) => mention.raw))];
      if (wording === "words") {
        const parts = [
          keep.length > 0 ? keep.join(", ") : "",
          ...CUE_CLASSES.filter((cls) => item.cues[cls] > 0).map(
            (cls) => `${CUE_WORDINGS[cls]} ${item.cues[cls]} (${cueWordsIn(text, cls).join(", ")})`,
          ),
        ].filter(Boolean);
        return `- ${item.eventId}: its restatement keeps ${parts.join("; ")}`;
      }
      const cues = cueWords(item.cues);
      const parts = [
        keep.length > 0 ? `keep ${keep.join(", ")}` : "",
        cues ? `keep the same count of ${cues}` : "",
      ].filter(Boolean);
      return `- ${item.eventId}: restate its text${parts.length > 0 ? `; ${parts.join("; ")}` : ""}`;
    }
    case "event":
      return `- ${item.eventId}: a ${item.eventKind}: some claim derives from it; never in coldRefs`;
  }
}

function pendingChecklistLine(eventId: string, wording: ChecklistWording): string {
  return wording === "words"
    ? `- ${eventId}: an open task: a pending item`
    : `- ${eventId}: an open task: a pending item restating its text, derivedFrom [${JSON.stringify(eventId)}]`;
}

const CUE_NAMES: Record<CueClass, string> = {
  negation: "negations",
  upperBound: "upper bounds",
  lowerBound: "lower bounds",
  strongModality: "strong modal words",
  weakModality: "weak modal words",
  universal: "universal quantifiers",
  existential: "existential quantifiers",
  condition: "conditions and exceptions",
};

function cueWords(cues: CueCounts): string {
  return CUE_CLASSES.filter((cls) => cues[cls] > 0)
    .map((cls) => `${CUE_NAMES[cls]} (${cues[cls]})`)
    .join(", ");
}

/** The cue classes as the `words` checklist names them: by what their words mean. */
const CUE_WORDINGS: Record<CueClass, string> = {
  negation: "negations",
  upperBound: "at-most words",
  lowerBound: "at-least / more-than words",
  strongModality: "must words",
  weakModality: "may words",
  universal: "every words",
  existential: "some words",
  condition: "if / unless words",
};

/**
 * Each cue class and the words that count for it (CONTRACT §4b), one line each: what a `words`
 * template tells the model to keep the count of. Read from the gate's own list.
 */
export function cueWordLines(): string {
  return CUE_CLASSES.map((cls) => {
    const phrases = CUE_PHRASES.filter(([, phraseClass]) => phraseClass === cls).map(([phrase]) => phrase);
    const notCues = CUE_PHRASES.filter(([, phraseClass]) => phraseClass === null).map(([phrase]) => phrase);
    const more =
      cls === "negation" ? `, and any word ending in n't (not counted: ${notCues.join(", ")})` : "";
    return `- ${CUE_WORDINGS[cls]}: ${phrases.join(", ")}${more}`;
  }).join("\n");
}

/**
 * The words of `text` the gate counts in a cue class: each candidate of the class the text holds
 * whose removal lowers the class's count (so 不 inside 不超过 is not a negation, and 超过 inside
 * 不要超过 is an at-least / more-than word). Read from the gate's own counting.
 */
function cueWordsIn(text: string, cls: CueClass): string[] {
  const normal = text.normalize("NFKC");
  const count = countCues(normal)[cls];
  const candidates = [
    ...CUE_PHRASES.filter(([, phraseClass]) => phraseClass === cls).map(([phrase]) => phrase),
    ...(cls === "negation" ? (normal.match(/[\p{L}]+n['’]t\b/giu) ?? []) : []),
  ];
  const patternOf = (phrase: string) =>
    /^[a-z]/i.test(phrase)
      ? new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(phrase)}(?![\\p{L}\\p{N}])`, "giu")
      : new RegExp(escapeRegExp(phrase), "gu");
  const spans = (phrase: string): Array<readonly [number, number]> =>
    [...normal.matchAll(patternOf(phrase))].map(
      (found) => [found.index, found.index + found[0].length] as const,
    );
  const counted = [...new Set(candidates)].filter(
    (phrase) =>
      spans(phrase).length > 0 &&
      countCues(normal.replace(patternOf(phrase), (found) => " ".repeat(found.length)))[cls] < count,
  );
  // A phrase seen only inside a longer counted one (不 in 不要) is that one's part, not a cue of its own.
  return counted.filter((phrase) => {
    const longer = counted
      .filter((other) => other.length > phrase.length && other.includes(phrase))
      .flatMap(spans);
    return spans(phrase).some(([start, end]) => !longer.some(([from, to]) => from <= start && end <= to));
  });
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export function conflictLines(context: GateContext): string[] {
  return context.selection.conflicts.map(
    (conflict) =>
      `- key ${JSON.stringify(conflict.key)}, scope ${JSON.stringify(conflict.scope)}: members ${JSON.stringify(conflict.members)}`,
  );
}

/**
 * Each (key, scope) a `latest` rule covers (selector v3): the reading that holds, and every earlier
 * reading with the asOf a claim restating it must carry (its event's occurredAt day, as written).
 */
export function readingLines(context: GateContext): string[] {
  const position = (p: ConflictPosition) =>
    `${p.polarity === "negated" ? "not " : ""}${canonicalJson(p.value)}`;
  return context.selection.readings.map((readings) => {
    const readAt = context.eventsById.get(readings.latest)?.occurredAt;
    const holds = `${readings.latest} holds ${readings.current.map(position).join(" and ")}${readAt ? ` (read ${readAt})` : ""}`;
    const earlier = readings.earlier.flatMap((p) =>
      p.holders.map((eventId) => {
        const at = context.eventsById.get(eventId)?.occurredAt;
        return `${eventId} ${position(p)} (${at ? `asOf ${JSON.stringify(at.slice(0, 10))}` : "undated: asOf null"})`;
      }),
    );
    return `- key ${JSON.stringify(readings.key)}, scope ${JSON.stringify(readings.scope)}: ${holds}; earlier: ${earlier.length > 0 ? earlier.join(", ") : "none"}`;
  });
}

/** The most reasons a repair prompt shows in full. */
export const REPAIR_REASONS_SHOWN = 40;

/**
 * The gate's reasons as the model is shown them, to fix on its next attempt: the first `limit` in
 * full (a prompt must still fit its context), the rest only counted.
 */
export function repairSection(
  repair: RepairRequest | undefined,
  reasons = repair?.reasons ?? [],
  limit = REPAIR_REASONS_SHOWN,
): string {
  if (!repair) return "";
  const shown = reasons.slice(0, limit);
  const lines = shown.map((reason) => {
    const where = [
      reason.eventId ? `event ${reason.eventId}` : "",
      reason.key ? `key ${JSON.stringify(reason.key)}` : "",
    ]
      .filter(Boolean)
      .join(", ");
    return `- ${reason.code}${where ? ` (${where})` : ""}: ${reason.detail}`;
  });
  if (reasons.length > shown.length)
    lines.push(
      `- and ${reasons.length - shown.length} more reasons of these kinds: check every item the same way`,
    );
  return [
    "",
    `## Your previous answer was refused (this is attempt ${repair.attempt}). Answer again in full, fixing each reason:`,
    ...lines,
    "",
  ].join("\n");
}

/**
 * The one-prompt rendering: every valid input, the whole checklist, the conflicts and the budget.
 * A template takes the placeholders it names: `budget` (v1, v2) and `size` (v3) say the budget each
 * in their template's words, `cueWords` lists the words each cue class counts.
 */
export function renderConsolidation(
  template: Prompt,
  context: GateContext,
  options: { budget?: number | undefined; repair?: RepairRequest | undefined } = {},
): RenderedPrompt {
  const inputs = context.selection.validInputs;
  const style = checklistStyle(template);
  const prompt = fillTemplate(template, {
    validIds: inputs.length > 0 ? inputs.map((event) => event.eventId).join(", ") : "(none)",
    inputs: lines(inputs.map((event) => eventLine(event))),
    checklist: lines(checklistOf(inputs, checklistByEvent(context, style))),
    conflicts: lines(conflictLines(context)),
    // Templates before consolidate-v3 have no {{readings}}: they render as they always did.
    readings: lines(readingLines(context)),
    budget:
      options.budget === undefined
        ? "There is no token budget: keep every input that matters."
        : `The answer must fit ${options.budget} tokens (cl100k_base, coldRefs not counted): when it would not, leave the lowest-value inputs (notes, done tasks) in coldRefs; never drop a checklist item.`,
    size:
      options.budget === undefined
        ? "There is no fixed budget, but the answer is what an agent reads in place of these events every time: aim for at most a third of the inputs' length, as short as these rules allow."
        : `The answer must fit ${options.budget} tokens (cl100k_base, coldRefs not counted): shorten the wording and leave more of what no later step needs cold; never drop a checklist item.`,
    words: wordTargetLine(context, style),
    cueWords: cueWordLines(),
    repair: repairSection(options.repair),
  });
  return renderedPrompt(template, "ConsolidationOutput", prompt);
}

const WORDS = new Intl.Segmenter("und", { granularity: "word" });
function wordCount(text: string): number {
  let count = 0;
  for (const segment of WORDS.segment(text)) if (segment.isWordLike) count++;
  return count;
}

/**
 * `{{words}}` (consolidate-v5): a size in words the model can aim at, from the inputs' own texts.
 * A text-only event the checklist names is restated with its numbers, ids, names and cue words: 0.5
 * of its words; an event whose assertions the checklist names keeps in text only what they leave
 * out: 0.2; any other input 0.1 (most are left cold).
 */
function wordTargetLine(context: GateContext, style: ChecklistStyle): string {
  const named = new Set(
    checklistItems(context, style).flatMap((item) => ("eventId" in item ? [item.eventId] : [])),
  );
  let all = 0;
  let target = 0;
  for (const event of context.selection.validInputs) {
    const words = wordCount(event.text ?? "");
    all += words;
    const share = !named.has(event.eventId) ? 0.1 : (event.assertions ?? []).length === 0 ? 0.5 : 0.2;
    target += share * words;
  }
  return `The inputs' texts hold ${all} words; the texts of your answer (claims' {"text"} values and their \`text\`, pending items, the summary) should hold at most about ${Math.max(15, Math.round(target))} words together.`;
}

/**
 * A segment's rendering: its events, each with its assertions when it has any (those are restated
 * exactly elsewhere; the model restates what the text says beyond them), and their checklist. On
 * repair, the gate's reasons about them, the first `shown` in full (default: as many as any prompt).
 */
export function renderSegment(
  template: Prompt,
  checklist: ReadonlyMap<string, readonly string[]>,
  events: readonly SequencedEvent[],
  repair?: { request: RepairRequest; reasons: readonly GateReason[]; shown?: number },
): RenderedPrompt {
  const prompt = fillTemplate(template, {
    inputs: lines(events.map((event) => eventLine(event))),
    checklist: lines(checklistOf(events, checklist)),
    cueWords: cueWordLines(),
    repair: repair ? repairSection(repair.request, repair.reasons, repair.shown) : "",
  });
  return renderedPrompt(template, "SegmentAnswer", prompt);
}

/** The summary call's rendering: the merged claims, as many as fit `maxTokens` (counted by the caller). */
export function renderSummary(
  template: Prompt,
  claimLines: readonly string[],
  repair?: { request: RepairRequest; reasons: readonly GateReason[] },
): RenderedPrompt {
  const prompt = fillTemplate(template, {
    claims: lines(claimLines),
    repair: repair ? repairSection(repair.request, repair.reasons) : "",
  });
  return renderedPrompt(template, "SummaryAnswer", prompt);
}

export function claimLine(claim: Claim): string {
  const said = "text" in claim.value ? claim.value.text : (claim.text ?? canonicalJson(claim.value));
  const asOf = claim.asOf === undefined ? "" : `, as of ${claim.asOf}`;
  return `- ${claim.key} (${claim.status}${asOf}${claim.polarity === "negated" ? ", negated" : ""}): ${said}`;
}

function lines(items: readonly string[]): string {
  return items.length > 0 ? items.join("\n") : "(none)";
}
