import { CUE_CLASS_NAMES, CUE_CLASSES, type CueClass, extractMentions } from "../mentions.ts";
import {
  contributesMentions,
  eventMentions,
  isMustPreserveAssertion,
  isWholeEvent,
} from "../must-preserve.ts";
import type { SequencedEvent } from "../schemas.ts";
import { isOpenTask } from "../selector.ts";
import { contentWords, lookupUnits, sentencesOf, supportingWordsOf } from "../text-support.ts";
import type { CandidateCheck } from "./candidate-check.ts";
import type { GateContext } from "./context.ts";
import { shorten } from "./report.ts";

/**
 * Summary prose against the must-preserve sources it draws on (CONTRACT §4b "Summary prose"): a
 * summary clause that restates such a source but carries none of a cue class the source carries
 * ("deploying on Fridays" for "Never deploy on Fridays") is a `summary-cue-dropped` warning and
 * goes to the judge. With a judge configured (`judgeSummary`), every summary sentence goes to it.
 */

/** A clause draws on a source sharing at least this many content words, and this share of its own. */
const MIN_SHARED_WORDS = 2;
const MIN_SHARED_SHARE = 0.5;

export function checkSummaryProse(check: CandidateCheck): void {
  const sentences = sentencesOf(check.output.summary);
  const sources = mustPreserveSourcesOf(check.context);
  const undecided = new Set(check.undecided.filter((t) => t.kind === "summary").map((t) => t.text));
  for (const sentence of sentences) {
    for (const clause of sentence.split(CLAUSE_END)) {
      const dropped = droppedCues(clause, sources);
      if (dropped === null) continue;
      check.warnings.push({
        code: "summary-cue-dropped",
        detail: `summary "${shorten(clause.trim())}" draws on ${dropped.eventIds.join(", ")} but has no ${dropped.classes.map((cls) => CUE_CLASS_NAMES[cls]).join(", ")} cue, which ${dropped.eventIds.length > 1 ? "they carry" : "it carries"}`,
      });
      if (!undecided.has(sentence)) {
        undecided.add(sentence);
        check.undecided.push(summaryItem(sentence, dropped.eventIds));
      }
    }
    if (check.options.judgeSummary && !undecided.has(sentence)) {
      undecided.add(sentence);
      check.undecided.push(
        summaryItem(
          sentence,
          check.context.selection.validInputs.map((event) => event.eventId),
        ),
      );
    }
  }
}

/** Clauses of a summary sentence: models list many facts in one sentence, split by semicolons. */
const CLAUSE_END = /[;；]/u;

function summaryItem(text: string, derivedFrom: readonly string[]) {
  return {
    kind: "summary" as const,
    where: "summary",
    text,
    derivedFrom,
    key: null,
    scope: null,
    support: 1,
  };
}

export interface Source {
  event: SequencedEvent;
  words: ReadonlySet<string>;
  classes: readonly CueClass[];
}

/**
 * The cue classes a clause drops from the sources it draws on most (those sharing the most content
 * words with it, at least two and half of its own), or null: a class counts as dropped only when
 * every such source carries it and the clause carries none of it.
 */
function droppedCues(
  clause: string,
  sources: SourceIndex,
): { eventIds: string[]; classes: CueClass[] } | null {
  const words = contentWords(clause);
  if (words.length < MIN_SHARED_WORDS) return null;
  // Shared words per source through the word index: never a scan of every source per clause. A
  // Han word is shared by the sources writing all its units (however their text was segmented).
  const shared = new Map<Source, number>();
  for (const word of words)
    for (const source of holdersOf(sources, word)) shared.set(source, (shared.get(source) ?? 0) + 1);
  let best: Source[] = [];
  let most = 0;
  for (const [source, count] of shared) {
    if (count < MIN_SHARED_WORDS || count < MIN_SHARED_SHARE * words.length || count < most) continue;
    if (count > most) best = [];
    most = count;
    best.push(source);
  }
  best.sort((a, b) => a.event.sequence - b.event.sequence);
  if (best.length === 0) return null;
  const { cues } = extractMentions(clause);
  const classes = CUE_CLASSES.filter(
    (cls) => cues[cls] === 0 && best.every((source) => source.classes.includes(cls)),
  );
  return classes.length === 0 ? null : { eventIds: best.map((source) => source.event.eventId), classes };
}

/** The sources holding every unit of a word (`lookupUnits`), each once. */
export function holdersOf(sources: SourceIndex, word: string): readonly Source[] {
  const [first, ...rest] = lookupUnits(word);
  const holders = sources.get(first as string) ?? [];
  if (rest.length === 0 || holders.length === 0) return holders;
  const others = rest.map((unit) => new Set(sources.get(unit) ?? []));
  return holders.filter((source) => others.every((set) => set.has(source)));
}

/** The must-preserve sources, by each of their content words (and Han units). */
export type SourceIndex = Map<string, Source[]>;

const sourcesByContext = new WeakMap<GateContext, SourceIndex>();
/** The valid inputs holding something must-preserve, indexed by their content words. */
export function mustPreserveSourcesOf(context: GateContext): SourceIndex {
  let index = sourcesByContext.get(context);
  if (!index) {
    const sources: Source[] = context.selection.validInputs
      .filter(
        (event) =>
          isWholeEvent(event) ||
          isOpenTask(event) ||
          contributesMentions(event) ||
          (event.assertions ?? []).some((assertion) => isMustPreserveAssertion(event, assertion)),
      )
      .map((event) => {
        const { cues } = eventMentions(event);
        return {
          event,
          words: new Set(supportingWordsOf(event.text ?? "")),
          classes: CUE_CLASSES.filter((cls) => cues[cls] > 0),
        };
      });
    // Sources without cues too: a clause restating one of them best drops nothing.
    index = new Map();
    for (const source of sources)
      for (const word of source.words) {
        const list = index.get(word);
        if (list) list.push(source);
        else index.set(word, [source]);
      }
    sourcesByContext.set(context, index);
  }
  return index;
}
