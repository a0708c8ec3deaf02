import { extractMentions, type Mention } from "../mentions.ts";
import { isOpenTask } from "../selector.ts";
import { contentWords, sentencesOf } from "../text-support.ts";
import type { CandidateCheck } from "./candidate-check.ts";
import { eventHeldTokens, type HeldTokens, holdMentions, holdsMention, holdValue } from "./context.ts";
import { type GateWarning, shorten } from "./report.ts";
import { holdersOf, mustPreserveSourcesOf, type Source, type SourceIndex } from "./summary-cue-check.ts";

/**
 * Summary prose read phrase by phrase (CONTRACT §4b "Summary prose"): models list facts in one
 * sentence separated by commas ("Alpha: budget 12,500 USD, never vendor X, launch contested"), so
 * a phrase too short to share two words with a source still draws on the one source that alone
 * holds its words. Each finding is a warning (the verdict unchanged) that says what to read: a
 * negation the source carries and the phrase does not (`summary-cue-dropped`), one side of an
 * unresolved conflict named alone (`summary-conflict-settled`), an open task called done
 * (`summary-task-done`), a number or date the sources a phrase draws on do not hold while another
 * input does (`summary-value-moved`). Prose is not checked deterministically beyond this: with a
 * judge configured every summary sentence goes to it as well.
 */
export function checkSummaryMeaning(check: CandidateCheck): void {
  const summary = check.output.summary;
  if (summary.trim() === "") return;
  const sources = mustPreserveSourcesOf(check.context);
  const warn = (code: GateWarning["code"], detail: string) => check.warnings.push({ code, detail });
  for (const phrase of sentencesOf(summary).flatMap((sentence) => sentence.split(PHRASE_END))) {
    const drawn = drawnOn(phrase, sources);
    if (drawn.length === 0) continue;
    const ids = drawn.map((source) => source.event.eventId).join(", ");
    const read = extractMentions(phrase);
    const denied =
      read.cues.negation === 0 ? drawn.filter((source) => namesNegatedValue(phrase, source)) : [];
    if (denied.length > 0)
      warn(
        "summary-cue-dropped",
        `summary "${shorten(phrase.trim())}" names what ${denied.map((source) => source.event.eventId).join(", ")} negates but has no negation cue`,
      );
    if (drawn.every((source) => isOpenTask(source.event)) && DONE.test(phrase) && !STILL_OPEN.test(phrase))
      warn("summary-task-done", `summary "${shorten(phrase.trim())}" calls ${ids} done; it is an open task`);
    const moved = read.mentions.filter(
      (mention) =>
        mention.kind !== "id" &&
        !drawn.some((source) => holdsMention(eventHeldTokens(source.event), mention)) &&
        holdsMention(check.context.held, mention),
    );
    // Moved, not added: the phrase holds none of the numbers and dates its sources write.
    const own = drawn.flatMap((source) =>
      extractMentions(source.event.text ?? "").mentions.filter((mention) => mention.kind !== "id"),
    );
    const phraseHeld = heldBy(read.mentions);
    if (moved.length > 0 && own.length > 0 && !own.some((mention) => holdsMention(phraseHeld, mention)))
      warn(
        "summary-value-moved",
        `summary "${shorten(phrase.trim())}" draws on ${ids} but holds ${moved.map((m) => `"${m.raw}"`).join(", ")} in place of ${drawn.length > 1 ? "their" : "its"} own (another input holds ${moved.length > 1 ? "them" : "it"})`,
      );
  }
  checkConflictsNamed(check, summary);
}

/** The tokens a list of mentions holds, to ask whether a phrase holds a source's mention. */
function heldBy(mentions: readonly Mention[]): HeldTokens {
  const held: HeldTokens = { unitNumbers: new Set(), numbers: new Set(), dates: new Set(), ids: new Set() };
  holdMentions(held, mentions);
  return held;
}

/** Whether a phrase names every word of a value one of the source's negated assertions holds. */
function namesNegatedValue(phrase: string, source: Source): boolean {
  const words = new Set(wordsOf(phrase));
  return (source.event.assertions ?? []).some((assertion) => {
    if (assertion.polarity !== "negated") return false;
    const value = assertion.value;
    const named = "entity" in value ? value.entity : "text" in value ? value.text : null;
    const parts = named === null ? [] : wordsOf(named);
    return parts.length > 0 && parts.every((part) => words.has(part));
  });
}

const wordsOf = (text: string) =>
  text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== "");

/** Phrases of a sentence: listed facts are separated by commas (not 12,500's) and semicolons. */
const PHRASE_END = /[，;；、]|,(?!\d{3})/u;
/** Words calling a task done, and words saying it is still to do ("is still to be sent"). */
const DONE =
  /\b(?:done|completed?|finished|closed|resolved|sent|shipped|delivered|paid|submitted|booked)\b|已完成|完成了|已经|已发送|已提交/iu;
const STILL_OPEN = /\b(?:still|pending|open|not yet|to be|to do|todo|due|outstanding|awaiting)\b|待|未|尚/iu;

/**
 * The must-preserve sources a phrase draws on: those sharing the most content words with it (at
 * least two and half of its own), or, for a phrase whose every content word one source alone holds,
 * that source.
 */
function drawnOn(phrase: string, sources: SourceIndex): Source[] {
  const words = contentWords(phrase);
  if (words.length === 0) return [];
  const shared = new Map<Source, number>();
  const holders = words.map((word) => holdersOf(sources, word));
  for (const list of holders) for (const source of list) shared.set(source, (shared.get(source) ?? 0) + 1);
  let best: Source[] = [];
  let most = 0;
  for (const [source, count] of shared) {
    if (count < 2 || count < 0.5 * words.length || count < most) continue;
    if (count > most) best = [];
    most = count;
    best.push(source);
  }
  if (best.length > 0) return best;
  const only = holders.find((list) => list.length === 1)?.[0];
  return only !== undefined && holders.every((list) => list.includes(only)) ? [only] : [];
}

/**
 * An unresolved conflict the summary names one side of: it holds the value of one position (a
 * number, date or id its value carries) and of no other. Naming both, or neither, says nothing.
 */
function checkConflictsNamed(check: CandidateCheck, summary: string): void {
  const mentions = extractMentions(summary).mentions;
  for (const conflict of check.context.selection.conflicts) {
    const named = conflict.positions.map((position) => {
      const held: HeldTokens = {
        unitNumbers: new Set(),
        numbers: new Set(),
        dates: new Set(),
        ids: new Set(),
      };
      holdValue(held, position.value);
      // A date names its day: the hour and minute a date-time also holds as numbers ("2026-12-15
      // 02:00" holds 2 and 0) are no side of the conflict ("2.0" in a project's name).
      if ("date" in position.value) {
        held.numbers.clear();
        held.unitNumbers.clear();
      }
      const carries = held.numbers.size + held.dates.size + held.unitNumbers.size > 0;
      return carries ? mentions.some((mention: Mention) => holdsMention(held, mention)) : null;
    });
    if (named.includes(true) && named.includes(false))
      check.warnings.push({
        code: "summary-conflict-settled",
        detail: `summary names one side of the unresolved conflict on ${conflict.key} [${conflict.scope}] (${conflict.positions.flatMap((p) => p.holders).join(", ")}) and not the other`,
      });
  }
}
