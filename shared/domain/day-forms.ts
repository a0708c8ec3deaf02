import { calendarDay } from "./dates.ts";

/**
 * Forms of a day the extractor reads beside full dates (CONTRACT §4b "Days without a year"): the
 * names of the weekdays, in English and Chinese, and a month-day written in numbers (`07-27`).
 * Data and small readers only; `mentions.ts` puts them in its scanner.
 */

/** English weekday names, ISO numbered (1 is Monday): full names and their abbreviations. */
const ENGLISH_WEEKDAYS: ReadonlyArray<{ day: number; name: string; abbreviations: readonly string[] }> = [
  { day: 1, name: "monday", abbreviations: ["mon"] },
  { day: 2, name: "tuesday", abbreviations: ["tues", "tue"] },
  { day: 3, name: "wednesday", abbreviations: ["weds", "wed"] },
  { day: 4, name: "thursday", abbreviations: ["thurs", "thur", "thu"] },
  { day: 5, name: "friday", abbreviations: ["fri"] },
  { day: 6, name: "saturday", abbreviations: ["sat"] },
  { day: 7, name: "sunday", abbreviations: ["sun"] },
];

/** The characters naming a weekday after 周, 星期 or 礼拜 (日 and 天 are Sunday). */
const CHINESE_WEEKDAY_CHARS: Record<string, number> = {
  一: 1,
  二: 2,
  三: 3,
  四: 4,
  五: 5,
  六: 6,
  日: 7,
  天: 7,
};

/**
 * What may not follow a Chinese weekday: a measure word makes it a count (每周三次 is three times a
 * week, 每周三天 three days a week), never Wednesday.
 */
const CHINESE_COUNTED = "次个天周月年小分秒岁倍人位名家件条项份张台页";

const ENGLISH_NAMES = ENGLISH_WEEKDAYS.map(({ name }) => name).join("|");
const ENGLISH_ABBREVIATIONS = ENGLISH_WEEKDAYS.flatMap(({ abbreviations }) => abbreviations).join("|");

/** One English weekday as written, a full name or an abbreviation (`weekdayOf` says which count). */
export const ENGLISH_WEEKDAY = String.raw`(?:${ENGLISH_NAMES}|(?:${ENGLISH_ABBREVIATIONS})\.?)`;

/** One Chinese weekday: 周五, 星期五, 礼拜五, not counted (每周三次 is no Wednesday). */
export const CHINESE_WEEKDAY = `(?:周|星期|礼拜)[一二三四五六日天](?![${CHINESE_COUNTED}])`;

/**
 * A weekday as written: a full English name (any case, `Mondays` too), an abbreviation (`Tue`,
 * `Thurs.`; only capitalised, so "I sat" and "the sun" are no days: see `weekdayOf`), or 周五, 星期五,
 * 礼拜五 not followed by a measure word. A source for the extractor's scanner (flags `giu`).
 */
export const WEEKDAY_PATTERN = String.raw`(?<![A-Za-z])(?:(?:${ENGLISH_NAMES})s?|(?:${ENGLISH_ABBREVIATIONS})\.?)(?![A-Za-z])|${CHINESE_WEEKDAY}`;

/**
 * The words a weekday is written with (its English name and abbreviations, 周五, 星期五, 礼拜五), for
 * the text support of a claim naming a weekday its source holds by when it happened.
 */
export function weekdayNames(isoWeekday: number): string[] {
  const english = ENGLISH_WEEKDAYS.find(({ day }) => day === isoWeekday);
  if (english === undefined) return [];
  const chinese = Object.entries(CHINESE_WEEKDAY_CHARS)
    .filter(([, day]) => day === isoWeekday)
    .flatMap(([char]) => ["周", "星期", "礼拜"].map((lead) => `${lead}${char}`));
  return [english.name, ...english.abbreviations, ...chinese];
}

const ENGLISH_BY_WORD = new Map<string, number>(
  ENGLISH_WEEKDAYS.flatMap(({ day, name, abbreviations }) => [
    [name, day] as const,
    ...abbreviations.map((abbreviation) => [abbreviation, day] as const),
  ]),
);

/**
 * The ISO weekday (1 Monday … 7 Sunday) a token the scanner matched names, or null when it names
 * none: an abbreviation written in lower case ("sat", "sun", "wed" are words first).
 */
export function weekdayOf(raw: string): number | null {
  const chinese = CHINESE_WEEKDAY_CHARS[raw.slice(-1)];
  if (/^(?:周|星期|礼拜)/u.test(raw)) return chinese ?? null;
  const word = raw.replace(/\.$/u, "").toLowerCase();
  const full = ENGLISH_BY_WORD.get(word) ?? ENGLISH_BY_WORD.get(word.replace(/s$/u, ""));
  if (full === undefined) return null;
  const isFullName = ENGLISH_WEEKDAYS.some(({ name }) => word === name || word === `${name}s`);
  // An abbreviation is a day only capitalised as a name is: `Sat`, `Thurs.`, not "sat" or "SAT".
  return isFullName || /^[A-Z][a-z]/u.test(raw) ? full : null;
}

/** The key a weekday is held and compared by: `weekday:5` is Friday (ISO numbering). */
export function weekdayKey(isoWeekday: number): string {
  return `${WEEKDAY_KEY}${isoWeekday}`;
}
const WEEKDAY_KEY = "weekday:";

/**
 * Whether a date key is a weekday's. A weekday is held and checked like any date, but never one a
 * restatement must keep: writing the date it stands for, or nothing beside the day the event
 * happened, keeps its meaning (CONTRACT §4b).
 */
export function isWeekdayKey(key: string): boolean {
  return key.startsWith(WEEKDAY_KEY);
}

/**
 * A month-day written in numbers, two digits each (`07-27`, `10-12`): the scanner's source. What
 * comes around it decides (see `readNumericMonthDay`): not inside a longer run of digits, dashes, dots,
 * slashes or colons (a phone number, a version, `08:00-20:00`).
 */
export const NUMERIC_MONTH_DAY_PATTERN = String.raw`(?<![\dA-Za-z_\-./:])\d{2}-\d{2}(?![\dA-Za-z_]|[-:./]\d)`;

/** English month names and their abbreviations, as the extractor reads them (a regex source). */
export const MONTH_NAMES =
  "jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?";

/** After the token: a month name or 日, 号, 月 makes `12-29 Dec` and `12月10-12日` a range of days. */
const DAY_RANGE_AFTER = new RegExp(String.raw`^\s*(?:${MONTH_NAMES})\b|^\s*[日号月]`, "iu");

/**
 * How a numeric month-day token is read (CONTRACT §4b): `month` and `day` when it is a real
 * month-day and nothing beside it makes it a range of days; null when it is only a range (two
 * numbers). `alsoRange` says whether it may also be the range of its two numbers: only when neither
 * part is written with a leading zero (`10-12` is October 12 or 10 to 12; nobody writes the range
 * 7 to 27 as `07-27`, so `07-28` is a day and never lets a changed `07-27` through).
 */
export function readNumericMonthDay(
  token: string,
  after: string,
): { month: number; day: number; alsoRange: boolean } | null {
  const [monthText = "", dayText = ""] = token.split("-");
  const month = Number(monthText);
  const day = Number(dayText);
  // 2000 is a leap year: 02-29 is a month-day that exists.
  if (calendarDay(2000, month, day) === null || DAY_RANGE_AFTER.test(after)) return null;
  return { month, day, alsoRange: !monthText.startsWith("0") && !dayText.startsWith("0") };
}
