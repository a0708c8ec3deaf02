import { eng, zho } from "stopword";
import lemmatizer from "wink-lemmatizer";
import stem from "wink-porter2-stemmer";
import { calendarDay, ENGLISH_MONTHS, isoWeekday } from "./dates.ts";
import { weekdayNames } from "./day-forms.ts";

/**
 * The terms recall's search reads a text as (CONTRACT §5 "Search"), the same for what is indexed
 * and for a query, so a question written as agents write it meets the events that answer it:
 * NFKC and lower-cased; words are runs of letters or digits (an apostrophe inside a word joins it:
 * `Audrey's` is one word, its possessive `'s` dropped); English stopwords (the `stopword` package's
 * list, 108 words) are left out, and every other Latin word is lemmatised as a verb (`went` → `go`)
 * and reduced by the Porter2 stemmer (`painting` → `paint`); a run of Han characters gives its
 * character pairs (`生日快乐` → 生日, 日快, 快乐), a lone character itself unless it is one of the
 * Chinese stopwords (`stopword`'s list, each a character): pairs do not depend on how a segmenter
 * would cut the run. Numbers are kept as written (`2023`, `4.5`). Pure and deterministic.
 */
export function searchTerms(text: string): string[] {
  const terms: string[] = [];
  for (const match of text.normalize("NFKC").toLowerCase().matchAll(WORD)) {
    const word = match[0];
    if (HAN_RUN.test(word)) {
      hanTerms(word, terms);
      continue;
    }
    const plain = word.replace(POSSESSIVE, "").replace(APOSTROPHES, "");
    if (plain === "" || ENGLISH_STOPWORDS.has(plain)) continue;
    terms.push(reduced(plain));
  }
  return terms;
}

/**
 * A run of Han characters, or of other letters or digits (an apostrophe joining letters: `don't`,
 * `Audrey's`): digits next to Han characters are a word of their own (`8月11日` → 8, 月, 11, 日).
 */
const WORD =
  /\p{Script=Han}+|(?:(?!\p{Script=Han})[\p{L}\p{M}\p{N}])+(?:['’](?:(?!\p{Script=Han})[\p{L}\p{M}])+)*/gu;
const HAN_RUN = /^\p{Script=Han}+$/u;
const POSSESSIVE = /['’]s$/u;
const APOSTROPHES = /['’]/gu;
const ENGLISH_STOPWORDS: ReadonlySet<string> = new Set(eng);
const CHINESE_STOPWORDS: ReadonlySet<string> = new Set(zho);
const HAS_LATIN = /[a-z]/;

function hanTerms(run: string, terms: string[]): void {
  const characters = [...run];
  if (characters.length === 1) {
    const [only = ""] = characters;
    if (!CHINESE_STOPWORDS.has(only)) terms.push(only);
    return;
  }
  for (let i = 0; i + 1 < characters.length; i++) terms.push(`${characters[i]}${characters[i + 1]}`);
}

const reductions = new Map<string, string>();
/** A Latin word lemmatised as a verb, then stemmed; remembered (a vocabulary is small, bounded here). */
function reduced(word: string): string {
  let result = reductions.get(word);
  if (result === undefined) {
    result = HAS_LATIN.test(word) ? stem(lemmatizer.verb(word)) : word;
    if (reductions.size < 100_000) reductions.set(word, result);
  }
  return result;
}

/**
 * The words a calendar day ("YYYY-MM-DD", the start of an `occurredAt`) is searched by, beside
 * what a document says: its year, its month by name and number, its day of the month, and its
 * weekday in English and Chinese ("2023 august 8 11 friday 星期五"), so a question asking what
 * happened "on August 11, 2023" or "in May 2023" meets the events of that day. Empty for what is
 * no calendar day.
 */
export function dayWords(day: string): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})/.exec(day);
  if (match === null) return "";
  const [, year, month, date] = match.map(Number) as [number, number, number, number];
  const iso = calendarDay(year, month, date);
  if (iso === null) return "";
  // The weekday's full English name (the first) and its 星期 forms.
  const [english, ...others] = weekdayNames(isoWeekday(iso));
  const weekday = [english, ...others.filter((name) => name.startsWith("星期"))];
  return [year, ENGLISH_MONTHS[month - 1], month, date, ...weekday].join(" ");
}
