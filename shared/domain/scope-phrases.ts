import { normalizeForExtraction } from "./mentions.ts";
import { contentWords } from "./text-support.ts";

/**
 * The scope phrases of a rule's text (CONTRACT §4b "Scope words"): what follows "for", "in", "on",
 * "during", "within", "outside" or "except", up to three words, ending at punctuation, at
 * another such word, or at a word that starts a new part of the sentence ("and", "if", "when",
 * "must" …). "Never use vendor X for alpha" has one, "alpha". A phrase holding a number or date
 * is left to the mention checks (a changed or dropped number or date is refused there), and "from
 * now on" and idioms ("in the loop", "on time", "for example") place nothing, nor does a phrase
 * pointing back ("on those days": what it means is said elsewhere). In Chinese, the first four Han
 * characters after 仅限, 只在, 仅用于 and the like ("仅限法务频道": 法务频道). Each phrase is given
 * as its content words (reduced, as text support reads them); one with none (a stop word alone) is
 * not given.
 */
export function scopePhrases(text: string): Array<{ raw: string; words: readonly string[] }> {
  const phrases: Array<{ raw: string; words: readonly string[] }> = [];
  for (const clause of normalizeForExtraction(text).toLowerCase().split(CLAUSE_BREAK)) {
    const words = clause.match(WORD) ?? [];
    words.forEach((word, index) => {
      if (!SCOPE_WORDS.has(word) || (word === "on" && words[index - 1] === "now")) return;
      const phrase: string[] = [];
      for (const next of words.slice(index + 1, index + 1 + MAX_PHRASE_WORDS)) {
        if (SCOPE_WORDS.has(next) || PHRASE_END.has(next)) break;
        phrase.push(next);
      }
      if (phrase.length === 0 || phrase.some((next) => /\p{N}/u.test(next))) return;
      if (IDIOMS.test(`${word} ${phrase.join(" ")}`) || DEMONSTRATIVES.has(phrase[0] as string)) return;
      const content = contentWords(phrase.join(" "));
      if (content.length > 0) phrases.push({ raw: `${word} ${phrase.join(" ")}`, words: content });
    });
  }
  for (const match of normalizeForExtraction(text).matchAll(HAN_SCOPE)) {
    const phrase = (match[2] ?? "").slice(0, MAX_HAN_PHRASE);
    const content = contentWords(phrase);
    if (content.length > 0 && !/\p{N}/u.test(phrase))
      phrases.push({ raw: `${match[1]}${phrase}`, words: content });
  }
  return phrases;
}

/** 仅限法务频道 ("only the legal channel"): the Han run after 仅限, 只在, 仅用于 …, its first characters. */
const HAN_SCOPE =
  /(仅限|只限|仅在|只在|仅对|只对|仅供|只供|仅用于|只用于|仅适用于|只适用于)([\p{Script=Han}]+)/gu;
const MAX_HAN_PHRASE = 4;

const SCOPE_WORDS: ReadonlySet<string> = new Set([
  "for",
  "in",
  "on",
  "during",
  "within",
  "outside",
  "except",
]);
/** Phrases these words begin that place nothing ("keep her in the loop", "be there on time"). */
const IDIOMS =
  /^(?:in (?:the loop|place|advance|general|case|any case|touch|person|time|mind|charge|order|full|particular|fact|addition|short|total)|on (?:time|track|board|hold|call|top|purpose|behalf)|for (?:example|instance|sure|good))\b/u;
/**
 * A phrase these begin points back at what was said before ("on those days", "for that project"):
 * what it places is not in the event's own words, so no restatement can be asked to keep them.
 */
const DEMONSTRATIVES: ReadonlySet<string> = new Set(["this", "that", "these", "those", "such"]);
const PHRASE_END: ReadonlySet<string> = new Set([
  "and",
  "or",
  "but",
  "if",
  "unless",
  "because",
  "when",
  "while",
  "so",
  "than",
  "then",
  "with",
  "by",
  "from",
  "to",
  "until",
  "before",
  "after",
  "is",
  "are",
  "was",
  "were",
  "be",
  "must",
  "should",
  "can",
  "may",
  "will",
  "not",
  "never",
]);
const MAX_PHRASE_WORDS = 3;
const CLAUSE_BREAK = /[.,;:!?()[\]"“”—–]+/u;
const WORD = /[\p{L}\p{N}][\p{L}\p{N}'’_-]*/gu;
