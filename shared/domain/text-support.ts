import stopwords from "stopwords-iso";
import lemmatizer from "wink-lemmatizer";
import stem from "wink-porter2-stemmer";
import { isWeekdayKey } from "./day-forms.ts";
import type { Mention } from "./mentions.ts";
import {
  CUE_PHRASES,
  currencyBeforeLength,
  extractMentions,
  normalizeForExtraction,
  unitWordLength,
} from "./mentions.ts";
import type { SequencedEvent } from "./schemas.ts";

/**
 * Text support (CONTRACT §4b): the content words of a text, reduced to their stems, and how many
 * of them occur among the words of the events it cites. Content words are what is left after
 * removing stopwords (stopwords-iso, en and zh), cue words, framing words, and every number, date
 * and id (the spans the mention extractor reads, so a number and its unit go together).
 */

const FRAMING_WORDS = [
  "memory",
  "summary",
  "user",
  "agent",
  "assistant",
  "task",
  "open",
  "pending",
  "done",
  "conflict",
  "contest",
  "dispute",
  "undecided",
  "unresolved",
  "settle",
  "decide",
  "resolve",
  "remain",
  "still",
  "note",
  "say",
  "state",
  "mention",
  "ask",
  "like",
  "prefer",
  "want",
  "currently",
  "now",
  "also",
  "fact",
  "preference",
  "constraint",
  "decision",
  "permission",
  "revocation",
  "revoke",
  "supersede",
  "record",
  "source",
  "event",
  "claim",
  "position",
  "scope",
  "keep",
  "cold",
  "reference",
  "current",
  "earlier",
  "later",
  "latest",
  "previous",
  "both",
  "separate",
  "different",
  "same",
  "instead",
  "only",
  "apply",
  "rule",
  "policy",
  "limit",
  "记忆",
  "摘要",
  "用户",
  "任务",
  "待办",
  "冲突",
  "未决",
  "已定",
  "仍",
  "提到",
  "说",
  "表示",
  "喜欢",
  "偏好",
  "希望",
  "目前",
  "也",
  "事实",
  "约束",
  "决定",
  "权限",
  "记录",
  "来源",
  "事件",
  "规则",
];

const WORDS = new Intl.Segmenter("und", { granularity: "word" });
/** Chinese framing words removed before segmenting: the dictionary may cut them (待办 → 待, 办). */
const CHINESE_FRAMING = new RegExp(
  FRAMING_WORDS.filter((word) => /[\u3400-\u9fff]/u.test(word))
    .sort((a, b) => b.length - a.length)
    .join("|"),
  "gu",
);
const SENTENCES = new Intl.Segmenter("und", { granularity: "sentence" });
/**
 * Identifier tokens (CONTRACT §4b): ASCII letters or digits joined by `:` or `@` (`repo:web:read`,
 * `alex@proj-a`), holding a letter (`14:55` is a time, not an id).
 */
export const IDENTIFIER =
  /(?<![A-Za-z0-9])(?=[A-Za-z0-9._/-]*[A-Za-z])[A-Za-z0-9][A-Za-z0-9._-]*(?:[:@][A-Za-z0-9][A-Za-z0-9._/-]*)+/gu;
const ENGLISH_NUMBER_WORDS = new Set(
  "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million billion half dozen".split(
    " ",
  ),
);
const HAS_LATIN = /[a-z]/;

let removed: Set<string> | undefined;
/** Stopwords, cue words and framing words, each as `reduce` leaves it, and as written. */
function removedWords(): Set<string> {
  if (!removed) {
    const words = new Set<string>([...(stopwords.en ?? []), ...(stopwords.zh ?? [])]);
    for (const [phrase] of CUE_PHRASES) for (const word of phrase.split(" ")) words.add(word);
    for (const word of FRAMING_WORDS) words.add(word);
    removed = new Set([...words].flatMap((word) => [word, reduce(word)]));
  }
  return removed;
}

const reduced = new Map<string, string>();
/**
 * English words lemmatised (verb, then noun, then adjective: the first that changes it), then
 * stemmed; remembered per word (the reduction of a word never changes, and a vocabulary is small).
 */
function reduce(word: string): string {
  let result = reduced.get(word);
  if (result === undefined) {
    result = word;
    if (HAS_LATIN.test(word)) {
      const lemma = [lemmatizer.verb, lemmatizer.noun, lemmatizer.adjective]
        .map((lemmatize) => lemmatize(word))
        .find((candidate) => candidate !== word);
      result = stem(lemma ?? word);
    }
    if (reduced.size < 200_000) reduced.set(word, result);
  }
  return result;
}

const HAS_CJK = /[\u3400-\u9fff\uf900-\ufaff]/u;
/** A run of Han characters. */
const HAN_RUN = /[\u3400-\u9fff\uf900-\ufaff]+/gu;
const ALL_HAN = /^[\u3400-\u9fff\uf900-\ufaff]+$/u;
/** Marks a Han unit in a support set, so it never equals a word. */
const HAN_UNIT = "\u0001";

/**
 * The units a Han word is compared by (CONTRACT §4b "Chinese without segmentation"): its character
 * pairs in order, or its one character. Intl.Segmenter cuts the same Han text differently in
 * different contexts (急事 in "有急事", 急 + 事先 in "有急事先走了"), so Han words are compared by
 * what they write, never by how the dictionary cut them.
 */
function hanUnits(word: string): string[] {
  const chars = [...word];
  if (chars.length === 1) return [`${HAN_UNIT}${word}`];
  const units: string[] = [];
  for (let i = 0; i + 1 < chars.length; i++) units.push(`${HAN_UNIT}${chars[i]}${chars[i + 1]}`);
  return units;
}

/** The units of every Han run of a (normalised, lower-cased) text: each character and each pair. */
function hanUnitsOfText(text: string): string[] {
  const units: string[] = [];
  for (const [run] of text.matchAll(HAN_RUN)) {
    const chars = [...run];
    for (const [i, char] of chars.entries()) {
      units.push(`${HAN_UNIT}${char}`);
      if (i + 1 < chars.length) units.push(`${HAN_UNIT}${char}${chars[i + 1]}`);
    }
  }
  return units;
}

/**
 * Whether a support set holds a content word: the word itself, or for a Han word, every one of its
 * units (the supporting texts write its characters in its order, however they were segmented).
 */
export function supportsWord(support: ReadonlySet<string>, word: string): boolean {
  if (support.has(word)) return true;
  return ALL_HAN.test(word) && hanUnits(word).every((unit) => support.has(unit));
}

/**
 * The units by which a content word is looked up in an index of supporting texts' words: the word
 * itself, or a Han word's units (all must be held).
 */
export function lookupUnits(word: string): readonly string[] {
  return ALL_HAN.test(word) ? hanUnits(word) : [word];
}
const LATIN_WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu;
/**
 * The words of a (normalised, lower-cased) text. Text with Chinese goes through Intl.Segmenter's
 * dictionary; other text is split on its letter runs, which is where ICU's word boundaries fall
 * for it, at a fraction of the cost.
 */
function segmentWords(text: string): string[] {
  if (HAS_CJK.test(text))
    return [...WORDS.segment(text)].filter((segment) => segment.isWordLike).map((segment) => segment.segment);
  return text.match(LATIN_WORD) ?? [];
}

function normalise(text: string): string {
  return normalizeForExtraction(text).replace(/\s+/gu, " ");
}

/**
 * The text with its numbers (with their unit or currency word), dates and ids blanked out;
 * `mentions` when the caller has them already (the extractor reads the same normalised text).
 */
function withoutMentions(text: string, mentions?: readonly Mention[]): string {
  const blanked = text.replace(IDENTIFIER, " ");
  let result = "";
  let cursor = 0;
  for (const mention of mentions ?? extractMentions(blanked).mentions) {
    // A weekday is a word as well as a date: "deploying on Fridays" draws on "never deploy on Fridays".
    if (mention.kind === "date" && isWeekdayKey(mention.key)) continue;
    const at = blanked.indexOf(mention.raw, cursor);
    if (at < 0) continue;
    let end = at + mention.raw.length;
    let start = at;
    if (mention.kind === "number") {
      end += unitWordLength(blanked.slice(end));
      start -= currencyBeforeLength(blanked.slice(cursor, at));
    }
    result += `${blanked.slice(cursor, start)} `;
    cursor = end;
  }
  return result + blanked.slice(cursor);
}

/** The distinct content words of a text (reduced), in first-seen order. */
export function contentWords(text: string, mentions?: readonly Mention[]): readonly string[] {
  // Read with its own mentions, a text always gives the same words: a quoted source is read once.
  if (mentions !== undefined && mentions !== extractMentions(text).mentions)
    return readContentWords(text, mentions);
  const key = `${mentions === undefined ? "read" : "own"}\u0000${text}`;
  const known = contentWordMemo.get(key);
  if (known !== undefined) return known;
  const words = Object.freeze(readContentWords(text, mentions));
  if (contentWordMemo.size >= CONTENT_WORD_MEMO_LIMIT) contentWordMemo.clear();
  contentWordMemo.set(key, words);
  return words;
}

const contentWordMemo = new Map<string, readonly string[]>();
const CONTENT_WORD_MEMO_LIMIT = 200_000;

function readContentWords(text: string, mentions?: readonly Mention[]): string[] {
  const stop = removedWords();
  const words = new Set<string>();
  const prose = withoutMentions(normalise(text), mentions).toLowerCase().replace(CHINESE_FRAMING, " ");
  for (const segment of segmentWords(prose)) {
    if (/^\p{N}+$/u.test(segment) || ENGLISH_NUMBER_WORDS.has(segment) || stop.has(segment)) continue;
    const reduced = reduce(segment);
    if (!stop.has(reduced)) words.add(reduced);
  }
  return [...words];
}

const eventWordCache = new WeakMap<SequencedEvent, Set<string>>();
/** What an event offers as support: the words of its text, `{text}` values, keys, scopes and source. */
export function eventWords(event: SequencedEvent): Set<string> {
  let words = eventWordCache.get(event);
  if (!words) {
    const texts = [event.text ?? ""];
    const names: string[] = [];
    for (const assertion of event.assertions ?? []) {
      if ("text" in assertion.value) texts.push(assertion.value.text);
      names.push(assertion.key, assertion.scope);
    }
    if (event.source) names.push(event.source);
    words = new Set([
      ...texts.flatMap((text) => supportingWordsOf(text)),
      ...names.flatMap((name) =>
        wordsOf(
          normalise(name)
            .split(/[:/._-]/)
            .join(" "),
        ),
      ),
    ]);
    eventWordCache.set(event, words);
  }
  return words;
}

/** The reduced words of supporting text (stopwords left out: they never need support). */
function wordsOf(text: string): string[] {
  const stop = removedWords();
  const words: string[] = [];
  for (const segment of segmentWords(text.toLowerCase())) if (!stop.has(segment)) words.push(reduce(segment));
  return words;
}

/**
 * What a text offers as support: its reduced words and the units of its Han runs (numbers, dates
 * and ids blanked out first, as they are in the texts it supports).
 */
export function supportingWordsOf(text: string): string[] {
  const prose = withoutMentions(normalise(text)).toLowerCase();
  const words = wordsOf(prose);
  return HAS_CJK.test(prose) ? [...words, ...hanUnitsOfText(prose)] : words;
}

export interface Support {
  /** Share of the text's content words found among the supporting words (1 when it has none). */
  ratio: number;
  unsupported: string[];
}

export function supportOf(
  text: string,
  support: ReadonlySet<string>,
  mentions?: readonly Mention[],
): Support {
  const words = contentWords(text, mentions);
  if (words.length === 0) return { ratio: 1, unsupported: [] };
  const unsupported = words.filter((word) => !supportsWord(support, word));
  return { ratio: (words.length - unsupported.length) / words.length, unsupported };
}

/** The sentences of a text (line breaks folded), as Intl.Segmenter cuts them. */
export function sentencesOf(text: string): string[] {
  return [...SENTENCES.segment(text.replace(/\s*[\r\n]+\s*/gu, " "))]
    .map((sentence) => sentence.segment.trim())
    .filter((sentence) => sentence.length > 0);
}
