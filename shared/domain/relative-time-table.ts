/**
 * The relative time expressions chrono-node misses or misreads (CONTRACT §4b "Relative time"),
 * as data: each row is a phrase pattern and what it resolves to against the day an event happened.
 * Where a row's phrase is written, its reading stands and chrono's readings of the same words are
 * dropped. Measured on five LoCoMo conversations and the Chinese forms chrono 2.10.3 leaves unread:
 * it reads "night tomorrow" in "opening night tomorrow" as today, "day after tomorrow" as tomorrow,
 * "next month" on August 31 as October and "last month" on March 31 as March, a bare "Friday" as
 * whichever Friday is nearer, "for 4 years" as four years ahead, 上周日 and 这周日 in a week that
 * starts on Sunday, and does not read "this week", "last summer", "on the 15th", 后天, 上周, 下个月,
 * 去年 or 三天前.
 *
 * A pattern is lower case; a slot in braces stands for a list of words: `{weekday}` an English
 * weekday name (`Friday`, `Fri`), `{zhweekday}` 周五, 星期五 or 礼拜五, `{count}` an English count
 * (digits, `a`, `four`), `{n}` a Chinese one (digits or numerals), `{ordinal}` a day of the month
 * (`15th`), `{season}` spring, summer, autumn, fall or winter. English patterns match whole words,
 * case-insensitive.
 */

/** A weekday reading, against the reference day R (the day the event happened). */
export type WeekdayReading =
  /** The nearest such weekday on or before R, or on or after it (R itself when it is one). */
  | "onOrBefore"
  | "onOrAfter"
  /** The nearest strictly before R, or strictly after it. */
  | "before"
  | "after"
  /** That weekday in R's Monday-to-Sunday week moved by `weeks`. */
  | { weeks: number };

export type Resolution =
  | { unit: "day"; offset: number }
  /** The Monday-to-Sunday week `offset` weeks from R's. */
  | { unit: "week"; offset: number }
  /** The Saturday and Sunday of each week `offsets` names (a weekend is its two days). */
  | { unit: "weekend"; offsets: readonly number[] }
  | { unit: "month"; offset: number }
  | { unit: "year"; offset: number }
  /** The `{weekday}` or `{zhweekday}` slot, read each of these ways. */
  | { unit: "weekday"; readings: readonly WeekdayReading[] }
  /**
   * `{n}` or `{count}` days, weeks, months or years before (sign -1) or after (sign 1) R: a day,
   * a week, a month, or a year with R's month in it ("a year ago" in August 2023: August 2022).
   */
  | { unit: "counted"; of: "day" | "week" | "month" | "year"; sign: -1 | 1 }
  /** For `{count}` years or months until R: the year (or the month) it began. */
  | { unit: "duration"; of: "month" | "year" }
  /** The `{season}` slot: the latest one that ended before R's month, R's own, the next to start. */
  | { unit: "season"; which: "last" | "this" | "next" }
  /** The `{ordinal}` or `{n}` day of a month: its nearest occurrence on or before R and on or after. */
  | { unit: "dayOfMonth" };

export interface RelativeRow {
  patterns: readonly string[];
  resolves: Resolution;
  /**
   * A bare weekday: not read when it recurs (`every Friday`, `Fridays`, 每周五) or labels a date
   * written beside it (`Sat Dec 12`, `Friday, 8 May`, `(周五)` after 5月8日).
   */
  bare?: true;
  /** Characters that may not stand right before the phrase (Chinese has no spaces between words). */
  notAfter?: string;
}

/** "for 3 years", "for about 3 years", "for the past 3 years" … of a unit. */
function durations(unit: string): string[] {
  return ["for", "for the past", "for the last"].flatMap((lead) =>
    ["", "about ", "over ", "almost ", "nearly "].map(
      (approximately) => `${lead} ${approximately}{count} ${unit}`,
    ),
  );
}

/** Prefixes meaning "of the week before" (上), "this week's" (这, 本) and "of the week after" (下). */
const zhWeekdayRows = (prefixes: readonly string[], weeks: number): RelativeRow => ({
  patterns: prefixes.flatMap((prefix) => [`${prefix}{zhweekday}`, `${prefix}个{zhweekday}`]),
  resolves: { unit: "weekday", readings: [{ weeks }] },
});

export const RELATIVE_ROWS: readonly RelativeRow[] = [
  // English: days chrono misreads in company ("opening night tomorrow", "day after tomorrow").
  { patterns: ["tomorrow", "tmrw", "tmr"], resolves: { unit: "day", offset: 1 } },
  { patterns: ["yesterday"], resolves: { unit: "day", offset: -1 } },
  { patterns: ["day after tomorrow", "overmorrow"], resolves: { unit: "day", offset: 2 } },
  { patterns: ["day before yesterday"], resolves: { unit: "day", offset: -2 } },
  // "last night" is the evening before, whatever the hour it is said at.
  { patterns: ["last night"], resolves: { unit: "day", offset: -1 } },
  { patterns: ["this week"], resolves: { unit: "week", offset: 0 } },
  // Months counted on the calendar: chrono adds days and overflows at a month's end.
  { patterns: ["last month", "past month"], resolves: { unit: "month", offset: -1 } },
  { patterns: ["this month"], resolves: { unit: "month", offset: 0 } },
  { patterns: ["next month", "coming month"], resolves: { unit: "month", offset: 1 } },
  {
    patterns: ["{count} month ago", "{count} months ago", "{count} months back"],
    resolves: { unit: "counted", of: "month", sign: -1 },
  },
  {
    patterns: ["in {count} month", "in {count} months", "{count} months later", "{count} months from now"],
    resolves: { unit: "counted", of: "month", sign: 1 },
  },
  // Years counted back keep their month: chrono knows only the year of "a year ago".
  {
    patterns: ["{count} year ago", "{count} years ago", "{count} years back"],
    resolves: { unit: "counted", of: "year", sign: -1 },
  },
  {
    patterns: ["in {count} year", "in {count} years", "{count} years later", "{count} years from now"],
    resolves: { unit: "counted", of: "year", sign: 1 },
  },
  // "I've had them for 3 years": since the year (or month) it began.
  {
    patterns: durations("years"),
    resolves: { unit: "duration", of: "year" },
  },
  {
    patterns: durations("months"),
    resolves: { unit: "duration", of: "month" },
  },
  { patterns: ["the week before last"], resolves: { unit: "week", offset: -2 } },
  // Weekdays: English "last Friday" and "next Friday" are read two ways by the people who say them.
  {
    patterns: ["{weekday}"],
    resolves: { unit: "weekday", readings: ["onOrBefore", "onOrAfter"] },
    bare: true,
  },
  {
    patterns: ["last {weekday}", "past {weekday}", "this past {weekday}"],
    resolves: { unit: "weekday", readings: ["before", { weeks: -1 }] },
  },
  { patterns: ["next {weekday}"], resolves: { unit: "weekday", readings: ["after", { weeks: 1 }] } },
  {
    patterns: ["this {weekday}", "this coming {weekday}", "coming {weekday}"],
    resolves: { unit: "weekday", readings: [{ weeks: 0 }, "onOrAfter"] },
  },
  {
    patterns: ["last weekend", "past weekend", "this past weekend"],
    resolves: { unit: "weekend", offsets: [-1] },
  },
  { patterns: ["this weekend", "this coming weekend"], resolves: { unit: "weekend", offsets: [0] } },
  { patterns: ["next weekend"], resolves: { unit: "weekend", offsets: [1] } },
  { patterns: ["the weekend"], resolves: { unit: "weekend", offsets: [-1, 0] } },
  { patterns: ["last {season}", "past {season}"], resolves: { unit: "season", which: "last" } },
  { patterns: ["this {season}"], resolves: { unit: "season", which: "this" } },
  { patterns: ["next {season}", "coming {season}"], resolves: { unit: "season", which: "next" } },
  {
    patterns: ["on the {ordinal}", "by the {ordinal}", "until the {ordinal}", "since the {ordinal}"],
    resolves: { unit: "dayOfMonth" },
  },
  // Chinese: what chrono does not read, and weekdays in a week that starts on Monday.
  // Not the 后天 of 以后天气 ("the weather from now on") or 之后天天.
  { patterns: ["后天"], resolves: { unit: "day", offset: 2 }, notAfter: "以之然最前背而此" },
  { patterns: ["大后天"], resolves: { unit: "day", offset: 3 } },
  {
    patterns: ["上周", "上星期", "上个星期", "上礼拜", "上个礼拜"],
    resolves: { unit: "week", offset: -1 },
  },
  { patterns: ["上上周", "上上个星期", "上上个礼拜"], resolves: { unit: "week", offset: -2 } },
  {
    patterns: ["本周", "这周", "这星期", "这个星期", "本星期", "这礼拜", "这个礼拜"],
    resolves: { unit: "week", offset: 0 },
  },
  {
    patterns: ["下周", "下星期", "下个星期", "下礼拜", "下个礼拜"],
    resolves: { unit: "week", offset: 1 },
  },
  { patterns: ["下下周", "下下个星期", "下下个礼拜"], resolves: { unit: "week", offset: 2 } },
  {
    patterns: ["{zhweekday}"],
    resolves: { unit: "weekday", readings: ["onOrBefore", "onOrAfter"] },
    bare: true,
  },
  zhWeekdayRows(["上"], -1),
  zhWeekdayRows(["上上"], -2),
  zhWeekdayRows(["这", "本"], 0),
  zhWeekdayRows(["下"], 1),
  zhWeekdayRows(["下下"], 2),
  { patterns: ["上周末", "上个周末"], resolves: { unit: "weekend", offsets: [-1] } },
  { patterns: ["这周末", "本周末", "这个周末"], resolves: { unit: "weekend", offsets: [0] } },
  { patterns: ["下周末", "下个周末"], resolves: { unit: "weekend", offsets: [1] } },
  // Not 每个周末 / 每周末 (every weekend).
  { patterns: ["周末"], resolves: { unit: "weekend", offsets: [-1, 0] }, notAfter: "每个" },
  { patterns: ["上个月", "上月"], resolves: { unit: "month", offset: -1 } },
  { patterns: ["上上个月"], resolves: { unit: "month", offset: -2 } },
  { patterns: ["本月", "这个月", "这月"], resolves: { unit: "month", offset: 0 } },
  { patterns: ["下个月", "下月"], resolves: { unit: "month", offset: 1 } },
  { patterns: ["下下个月"], resolves: { unit: "month", offset: 2 } },
  { patterns: ["去年"], resolves: { unit: "year", offset: -1 } },
  { patterns: ["前年"], resolves: { unit: "year", offset: -2 } },
  { patterns: ["大前年"], resolves: { unit: "year", offset: -3 } },
  { patterns: ["今年"], resolves: { unit: "year", offset: 0 } },
  { patterns: ["明年"], resolves: { unit: "year", offset: 1 } },
  { patterns: ["后年"], resolves: { unit: "year", offset: 2 } },
  ...(
    [
      ["day", ["天", "日"]],
      ["week", ["周", "星期", "个星期", "个礼拜"]],
      ["month", ["个月"]],
      ["year", ["年"]],
    ] as const
  ).flatMap(([of, units]) => [
    {
      patterns: units.flatMap((unit) => ["前", "以前", "之前"].map((ago) => `{n}${unit}${ago}`)),
      resolves: { unit: "counted", of, sign: -1 } as const,
    },
    {
      patterns: units.flatMap((unit) => ["后", "以后", "之后"].map((later) => `{n}${unit}${later}`)),
      resolves: { unit: "counted", of, sign: 1 } as const,
    },
  ]),
  { patterns: ["{n}号"], resolves: { unit: "dayOfMonth" } },
];

/** The slots' words. English weekday names come from the extractor's own list (day-forms.ts). */
export const SEASON_MONTHS: Record<string, readonly number[]> = {
  spring: [3, 4, 5],
  summer: [6, 7, 8],
  autumn: [9, 10, 11],
  fall: [9, 10, 11],
  winter: [12, 1, 2],
};
