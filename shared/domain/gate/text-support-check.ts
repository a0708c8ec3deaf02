import { canonicalDate } from "../dates.ts";
import { isWeekdayKey, weekdayNames } from "../day-forms.ts";
import { eventTime } from "../event-time.ts";
import { CUE_CLASS_NAMES, type CueClass, extractMentions, normalizeForExtraction } from "../mentions.ts";
import type { SequencedEvent } from "../schemas.ts";
import { contentWords, eventWords, IDENTIFIER, sentencesOf, supportOf } from "../text-support.ts";
import { turnedRelations } from "../time-relations.ts";
import type { CandidateCheck } from "./candidate-check.ts";
import { eventHeldTokens, type GateContext, holdsMention } from "./context.ts";
import { shorten } from "./report.ts";

/** Share of a text's content words its own sources must hold, unless the policy says otherwise. */
const DEFAULT_TEXT_SUPPORT = 0.8;
/** Summary sentences below this support are reported as `low-support` warnings. */
const LOW_SUPPORT_WARNING = 0.5;

/**
 * A text the gate let through but could not fully support: a claim or pending text with some
 * content word its sources lack (support below 1), or a summary sentence reported `low-support`.
 */
export interface UndecidedText {
  kind: "claim" | "summary";
  /** Where it stands in the candidate: `claims[3]`, `pending[0]`, `summary`. */
  where: string;
  text: string;
  /** The events it cites (for the summary: every valid input). */
  derivedFrom: readonly string[];
  key: string | null;
  scope: string | null;
  support: number;
}

/**
 * CONTRACT §4b "Text support": every claim's text, `{text}` value and pending text is supported
 * by the events in its own derivedFrom: (a) each number, date and id in it is held by them (an
 * identifier token too), (b) at least `textSupport` of its content words occur among their
 * words; otherwise unsupported-claim naming what is not supported. Summary sentences are scored
 * against all valid inputs: below 0.5 a `low-support` warning, below `summarySupport` (when set)
 * summary-unsupported.
 */
export function checkTextSupport(check: CandidateCheck): void {
  const threshold = check.options.textSupport ?? DEFAULT_TEXT_SUPPORT;
  const texts: Array<{
    where: string;
    text: string;
    derivedFrom: readonly string[];
    key: string | null;
    scope: string | null;
  }> = [];
  check.output.claims.forEach((claim, index) => {
    const value = "text" in claim.value ? claim.value.text : undefined;
    if (value !== undefined)
      texts.push({
        where: `claims[${index}]`,
        text: value,
        derivedFrom: claim.derivedFrom,
        key: claim.key,
        scope: claim.scope,
      });
    if (claim.text !== undefined && claim.text !== value)
      texts.push({
        where: `claims[${index}].text`,
        text: claim.text,
        derivedFrom: claim.derivedFrom,
        key: claim.key,
        scope: claim.scope,
      });
  });
  check.output.pending.forEach((item, index) => {
    texts.push({
      where: `pending[${index}]`,
      text: item.text,
      derivedFrom: item.derivedFrom,
      key: null,
      scope: null,
    });
  });
  for (const { where, text, derivedFrom, key, scope } of texts) {
    const sources = derivedFrom
      .filter((id) => check.context.selection.validIds.has(id))
      .map((id) => check.context.eventsById.get(id) as SequencedEvent);
    if (sources.length === 0) continue; // its citations are refused already
    const foreign = check
      .mentionsIn(text)
      .mentions.filter((mention) => !sources.some((source) => holdsMention(eventHeldTokens(source), mention)))
      .map((mention) => `${mention.kind} "${mention.raw}"`);
    for (const token of identifierTokens(text))
      if (!sources.some((source) => eventHeldTokens(source).ids.has(token) || writtenIn(source, token)))
        foreign.push(`id "${token}"`);
    for (const turned of turnedRelations(
      text,
      sources.map((source) => source.text ?? ""),
    ))
      foreign.push(`"${turned.raw}" placed ${turned.relation === "upTo" ? "up to" : "from"} it`);
    if (foreign.length > 0)
      check.add(
        "unsupported-claim",
        key,
        scope,
        sources[0]?.eventId ?? null,
        `${where} holds ${[...new Set(foreign)].join(", ")}, which its sources (${derivedFrom.join(", ")}) do not hold`,
      );
    if (threshold <= 0) continue;
    const support = supportOf(
      text,
      sources.length === 1 ? supportWords(sources[0] as SequencedEvent) : unionOf(sources.map(supportWords)),
      check.mentionsIn(text).mentions,
    );
    const binding = sources.filter((source) => BINDING_KINDS.has(source.kind));
    const added = binding.length > 0 ? addedCues(check, text, sources) : [];
    if (added.length > 0)
      check.add(
        "value-changed",
        key,
        scope,
        binding[0]?.eventId ?? null,
        `${where} adds ${added.map((cls) => `a ${CUE_CLASS_NAMES[cls]} cue`).join(", ")} that its sources (${derivedFrom.join(", ")}) do not hold`,
      );
    if (binding.length > 0 && support.ratio < 1 && support.ratio >= threshold)
      check.add(
        "unsupported-claim",
        key,
        scope,
        binding[0]?.eventId ?? null,
        `${where} restates a ${binding[0]?.kind} with words none of its sources (${derivedFrom.join(", ")}) holds: ${support.unsupported.slice(0, 8).join(", ")}`,
      );
    else if (support.ratio < threshold)
      check.add(
        "unsupported-claim",
        key,
        scope,
        sources[0]?.eventId ?? null,
        `${where}: ${support.unsupported.length} of its content words are in none of its sources (${derivedFrom.join(", ")}): ${support.unsupported.slice(0, 8).join(", ")} (support ${support.ratio.toFixed(2)}, needed ${threshold})`,
      );
    else if (support.ratio < 1 && foreign.length === 0)
      check.undecided.push({ kind: "claim", where, text, derivedFrom, key, scope, support: support.ratio });
  }
  checkSummarySupport(check);
}

/** Kinds whose restatement binds an agent: a word added to one widens or narrows what it allows. */
export const BINDING_KINDS: ReadonlySet<string> = new Set(["constraint", "permission"]);

/**
 * Cue classes a restatement of a constraint or permission adds (CONTRACT §4b "Binding texts"): a
 * negation, bound, condition or weak modality none of its sources' texts (nor a negated assertion,
 * for a negation) holds. A strong modality is added only where no source is a constraint or holds
 * a negation: "must not" restates "never", "must" restates a rule.
 */
function addedCues(check: CandidateCheck, text: string, sources: readonly SequencedEvent[]): CueClass[] {
  const cues = check.mentionsIn(text).cues;
  const held = (cls: CueClass) =>
    sources.some(
      (source) =>
        extractMentions(source.text ?? "").cues[cls] > 0 ||
        (cls === "negation" && (source.assertions ?? []).some((a) => a.polarity === "negated")),
    );
  return ADDED_CLASSES.filter((cls) => {
    if (cues[cls] === 0 || held(cls)) return false;
    if (cls !== "strongModality") return true;
    return !sources.some((source) => source.kind === "constraint") && !held("negation");
  });
}

const ADDED_CLASSES: readonly CueClass[] = [
  "negation",
  "upperBound",
  "lowerBound",
  "condition",
  "weakModality",
  "strongModality",
];

/** Each summary sentence against the words of every valid input (warnings, or refusals when asked). */
function checkSummarySupport(check: CandidateCheck): void {
  const sentences = sentencesOf(check.output.summary);
  if (sentences.length === 0) return;
  const words = inputWordsOf(check.context);
  const required = check.options.summarySupport ?? 0;
  for (const sentence of sentences) {
    const support = supportOf(sentence, words);
    const detail = `summary sentence "${shorten(sentence)}" has support ${support.ratio.toFixed(2)}: ${support.unsupported.slice(0, 8).join(", ")} in no valid input`;
    if (required > 0 && support.ratio < required) check.add("summary-unsupported", null, null, null, detail);
    else if (support.ratio < LOW_SUPPORT_WARNING) {
      check.warnings.push({ code: "low-support", detail });
      check.undecided.push({
        kind: "summary",
        where: "summary",
        text: sentence,
        derivedFrom: check.context.selection.validInputs.map((event) => event.eventId),
        key: null,
        scope: null,
        support: support.ratio,
      });
    }
  }
}

/** Whether an event writes `token` anywhere: its text, eventId, source, keys, scopes or values. */
function writtenIn(event: SequencedEvent, token: string): boolean {
  if ((event.text ?? "").includes(token) || event.eventId === token || event.source?.includes(token))
    return true;
  return (event.assertions ?? []).some(
    (assertion) =>
      assertion.key.includes(token) ||
      assertion.scope.includes(token) ||
      JSON.stringify(assertion.value).includes(token),
  );
}

const inputWords = new WeakMap<GateContext, Set<string>>();
/** The words of every valid input of a snapshot, built once per context (summary support). */
function inputWordsOf(context: GateContext): Set<string> {
  let words = inputWords.get(context);
  if (!words) {
    words = unionOf(context.selection.validInputs.map(supportWords));
    inputWords.set(context, words);
  }
  return words;
}

const timedWords = new WeakMap<SequencedEvent, ReadonlySet<string>>();
/**
 * What an event offers as word support: its words (`eventWords`) and the names of the weekdays it
 * holds by when it happened (CONTRACT §4b "Relative time": "on Thursday" for "yesterday" said on a
 * Friday), which its text need not write. Cached per event object.
 */
function supportWords(event: SequencedEvent): ReadonlySet<string> {
  let words = timedWords.get(event);
  if (words === undefined) {
    const weekdays = eventTime(event).dates.filter(isWeekdayKey);
    words =
      weekdays.length === 0
        ? eventWords(event)
        : new Set([...eventWords(event), ...weekdays.flatMap(weekdayWords)]);
    timedWords.set(event, words);
  }
  return words;
}

const weekdayWordCache = new Map<string, readonly string[]>();
/** A weekday key's names as content words (reduced as a claim's words are). */
function weekdayWords(key: string): readonly string[] {
  let words = weekdayWordCache.get(key);
  if (words === undefined) {
    words = contentWords(weekdayNames(Number(key.slice(key.indexOf(":") + 1))).join(" "));
    weekdayWordCache.set(key, words);
  }
  return words;
}

function unionOf(sets: ReadonlyArray<ReadonlySet<string>>): Set<string> {
  const union = new Set<string>();
  for (const set of sets) for (const item of set) union.add(item);
  return union;
}

/**
 * The identifier tokens of a text as the extractor reads it, trailing punctuation dropped; an ISO
 * date-time (`2023-01-20T16:04:00Z`: letters, digits and colons) is a date, checked as one.
 */
function identifierTokens(text: string): string[] {
  return [...normalizeForExtraction(text).matchAll(IDENTIFIER)]
    .map((match) => match[0].replace(/[.,;:]+$/u, ""))
    .filter((token) => canonicalDate(token) === null);
}
