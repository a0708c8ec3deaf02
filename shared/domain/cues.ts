/**
 * The cue classes of CONTRACT §4b (negation, bounds, modality, quantifiers, conditions) and how a
 * text's cues are counted: a table of phrases in English and Chinese, matched longest first in one
 * left-to-right scan. Pure; the text is normalised by the caller (`normalizeForExtraction`).
 */

/** The cue classes of CONTRACT §4b, each counted on its own. */
export const CUE_CLASSES = [
  "negation",
  "upperBound",
  "lowerBound",
  "strongModality",
  "weakModality",
  "universal",
  "existential",
  "condition",
] as const;
export type CueClass = (typeof CUE_CLASSES)[number];
export type CueCounts = Record<CueClass, number>;

/** How a class is named in a reason's detail. */
export const CUE_CLASS_NAMES: Record<CueClass, string> = {
  negation: "negation",
  upperBound: "upper bound",
  lowerBound: "lower bound",
  strongModality: "strong modality",
  weakModality: "weak modality",
  universal: "universal",
  existential: "existential",
  condition: "condition",
};

/** Every cue phrase and its class; `null` marks phrases that hold a cue character but are no cue. */
export const CUE_PHRASES: ReadonlyArray<readonly [string, CueClass | null]> = [
  ...(
    ["not", "no", "never", "none", "nothing", "nobody", "neither", "nor", "cannot", "without"] as const
  ).map((word) => [word, "negation"] as const),
  ...(["不要", "没有", "禁止", "不", "没", "别", "勿", "未", "无", "非", "莫"] as const).map(
    (word) => [word, "negation"] as const,
  ),
  ...(["非常", "无论", "不仅", "不但", "不断", "未来"] as const).map((word) => [word, null] as const),
  ...(
    [
      "at most",
      "no more than",
      "not more than",
      "up to",
      "less than",
      "fewer than",
      "≤",
      "<",
      "最多",
      "至多",
      "不超过",
      "不多于",
      "少于",
      "低于",
      "以内",
      "以下",
    ] as const
  ).map((phrase) => [phrase, "upperBound"] as const),
  ...(
    [
      "at least",
      "no less than",
      "not less than",
      "no fewer than",
      "more than",
      "≥",
      ">",
      "至少",
      "不少于",
      "不低于",
      "多于",
      "高于",
      "超过",
      "以上",
    ] as const
  ).map((phrase) => [phrase, "lowerBound"] as const),
  ...(
    [
      "must",
      "have to",
      "has to",
      "required",
      "requires",
      "shall",
      "always",
      "必须",
      "务必",
      "一定",
      "总是",
      "始终",
    ] as const
  ).map((phrase) => [phrase, "strongModality"] as const),
  ...(
    [
      "may",
      "might",
      "can",
      "could",
      "should",
      "optional",
      "sometimes",
      "usually",
      "可以",
      "可能",
      "应该",
      "有时",
      "通常",
    ] as const
  ).map((phrase) => [phrase, "weakModality"] as const),
  ...(["all", "every", "each", "所有", "全部", "每", "一切"] as const).map(
    (phrase) => [phrase, "universal"] as const,
  ),
  ...(["some", "several", "a few", "一些", "部分", "有些"] as const).map(
    (phrase) => [phrase, "existential"] as const,
  ),
  ...(
    [
      "if",
      "only if",
      "even if",
      "if and only if",
      "unless",
      "except",
      "except for",
      "except when",
      "except if",
      "provided that",
      "providing that",
      "as long as",
      "so long as",
      "on condition that",
      "otherwise",
      "除非",
      "除了",
      "只有",
      "只要",
      "否则",
      "不然",
      "要不然",
      "仅当",
      "如果",
      "假如",
      "的话",
    ] as const
  ).map((phrase) => [phrase, "condition"] as const),
];

/**
 * The cue phrases indexed for one left-to-right scan, longest first: Latin phrases by their first
 * word (matched word by word, whole words only: "no more than" wins over "no"), Chinese phrases
 * and symbols by their first character (不超过 wins over 不). Linear in the text.
 */
const LATIN_PHRASES = new Map<string, Array<{ words: string[]; cls: CueClass | null }>>();
const CHAR_PHRASES = new Map<string, Array<{ phrase: string; cls: CueClass | null }>>();
for (const [phrase, cls] of CUE_PHRASES) {
  if (/^[a-z]/.test(phrase)) {
    const words = phrase.split(" ");
    const list = LATIN_PHRASES.get(words[0] as string) ?? [];
    list.push({ words, cls });
    LATIN_PHRASES.set(words[0] as string, list);
  } else {
    const list = CHAR_PHRASES.get(phrase[0] as string) ?? [];
    list.push({ phrase, cls });
    CHAR_PHRASES.set(phrase[0] as string, list);
  }
}
for (const list of LATIN_PHRASES.values()) list.sort((a, b) => b.words.length - a.words.length);
for (const list of CHAR_PHRASES.values()) list.sort((a, b) => b.phrase.length - a.phrase.length);
const WORD_CHAR = /[\p{L}\p{N}]/u;
const LATIN_RUN = /[a-z]+(?:['’][a-z]+)*/y;
const SPACE_RUN = /\s+/y;

export function noCues(): CueCounts {
  return {
    negation: 0,
    upperBound: 0,
    lowerBound: 0,
    strongModality: 0,
    weakModality: 0,
    universal: 0,
    existential: 0,
    condition: 0,
  };
}

/** Counts each cue class in a text (already normalised): longest match first, no overlaps. */
export function countCues(raw: string): CueCounts {
  const counts = noCues();
  const text = raw.toLowerCase();
  let index = 0;
  while (index < text.length) {
    const char = text[index] as string;
    if (char >= "a" && char <= "z" && (index === 0 || !WORD_CHAR.test(text[index - 1] as string))) {
      LATIN_RUN.lastIndex = index;
      const word = LATIN_RUN.exec(text)?.[0] ?? char;
      let end = index + word.length;
      const whole = end >= text.length || !WORD_CHAR.test(text[end] as string);
      if (whole && /n['’]t$/.test(word)) counts.negation++;
      else if (whole) {
        const matched = LATIN_PHRASES.get(word)?.find((candidate) => {
          let at = end;
          for (const next of candidate.words.slice(1)) {
            SPACE_RUN.lastIndex = at;
            const space = SPACE_RUN.exec(text);
            if (!space || !text.startsWith(next, at + space[0].length)) return false;
            at += space[0].length + next.length;
            if (at < text.length && WORD_CHAR.test(text[at] as string)) return false;
          }
          end = at;
          return true;
        });
        if (matched?.cls && !(word === "may" && isMonthMay(text, index, end))) counts[matched.cls]++;
      }
      index = end;
      continue;
    }
    const phrase = CHAR_PHRASES.get(char)?.find((candidate) => text.startsWith(candidate.phrase, index));
    if (phrase) {
      if (phrase.cls) counts[phrase.cls]++;
      index += phrase.phrase.length;
    } else index++;
  }
  return counts;
}

/** "May" with a day number beside it (May 3, 3 May) is the month, not a cue. */
function isMonthMay(text: string, start: number, end: number): boolean {
  return (
    /^\s+\d/u.test(text.slice(end, end + 4)) || /\d\s+$/u.test(text.slice(Math.max(0, start - 4), start))
  );
}

/** Counts negation cues (CONTRACT §4a's list, except inside the phrases of other classes). */
export function countNegationCues(text: string): number {
  return countCues(text).negation;
}

/** Whether a text holds any cue of any class. */
export function hasCues(counts: CueCounts): boolean {
  return CUE_CLASSES.some((cls) => counts[cls] > 0);
}
