import type { Recall } from "#app/recall.ts";
import { renderRecallText } from "#app/recall-text.ts";
import { type HeldTokens, holdMentions, holdsMention } from "#domain/gate/context.ts";
import { extractMentions } from "#domain/mentions.ts";
import type { ConsolidationOutput } from "#domain/schemas.ts";
import { summaryRecall } from "./compression.ts";
import type { GoldFact } from "./synthetic.ts";

/**
 * A gold fact written as words (`fact` and `words`, examples/eval/realistic-gold.jsonl) is kept
 * when it is served hot with its words: the claims and pending items deriving from one of its
 * evidence events, rendered as recall text (CONTRACT §5a) exactly as an agent reads them, hold every
 * word (an entry that is a list: one of its alternatives). The summary prose does not count: it
 * cites no event. A word holding a number, date or id is held when the lines hold them by meaning,
 * as the gate reads them (12,500 = 12500; "Dec 18" is held by 2026-12-18, and "Dec 16" and "18:30"
 * by 2026-12-16 18:30; 1.45M = 1,450,000), or
 * hold its words as written; words whole and case-insensitive, accents folded, a plural "s"
 * allowed ("SEV2" in "SEV2s"), a hyphenated word also written joined ("signoff"); Chinese as
 * written. A contested fact also needs one of those
 * claims contested.
 */
export interface ServedFact {
  kept: boolean;
  /** The recall-text lines the fact is served by (empty: every one of its events is cold). */
  lines: string[];
  /** The words (or alternatives) none of those lines holds. */
  missing: string[];
}

export function servedFact(fact: GoldFact, body: ConsolidationOutput): ServedFact {
  const evidence = new Set(fact.evidence);
  const serving = (item: { derivedFrom: readonly string[] }) =>
    item.derivedFrom.some((id) => evidence.has(id));
  const claims = body.claims.filter(serving);
  const pending = body.pending.filter(serving);
  const recall: Recall = {
    ...summaryRecall(
      { claims, pending, unresolvedConflicts: [], coldRefs: [], summary: "" },
      "summary:gold:0:fact",
      0,
    ),
  };
  // What an agent reads of the fact: its item lines, under the headings naming their scopes (text
  // version 2). The ids a line ends with (" ← ana-54") are provenance, not words: "ana-54" holds no 54.
  const lines = renderRecallText(recall, { coldInputs: 0 })
    .split("\n")
    .filter((line) => line !== "" && (!line.startsWith("#") || line.startsWith("### ")));
  const served = servedWords(
    lines
      .map((line) => (line.startsWith("### ") ? line.slice(4) : line.slice(0, line.lastIndexOf(" ← "))))
      .join("\n"),
  );
  const missing = (fact.words ?? [])
    .filter((entry) => !(typeof entry === "string" ? [entry] : entry).some((word) => served.holds(word)))
    .map((entry) => (typeof entry === "string" ? entry : entry.join(" | ")));
  const contestedKept = !fact.contested || claims.some((claim) => claim.status === "contested");
  return { kept: lines.length > 0 && missing.length === 0 && contestedKept, lines, missing };
}

/** Accents folded, lower-cased, NFKC: "Inês" and "ines", "Québec" and "quebec" read alike. */
function folded(text: string): string {
  return text.normalize("NFKD").replace(/\p{M}/gu, "").normalize("NFKC").toLowerCase();
}

const LATIN_WORD = /[\p{L}\p{N}]+/gu;
const HAN = /\p{Script=Han}/u;
const HAN_CHARACTERS = /\p{Script=Han}/gu;

function servedWords(text: string): { holds(word: string): boolean } {
  // Numbers, dates and ids read as the gate reads what an event holds (§4a held tokens).
  const held: HeldTokens = { unitNumbers: new Set(), numbers: new Set(), dates: new Set(), ids: new Set() };
  holdMentions(held, extractMentions(text).mentions);
  const plain = folded(text);
  const words = new Set(wordsOf(plain));
  const hasWord = (word: string) => words.has(word) || words.has(`${word}s`);
  return {
    holds(word) {
      const mentions = extractMentions(word).mentions;
      if (mentions.length > 0 && mentions.every((mention) => holdsMention(held, mention))) return true;
      const wanted = folded(word);
      if (HAN.test(wanted)) return plain.includes(wanted);
      // A hyphenated compound is the same word written joined ("sign-off" in `max_without_signoff`).
      return wordsOf(wanted).every(hasWord) || (/\w-\w/u.test(wanted) && hasWord(wanted.replaceAll("-", "")));
    },
  };
}

/** Runs of letters and digits, a Han character never joined to a Latin word ("在Richmond"). */
function wordsOf(text: string): string[] {
  return text.replace(HAN_CHARACTERS, " ").match(LATIN_WORD) ?? [];
}
