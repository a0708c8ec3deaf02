/**
 * Numbers written as words (CONTRACT §4b): English number words and ordinals, and Chinese
 * numerals. Pure; the extractor (`mentions.ts`) and relative time read them.
 */

/** English number words (CONTRACT §4b): a number when two or more form one, or one has a unit. */
export const WORD_VALUES: Record<string, number> = Object.fromEntries([
  ..."zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen"
    .split(" ")
    .map((word, value) => [word, value] as const),
  ..."twenty thirty forty fifty sixty seventy eighty ninety"
    .split(" ")
    .map((word, index) => [word, 20 + 10 * index] as const),
]);
const WORD_SCALES: Record<string, number> = { hundred: 100, thousand: 1e3, million: 1e6, billion: 1e9 };
/** Ordinal words that hold their number (not "first", "second": prose and a unit). */
export const ORDINAL_WORDS: Record<string, number> = {
  third: 3,
  fourth: 4,
  fifth: 5,
  sixth: 6,
  seventh: 7,
  eighth: 8,
  ninth: 9,
  tenth: 10,
};
export const NUMBER_WORD = [...Object.keys(WORD_VALUES), ...Object.keys(WORD_SCALES)]
  .sort((a, b) => b.length - a.length)
  .join("|");

/** The value of English number words ("twelve thousand five hundred" = 12500), null if malformed. */
export function wordsValue(words: readonly string[]): number | null {
  let total = 0;
  let current = 0;
  for (const word of words) {
    const value = WORD_VALUES[word];
    if (value !== undefined) current += value;
    else if (word === "hundred") current = (current || 1) * 100;
    else {
      const scale = WORD_SCALES[word];
      if (scale === undefined) return null;
      total += (current || 1) * scale;
      current = 0;
    }
  }
  return total + current;
}

/** Chinese numerals (CONTRACT §4b): 一万二千五百 = 12500, 三 = 3; 两 is 2, 〇/零 hold places. */
const ZH_DIGITS: Record<string, number> = {
  〇: 0,
  零: 0,
  一: 1,
  二: 2,
  两: 2,
  三: 3,
  四: 4,
  五: 5,
  六: 6,
  七: 7,
  八: 8,
  九: 9,
};
const ZH_SMALL: Record<string, number> = { 十: 10, 百: 100, 千: 1000 };
const ZH_LARGE: Record<string, number> = { 万: 1e4, 亿: 1e8 };
export function chineseValue(run: string): number {
  let total = 0;
  let section = 0;
  let digit = 0;
  for (const char of run) {
    if (ZH_DIGITS[char] !== undefined) digit = ZH_DIGITS[char] as number;
    else if (ZH_SMALL[char] !== undefined) {
      section += (digit || 1) * (ZH_SMALL[char] as number);
      digit = 0;
    } else if (ZH_LARGE[char] !== undefined) {
      total = (total + section + digit) * (ZH_LARGE[char] as number);
      section = 0;
      digit = 0;
    }
  }
  return total + section + digit;
}
