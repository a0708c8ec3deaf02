import { type CueCounts, countCues } from "./cues.ts";
import { calendarDay, canonicalDate } from "./dates.ts";
import {
  isWeekdayKey,
  MONTH_NAMES,
  NUMERIC_MONTH_DAY_PATTERN,
  readNumericMonthDay,
  WEEKDAY_PATTERN,
  weekdayKey,
  weekdayOf,
} from "./day-forms.ts";
import { chineseValue, NUMBER_WORD, ORDINAL_WORDS, wordsValue } from "./number-words.ts";
import { canonicalQuantity, isBoundedDecimal, parseDecimal, quantityKey, resolveUnit } from "./quantity.ts";

// The cue classes live in cues.ts; importers of mentions.ts keep reading them here.
export {
  CUE_CLASS_NAMES,
  CUE_CLASSES,
  CUE_PHRASES,
  type CueClass,
  type CueCounts,
  countCues,
  countNegationCues,
  hasCues,
  noCues,
} from "./cues.ts";

/**
 * The extractor for free text (CONTRACT §2 and §4a): numbers with their units, dates, ids, and
 * negation cues, in English and Chinese. Deterministic and linear in the text: one left-to-right
 * scan with a single regular expression whose alternatives are ordered by priority (a date's digits
 * are not numbers, an id's digits are not numbers).
 */

/** A number with its unit (CONTRACT §4a): what a number mention holds. */
export interface NumberMention {
  kind: "number";
  /** Unit-aware key: equal for 5 km and 5000 m, different for 5 km and 5 mi. */
  key: string;
  /** The number as written with separators folded (12,500 = 12500.00), unit ignored. */
  number: string;
  hasUnit: boolean;
  /**
   * Its unit is the one written after the next number of a range ("10 to 16 km": 10 km): such a
   * number is held, and holds, with that unit or without one (CONTRACT §4b).
   */
  rangeUnit?: true;
  raw: string;
}

export type Mention =
  | NumberMention
  | {
      kind: "date";
      key: string;
      raw: string;
      /**
       * The two numbers of its other reading, when it may also be a range (`10-12`: October 12,
       * or 10 to 12): held when its day is held or both numbers are (CONTRACT §4b).
       */
      range?: readonly [NumberMention, NumberMention];
    }
  | { kind: "id"; key: string; raw: string };

export interface TextMentions {
  mentions: Mention[];
  negationCues: number;
  /** Each cue class counted on its own (CONTRACT §4b); `negationCues` is `cues.negation`. */
  cues: CueCounts;
}

const MONTHS = MONTH_NAMES;
const MONTH_INDEX: Record<string, number> = {
  jan: 1,
  feb: 2,
  mar: 3,
  apr: 4,
  may: 5,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  oct: 10,
  nov: 11,
  dec: 12,
};
const ORDINAL = "(?:st|nd|rd|th)?";

/** The week form dates are written in (CONTRACT §4b): "week of" and a calendar day. */
const ANCHORED_WEEK = /^\s+week\s+of\s+\d{4}-\d{2}-\d{2}\b/iu;

const ZH_POSITIONAL = /[十百千万亿]/u;
/**
 * Measure words that make a lone Chinese numeral a number (units are read by the unit table):
 * CONTRACT §4b's list, and the classifiers of people, firms, vehicles, sets, books, rounds and
 * metric volumes and masses that a count stands before just as often (三位工程师, 两家供应商). Not
 * 种 or 段, which 一 makes a plain article in prose (一种方法, 一段时间).
 */
const ZH_MEASURE =
  /^(?:个月|星期|小时|分钟|公里|千米|厘米|毫米|公斤|千克|毫升|美元|欧元|[天日周月年分秒次个人元块米克岁倍条项份张台件页位名家辆套本篇双层轮升吨%％])/u;

const SCANNER = new RegExp(
  [
    String.raw`(?<isoDateTime>\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(?:Z|[+-]\d{2}(?::?\d{2})?| ?UTC\b)?| \d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(?:Z| ?UTC\b)?)(?![\d:]|[-+]\d))`,
    String.raw`(?<isoDate>(?<![\d])\d{4}-\d{2}-\d{2})(?![\d])`,
    String.raw`(?<slashDate>(?<![\d/.])\d{4}[/.]\d{1,2}[/.]\d{1,2})(?![\d/]|\.\d)`,
    String.raw`(?<numericDate>(?<![\d/.])\d{1,2}[/.]\d{1,2}[/.]\d{4})(?![\d/]|\.\d)`,
    String.raw`(?<ofDate>\bthe\s+\d{1,2}${ORDINAL}\s+of\s+(?:${MONTHS})\.?,?\s+\d{4})(?![\d])`,
    String.raw`(?<zhDate>\d{4}\s*年\s*\d{1,2}\s*月\s*\d{1,2}\s*[日号])`,
    String.raw`(?<monthFirst>\b(?:${MONTHS})\.?\s+\d{1,2}${ORDINAL},?\s+\d{4})(?![\d])`,
    String.raw`(?<dayFirst>(?<![\d])\d{1,2}${ORDINAL}\s+(?:${MONTHS})\.?,?\s+\d{4})(?![\d])`,
    String.raw`(?<zhMonthDay>(?<![\d])\d{1,2}\s*月\s*\d{1,2}\s*[日号])`,
    String.raw`(?<monthDayFirst>\b(?:${MONTHS})\.?\s+\d{1,2}${ORDINAL})(?![\d]|[A-Za-z])`,
    String.raw`(?<dayMonthFirst>(?<![\d])\d{1,2}${ORDINAL}\s+(?:${MONTHS})\b\.?)`,
    String.raw`(?<monthYear>\b(?:${MONTHS})\.?,?\s+\d{4})(?![\d])`,
    String.raw`(?<zhMonthYear>\d{4}\s*年\s*\d{1,2}\s*月)(?!\s*\d)`,
    `(?<numericMonthDay>${NUMERIC_MONTH_DAY_PATTERN})`,
    `(?<weekday>${WEEKDAY_PATTERN})`,
    String.raw`(?<uuid>(?<![0-9a-z-])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?![0-9a-z-])`,
    String.raw`(?<number>(?<![A-Za-z0-9_.,+\-\u2212])(?<currency>[$€£¥]\s?)?(?<sign>[-+\u2212](?=\d))?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(?![A-Za-z0-9_]|[-.,]\d|[-.][A-Za-z])`,
    String.raw`(?<words>(?<![A-Za-z])(?:${NUMBER_WORD})(?:(?:\s+|-)(?:and\s+)?(?:${NUMBER_WORD}))*(?![A-Za-z]))`,
    String.raw`(?<ordinalWord>(?<![A-Za-z])(?:third|fourth|fifth|sixth|seventh|eighth|ninth|tenth)(?![A-Za-z]))`,
    String.raw`(?<zhNumber>第?[〇零一二两三四五六七八九十百千万亿]+)`,
    String.raw`(?<token>(?<![A-Za-z0-9_])[A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)*)`,
  ].join("|"),
  "giu",
);

/** Words that follow numbers in prose but would read as units ("5 in total", "3rd", "10 am"). */
const NOT_UNITS = new Set(
  "in am pm as at an is it on or to by of st nd rd th ch b a are pt cup cups mil point points li da ha".split(
    " ",
  ),
);
/** Dimensions prose units may have: mass, length, time, data and their rates (mathjs's dimension order). */
const PROSE_DIMENSIONS = [true, true, true, false, false, false, false, false, true];

/** The unit a word names in prose, if it is one people write after numbers. */
function proseUnit(word: string): string | undefined {
  // Case-insensitive prose words, except the byte: `5 B` is five bytes (SI/IEC symbols are exact).
  if (word !== "B" && NOT_UNITS.has(word.toLowerCase())) return undefined;
  const info = resolveUnit(word);
  if (info === null) return undefined;
  if (
    info.kind === "dimension" &&
    info.dimension.split(",").some((power, index) => power !== "0" && !PROSE_DIMENSIONS[index])
  )
    return undefined;
  return word;
}
const ATTACHED_UNIT = /^(\d+(?:\.\d+)?)([A-Za-z%]+(?:\/[A-Za-z]+)?)$/;
const SUFFIX_ASCII_UNIT = /^( ?)([A-Za-z%]+(?:\/[A-Za-z]+)?)(?![A-Za-z0-9])/;
const SUFFIX_CJK_UNIT = /^ ?([\u3400-\u9fff％]{1,3})/u;
/** `¥` written after a number (`500 ¥`): the number's currency. */
const YEN_AFTER = /^ ?¥/u;
/** `¥` is both yen and yuan: it stays its own currency, equal only to `¥` (CONTRACT §4b). */
const CURRENCY_SYMBOLS: Record<string, string> = { $: "USD", "€": "EUR", "£": "GBP", "¥": "¥" };

/** The length of a currency code or symbol right before a number (`"EUR "`, `€`), 0 if none. */
export function currencyBeforeLength(before: string): number {
  const match = /(?<![A-Za-z])([A-Z]{3}|[$€£¥])\s?$/u.exec(before);
  if (!match?.[1]) return 0;
  return match[1].length === 1 || proseUnit(match[1]) !== undefined ? match[0].length : 0;
}

/** The length of the unit or currency word right after a number (`" USD"`, `美元`, `km`), 0 if none. */
export function unitWordLength(rest: string): number {
  const yen = YEN_AFTER.exec(rest);
  if (yen) return yen[0].length;
  const ascii = SUFFIX_ASCII_UNIT.exec(rest);
  if (ascii?.[2] && proseUnit(ascii[2]) !== undefined) return ascii[0].length;
  const cjk = SUFFIX_CJK_UNIT.exec(rest);
  if (cjk?.[1]) {
    const space = cjk[0].length - cjk[1].length;
    for (let length = cjk[1].length; length > 0; length--)
      if (proseUnit(cjk[1].slice(0, length)) !== undefined) return space + length;
  }
  return 0;
}

function numberMention(digits: string, unit: string | undefined, raw: string): NumberMention {
  const decimal = parseDecimal(digits.replaceAll(",", ""));
  const quantity = canonicalQuantity(decimal, unit);
  return {
    kind: "number",
    key: quantityKey(quantity),
    number: quantity.number,
    hasUnit: unit !== undefined,
    raw,
  };
}

/** The unit written right after a number, if the words there are a unit we know. */
function unitAfter(text: string, position: number): string | undefined {
  const rest = text.slice(position, position + 24);
  if (YEN_AFTER.test(rest)) return "¥";
  const ascii = SUFFIX_ASCII_UNIT.exec(rest);
  if (ascii) {
    return proseUnit(ascii[2] ?? "");
  }
  const cjk = SUFFIX_CJK_UNIT.exec(rest);
  if (cjk?.[1]) {
    for (let length = cjk[1].length; length > 0; length--) {
      const candidate = cjk[1].slice(0, length);
      if (proseUnit(candidate) !== undefined) return candidate;
    }
  }
  return undefined;
}

/** A date-shaped token that is no calendar day (2026-11-31): a mention that no input ever holds. */
export const IMPOSSIBLE_DATE = "impossible:";

function dateMention(year: number, month: number, day: number, raw: string): Mention {
  const canonical = calendarDay(year, month, day);
  return canonical === null
    ? { kind: "date", key: `${IMPOSSIBLE_DATE}${raw}`, raw }
    : { kind: "date", key: `day:${canonical}`, raw };
}

/**
 * A date written without its year ("Dec 3", "12月3日"): it can only be compared as a month and day.
 * A full date holds its month-day too (see `monthDayOf`), so "Dec 3" restates "2026-12-03".
 */
function monthDayMention(month: number, day: number, raw: string): Mention | null {
  // 2000 is a leap year: February 29 is a month-day that exists.
  const canonical = calendarDay(2000, month, day);
  return canonical === null ? null : { kind: "date", key: `monthday:${canonical.slice(5)}`, raw };
}

function monthYearMention(year: number, month: number, raw: string): Mention {
  return month >= 1 && month <= 12 && year > 0
    ? { kind: "date", key: `month:${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")}`, raw }
    : { kind: "date", key: `${IMPOSSIBLE_DATE}${raw}`, raw };
}

function monthNumber(name: string): number {
  return MONTH_INDEX[name.slice(0, 3).toLowerCase()] ?? 0;
}

/** Magnitude suffixes written right after a number (CONTRACT §4b): 12.5k, 3M, 2bn, 1.25万. */
const MAGNITUDES: Record<string, string> = {
  k: "1000",
  K: "1000",
  M: "1000000",
  bn: "1000000000",
  万: "10000",
  亿: "100000000",
};
/** A number followed directly by a magnitude suffix, and what follows it. */
const MAGNITUDE_AFTER = /^(k|K|M|bn|万|亿)(?![A-Za-z])/u;
/** A currency code or symbol written before a number: `EUR 12,500`, `USD12,500`. */
const CODE_BEFORE = /(?:^|[^A-Za-z])([A-Z]{3}) ?$/u;

/** `digits` times a magnitude, exactly, as a decimal string. */
function scaled(digits: string, magnitude: string | undefined): string {
  if (magnitude === undefined) return digits;
  const value = parseDecimal(digits.replaceAll(",", "")).mul(parseDecimal(MAGNITUDES[magnitude] ?? "1"));
  return value.toString();
}

function mentionsOf(
  groups: Record<string, string | undefined>,
  text: string,
  start: number,
  end: number,
): Mention[] {
  const { number, currency, token, words, zhNumber, numericDate } = groups;
  if (groups.numericMonthDay !== undefined) return numericMonthDayMentions(groups.numericMonthDay, text, end);
  if (groups.weekday !== undefined) {
    const weekday = weekdayOf(groups.weekday);
    return weekday === null ? [] : [{ kind: "date", key: weekdayKey(weekday), raw: groups.weekday }];
  }
  if (numericDate !== undefined) {
    // 13/03/2026 is day first, 03/13/2026 month first; 03/12/2026 could be either: numbers.
    const [a = 0, b = 0, year = 0] = numericDate.split(/[/.]/).map(Number);
    if (a > 12 && b <= 12) return [dateMention(year, b, a, numericDate)];
    if (b > 12 && a <= 12) return [dateMention(year, a, b, numericDate)];
    return numericDate.split(/[/.]/).map((part) => numberMention(part, undefined, part));
  }
  if (words !== undefined) {
    const parts = words
      .toLowerCase()
      .split(/[\s-]+/u)
      .filter((word) => word !== "and");
    const value = wordsValue(parts);
    const unit = unitAfter(text, end);
    // A lone "one" or "two" before a plain noun is prose, not a number; so is "one" before the
    // week form dates are written in ("the second one week of 2022-04-25" is no one-week span).
    if (value === null || (parts.length < 2 && unit === undefined)) return [];
    if (parts.length === 1 && parts[0] === "one" && ANCHORED_WEEK.test(text.slice(end, end + 64))) return [];
    return [numberMention(String(value), unit, words)];
  }
  if (groups.ordinalWord !== undefined)
    return [
      numberMention(
        String(ORDINAL_WORDS[groups.ordinalWord.toLowerCase()] ?? 0),
        undefined,
        groups.ordinalWord,
      ),
    ];
  if (zhNumber !== undefined) {
    // 万 or 亿 right after digits is that number's magnitude (1.25万), read with it.
    if (/\d/u.test(text[start - 1] ?? "")) return [];
    const ordinal = zhNumber.startsWith("第");
    const numeral = ordinal ? zhNumber.slice(1) : zhNumber;
    const measured = ZH_MEASURE.test(text.slice(end, end + 2));
    // 一些, 一定: no positional character, no measure word after, no 第 before: not a number.
    if (numeral === "" || (!ordinal && !ZH_POSITIONAL.test(numeral) && !measured)) return [];
    return [
      numberMention(String(chineseValue(numeral)), ordinal ? undefined : unitAfter(text, end), zhNumber),
    ];
  }
  if (number !== undefined) {
    // A sign directly before the digits belongs to the number: −18 °C is not 18 °C.
    const unsigned = currency === undefined ? number : number.slice(currency.length);
    const digits = /^[-\u2212]/u.test(unsigned) ? `-${unsigned.slice(1)}` : unsigned.replace(/^\+/, "");
    const magnitude = MAGNITUDE_AFTER.exec(text.slice(end, end + 2))?.[1];
    const after = magnitude === undefined ? end : end + magnitude.length;
    const code =
      currency === undefined ? CODE_BEFORE.exec(text.slice(Math.max(0, start - 5), start))?.[1] : undefined;
    const codeUnit = code !== undefined && resolveUnit(code)?.kind === "opaque" ? code : undefined;
    const unit =
      currency !== undefined ? CURRENCY_SYMBOLS[currency.trim()] : (codeUnit ?? unitAfter(text, after));
    const raw = `${number}${magnitude ?? ""}`;
    // The raw text holds the magnitude, so what follows it (元 in 1.25万元) is read as its unit.
    if (unit !== undefined) return [numberMention(scaled(digits, magnitude), unit, raw)];
    return [rangeNumber(scaled(digits, magnitude), rangeUnitAfter(text, after), raw)];
  }
  if (token !== undefined && /\d/.test(token) && !/[A-Za-z]/.test(token))
    return digitRunMentions(token, text, end);
  if (token !== undefined && /\d/.test(token)) {
    // A hyphenated unit word: "30-second" is 30 s, "90-day" 90 d.
    const hyphenated = /^(\d+(?:\.\d+)?)-([A-Za-z]+)$/.exec(token);
    if (hyphenated?.[1] && hyphenated[2] && proseUnit(hyphenated[2]) !== undefined)
      return [numberMention(hyphenated[1], hyphenated[2], token)];
    const attached = ATTACHED_UNIT.exec(token);
    const suffix = attached?.[2];
    if (attached?.[1] && suffix && MAGNITUDES[suffix] !== undefined)
      return [numberMention(scaled(attached[1], suffix), unitAfter(text, end), token)];
  }
  const single = mentionOf(groups);
  return single === null ? [] : [single];
}

/**
 * Digits the number alternative refused: a range "3-5" (both numbers), a list, a version. A token
 * is an id only if it holds a letter and a digit (CONTRACT §4b).
 */
function digitRunMentions(token: string, text: string, end: number): Mention[] {
  const unit = unitAfter(text, end);
  const parts = token
    .split(/[-_]/u)
    .flatMap((part) => (/^\d+(\.\d+)?$/.test(part) ? [part] : part.split(".")));
  // "10-16 km": both ends of a range of two numbers are in km.
  const range = unit !== undefined && RANGE_TOKEN.test(token);
  return parts
    .filter((part) => part !== "")
    .map((part, index) =>
      index === parts.length - 1
        ? numberMention(part, unit, part)
        : range
          ? rangeNumber(part, unit, part)
          : numberMention(part, undefined, part),
    );
}
const RANGE_TOKEN = /^\d+(?:\.\d+)?-\d+(?:\.\d+)?$/u;

/**
 * The unit of a range's second number, when one follows right after a bare number ("10 to 16 km",
 * "5–10%", "3 至 5 天"): the first end is in it too.
 */
function rangeUnitAfter(text: string, position: number): string | undefined {
  const next = RANGE_NEXT.exec(text.slice(position, position + 40));
  return next === null ? undefined : unitAfter(text, position + next[0].length);
}
const RANGE_NEXT = /^\s*(?:to(?![A-Za-z])|[-\u2013\u2014~\uFF5E至到])\s*\d[\d,]*(?:\.\d+)?/u;

/** A bare number that a range gives a unit: held, and holding, with that unit or without one. */
function rangeNumber(digits: string, unit: string | undefined, raw: string): NumberMention {
  return unit === undefined
    ? numberMention(digits, undefined, raw)
    : { ...numberMention(digits, unit, raw), rangeUnit: true };
}

/**
 * `07-27` is July 27 (a month-day); `10-12` is October 12 or the range 10 to 12, held either way;
 * with a unit after it (`10-12 days`), a month name (`12-29 Dec`) or 日 (`12月10-12日`), or when it is
 * no real month-day (`13-17`), it is a range, as any digit run (CONTRACT §4b).
 */
function numericMonthDayMentions(token: string, text: string, end: number): Mention[] {
  const read =
    unitAfter(text, end) === undefined ? readNumericMonthDay(token, text.slice(end, end + 16)) : null;
  const mention = read === null ? null : monthDayMention(read.month, read.day, token);
  if (read === null || mention === null || mention.kind !== "date") return digitRunMentions(token, text, end);
  if (!read.alsoRange) return [mention];
  const [first = "", second = ""] = token.split("-");
  return [
    { ...mention, range: [numberMention(first, undefined, first), numberMention(second, undefined, second)] },
  ];
}

/** A number in scientific notation, as written in a token: `1e-4`, `2.5E+3`. */
const SCIENTIFIC_NUMBER = /^\d+(?:\.\d+)?e[-+]?\d+$/i;

function mentionOf(groups: Record<string, string | undefined>): Mention | null {
  const { zhMonthDay, monthDayFirst, dayMonthFirst } = groups;
  if (zhMonthDay !== undefined) {
    const [m, d] = (zhMonthDay.match(/\d+/g) ?? []).map(Number);
    return monthDayMention(m ?? 0, d ?? 0, zhMonthDay);
  }
  if (monthDayFirst !== undefined) {
    const [, name = "", day = ""] = /^([A-Za-z]+)\.?\s+(\d{1,2})/.exec(monthDayFirst) ?? [];
    return monthDayMention(monthNumber(name), Number(day), monthDayFirst);
  }
  if (dayMonthFirst !== undefined) {
    const [, day = "", name = ""] = /^(\d{1,2})[a-z]*\s+([A-Za-z]+)/i.exec(dayMonthFirst) ?? [];
    return monthDayMention(monthNumber(name), Number(day), dayMonthFirst);
  }
  const { isoDateTime, isoDate, slashDate, zhDate, monthFirst, dayFirst, uuid, token } = groups;
  if (isoDateTime !== undefined || isoDate !== undefined) {
    const raw = (isoDateTime ?? isoDate) as string;
    // A space for `T` and a trailing UTC read as ISO 8601 writes them (CONTRACT §4b).
    const key = canonicalDate(raw.replace(" ", "T").replace(/ ?UTC$/u, "Z"));
    return { kind: "date", key: key ?? `${IMPOSSIBLE_DATE}${raw}`, raw };
  }
  if (slashDate !== undefined) {
    const [y, m, d] = slashDate.split(/[/.]/).map(Number);
    return dateMention(y ?? 0, m ?? 0, d ?? 0, slashDate);
  }
  const { ofDate, monthYear, zhMonthYear } = groups;
  if (ofDate !== undefined) {
    const [, day = "", name = "", year = ""] =
      /(\d{1,2})[a-z]*\s+of\s+([A-Za-z]+)\D*?(\d{4})$/i.exec(ofDate) ?? [];
    return dateMention(Number(year), monthNumber(name), Number(day), ofDate);
  }
  if (monthYear !== undefined) {
    const [, name = "", year = ""] = /^([A-Za-z]+)\D*?(\d{4})$/.exec(monthYear) ?? [];
    return monthYearMention(Number(year), monthNumber(name), monthYear);
  }
  if (zhMonthYear !== undefined) {
    const [y, m] = (zhMonthYear.match(/\d+/g) ?? []).map(Number);
    return monthYearMention(y ?? 0, m ?? 0, zhMonthYear);
  }
  if (zhDate !== undefined) {
    const [y, m, d] = (zhDate.match(/\d+/g) ?? []).map(Number);
    return dateMention(y ?? 0, m ?? 0, d ?? 0, zhDate);
  }
  if (monthFirst !== undefined) {
    const [, name = "", day = "", year = ""] =
      /^([A-Za-z]+)\.?\s+(\d{1,2})\D*?(\d{4})$/.exec(monthFirst) ?? [];
    return dateMention(Number(year), monthNumber(name), Number(day), monthFirst);
  }
  if (dayFirst !== undefined) {
    const [, day = "", name = "", year = ""] =
      /^(\d{1,2})[a-z]*\s+([A-Za-z]+)\D*?(\d{4})$/i.exec(dayFirst) ?? [];
    return dateMention(Number(year), monthNumber(name), Number(day), dayFirst);
  }
  if (uuid !== undefined) return { kind: "id", key: uuid.toLowerCase(), raw: uuid };
  if (token !== undefined) {
    if (!/\d/.test(token)) return null;
    // "1e-4" is a number in scientific notation (0.0001), not an id.
    if (SCIENTIFIC_NUMBER.test(token) && isBoundedDecimal(token))
      return numberMention(token, undefined, token);
    const ordinal = /^(\d+)(?:st|nd|rd|th)$/i.exec(token)?.[1];
    if (ordinal !== undefined) return numberMention(ordinal, undefined, token);
    const attached = ATTACHED_UNIT.exec(token);
    if (attached?.[1] && attached[2] && proseUnit(attached[2]) !== undefined)
      return numberMention(attached[1], attached[2], token);
    return { kind: "id", key: token, raw: token };
  }
  return null;
}

/** Every number (with unit), date and id in the text, in order, plus its count of negation cues. */
/**
 * Every mention kind holds a digit, a number word or a Chinese numeral, is a hex-only UUID, or
 * names a weekday.
 */
const MAY_HOLD_MENTION = new RegExp(
  String.raw`\d|[0-9a-f]{8}-[0-9a-f]{4}-|[〇零一二两三四五六七八九十百千万亿]|\b(?:${NUMBER_WORD}|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth)\b|${WEEKDAY_PATTERN}`,
  "iu",
);

/** Zero-width characters (and the soft hyphen) removed before extraction (CONTRACT §4b). */
const ZERO_WIDTH = /[\u200B-\u200D\u2060\uFEFF\u00AD]/gu;

/** The full-width colon: punctuation in CJK text ("OPS-88：10月30日前"), never part of an id or a time. */
const FULLWIDTH_COLON = /\uFF1A/gu;

/**
 * The text as the extractor reads it (CONTRACT §4b): NFKC (full-width １２５００ is 12500) without
 * zero-width characters, the full-width colon read as a colon and a space (NFKC alone would join
 * "OPS-88" and "10月" into one id). Ids stay case- and script-sensitive: NFKC folds neither case nor
 * script.
 */
export function normalizeForExtraction(text: string): string {
  return text.replace(FULLWIDTH_COLON, ": ").normalize("NFKC").replace(ZERO_WIDTH, "");
}

export function extractMentions(raw: string): TextMentions {
  const known = recentlyRead.get(raw);
  if (known !== undefined) return known;
  const read = readMentions(raw);
  // A bounded memo: a restatement that quotes its source (the common, honest case) is read once.
  if (recentlyRead.size >= RECENTLY_READ_LIMIT) recentlyRead.clear();
  recentlyRead.set(raw, read);
  return read;
}

/** Texts read lately, by their raw text; results are frozen, so sharing them is safe. */
const recentlyRead = new Map<string, TextMentions>();
const RECENTLY_READ_LIMIT = 200_000;

function readMentions(raw: string): TextMentions {
  const normalized = normalizeForExtraction(raw);
  const cues = countCues(normalized);
  if (!MAY_HOLD_MENTION.test(normalized))
    return Object.freeze({
      mentions: Object.freeze([]) as unknown as Mention[],
      negationCues: cues.negation,
      cues: Object.freeze(cues) as CueCounts,
    });
  const text = normalized;
  const mentions: Mention[] = [];
  for (const match of text.matchAll(SCANNER)) {
    const start = match.index ?? 0;
    mentions.push(...mentionsOf(match.groups ?? {}, text, start, start + match[0].length));
  }
  return Object.freeze({
    mentions: Object.freeze(mentions) as Mention[],
    negationCues: cues.negation,
    cues: Object.freeze(cues) as CueCounts,
  });
}

/**
 * What of a text's mentions a restatement must keep (CONTRACT §4b): all but its weekdays, which
 * are held (a text naming a weekday no source holds is refused) but may be written as the date
 * they stand for.
 */
export function mentionsToKeep(read: TextMentions): TextMentions {
  if (!read.mentions.some((mention) => mention.kind === "date" && isWeekdayKey(mention.key))) return read;
  return Object.freeze({
    ...read,
    mentions: Object.freeze(
      read.mentions.filter((mention) => !(mention.kind === "date" && isWeekdayKey(mention.key))),
    ) as Mention[],
  });
}

/** Identity of a mention for set comparison. */
export function mentionKey(mention: Mention): string {
  return `${mention.kind}:${mention.key}`;
}

/**
 * The identities a mention is kept under: its own, and for a range's first end ("10 to 16 km") the
 * bare number's too (CONTRACT §4b "A range's unit").
 */
export function mentionKeys(mention: Mention): string[] {
  const key = mentionKey(mention);
  if (mention.kind !== "number" || !mention.rangeUnit) return [key];
  const bare = quantityKey({ unitKey: "", baseValue: mention.number, number: mention.number });
  return [key, `number:${bare}`];
}
