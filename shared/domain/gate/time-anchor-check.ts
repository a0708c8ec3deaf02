import type { CandidateCheck } from "./candidate-check.ts";
import { shorten } from "./report.ts";

/**
 * A time word's anchor named anew (CONTRACT §4b "Time anchors"): a source bounds something by a
 * word that points back ("don't ship either scheme before then", "only after that"), and a text
 * citing it bounds by the same word with a named anchor instead ("before decision"). Which moment
 * "then" was is in the conversation, not in the words: honest restatements name it too, and may
 * name it wrongly ("then" was a dated review, not the decision; a real answer to support-bot
 * honestly wrote "after the full refund window" for "after that"). So it is never refused: each
 * such text is a `time-anchor-renamed` warning, and a text for the judge to weigh when one is set.
 */
export function checkTimeAnchors(check: CandidateCheck): void {
  const texts = [
    ...check.output.claims.flatMap((claim, index) =>
      [claim.text, "text" in claim.value ? claim.value.text : undefined].map((text) => ({
        where: `claims[${index}]`,
        text,
        derivedFrom: claim.derivedFrom,
        key: claim.key,
        scope: claim.scope,
      })),
    ),
    ...check.output.pending.map((item, index) => ({
      where: `pending[${index}]`,
      text: item.text,
      derivedFrom: item.derivedFrom,
      key: null,
      scope: null,
    })),
  ];
  const undecided = new Set(check.undecided.map((item) => item.where));
  const warned = new Set<string>();
  // Each cited event's anchors, read once however many texts cite it.
  const anchorsById = new Map<string, Anchor[]>();
  const sourceAnchors = (id: string) => {
    let found = anchorsById.get(id);
    if (found === undefined) {
      found = anchorsOf(check.context.eventsById.get(id)?.text ?? "");
      anchorsById.set(id, found);
    }
    return found;
  };
  for (const { where, text, derivedFrom, key, scope } of texts) {
    if (text === undefined || warned.has(where) || !BOUND.test(text)) continue;
    const own = anchorsOf(text);
    const named = own.filter((anchor) => !POINTING.has(anchor.word));
    if (named.length === 0) continue;
    for (const id of derivedFrom) {
      const written = sourceAnchors(id);
      const pointing = written.filter((anchor) => POINTING.has(anchor.word));
      // Renamed: the source points back with this bound word, and names no such anchor itself
      // ("90 days after delivery" beside "after that" holds "after delivery").
      const renamed = named.find(
        (anchor) =>
          pointing.some((back) => back.bound === anchor.bound) &&
          !written.some((kept) => kept.bound === anchor.bound && kept.word === anchor.word) &&
          !own.some((kept) => kept.bound === anchor.bound && POINTING.has(kept.word)),
      );
      const back = renamed && pointing.find((anchor) => anchor.bound === renamed.bound);
      if (!renamed || !back) continue;
      warned.add(where);
      check.warnings.push({
        code: "time-anchor-renamed",
        detail: `${where} "${shorten(text)}" writes "${renamed.bound} ${renamed.word}" where ${id} writes "${back.bound} ${back.word}": is that the moment ${id} meant?`,
      });
      if (!undecided.has(where)) {
        undecided.add(where);
        check.undecided.push({ kind: "claim", where, text, derivedFrom, key, scope, support: 1 });
      }
      break;
    }
  }
}

/** The words that bound something in time (the `timeBound` cues of §4b that take an anchor). */
const BOUND_WORDS = ["before", "after", "until", "till", "since", "by"] as const;
const BOUND = new RegExp(`\\b(?:${BOUND_WORDS.join("|")})\\b`, "iu");
/** A bound word and the word after it: "before then", "until decision", "by 2026-12-05". */
const ANCHORED = new RegExp(`\\b(${BOUND_WORDS.join("|")})\\s+([\\p{L}\\p{N}][\\p{L}\\p{N}-]*)`, "giu");
/** Anchors that point back to a moment the text named before. */
const POINTING: ReadonlySet<string> = new Set(["then", "that", "this", "it", "now", "those", "these"]);
/** Articles and determiners: the anchor is the word after them ("before the decision"). */
const DETERMINERS: ReadonlySet<string> = new Set(["the", "a", "an", "our", "their", "his", "her", "its"]);

/** A bound word and its anchor, lower case. */
interface Anchor {
  bound: string;
  word: string;
}

/** The bound words of a text with their anchors (the first word after a determiner). */
function anchorsOf(text: string): Anchor[] {
  const found: Anchor[] = [];
  for (const match of text.slice(0, MAX_TEXT).matchAll(ANCHORED)) {
    const bound = (match[1] as string).toLowerCase();
    let word = (match[2] as string).toLowerCase();
    if (DETERMINERS.has(word)) {
      const after = (match.index ?? 0) + match[0].length;
      const next = /^\s+([\p{L}\p{N}][\p{L}\p{N}-]*)/u.exec(text.slice(after, after + 64));
      if (next?.[1] === undefined) continue;
      word = next[1].toLowerCase();
    }
    // A date, a number or a time is no anchor named anew: the gate holds those (§4b).
    if (/\d/u.test(word)) continue;
    found.push({ bound, word });
  }
  return found;
}

/** Texts are read to this length: a longer one is still bounded work. */
const MAX_TEXT = 16_384;
