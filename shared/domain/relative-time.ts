import type { ParsedComponents, ParsedResult } from "chrono-node";
import * as chronoEnglish from "chrono-node/en";
import * as chronoChinese from "chrono-node/zh";
import { addDays, calendarDay, daysInMonth, isoWeekday } from "./dates.ts";
import { CHINESE_WEEKDAY, ENGLISH_WEEKDAY, MONTH_NAMES, weekdayOf } from "./day-forms.ts";
import { normalizeForExtraction } from "./mentions.ts";
import { chineseValue, WORD_VALUES } from "./number-words.ts";
import type { RelativeRow, Resolution, WeekdayReading } from "./relative-time-table.ts";
import { RELATIVE_ROWS, SEASON_MONTHS } from "./relative-time-table.ts";

/**
 * Relative time resolved against the day an event happened (CONTRACT §4b "Relative time"): what
 * "yesterday", "last week", "next month", "last year", 上周五, 三天前 … in its text stand for, so a
 * restatement that writes the date they resolve to is held by the event. chrono-node reads the
 * text against the event's own date and time; the rows of `relative-time-table.ts` fill what it
 * misses and replace what it misreads. Pure: the reference is the event's `occurredAt`, never the
 * clock, and the result does not depend on the machine's time zone.
 */

/** What a text's relative time expressions resolve to (calendar days `YYYY-MM-DD`, months `YYYY-MM`). */
export interface ResolvedTime {
  /** Days resolved precisely: each is held with its weekday, month and year. */
  days: readonly string[];
  /** Days that bound a period (a week's Monday and Sunday, a weekend's days): dates, not weekdays. */
  bounds: readonly string[];
  months: readonly string[];
  years: readonly number[];
}

const NOTHING: ResolvedTime = Object.freeze({ days: [], bounds: [], months: [], years: [] });

/**
 * The reference of an `occurredAt`: its calendar day and time as written, in its own offset (a
 * date alone is its own day, at noon). Null when it is no calendar day.
 */
function referenceOf(occurredAt: string): { day: string; hour: number; minute: number } | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2}))?/u.exec(occurredAt);
  if (!match) return null;
  const day = calendarDay(Number(match[1]), Number(match[2]), Number(match[3]));
  if (day === null) return null;
  return {
    day,
    hour: match[4] === undefined ? 12 : Math.min(23, Number(match[4])),
    minute: Number(match[5] ?? 0),
  };
}

/**
 * Words without which a text holds no relative time expression either parser reads: the text is
 * not handed to chrono at all (most events say nothing about time).
 */
const TIME_WORDS = new RegExp(
  [
    String.raw`\b(?:yesterday|today|tonight|tomorrow|tmrw?|overmorrow|ago|later|hence)\b`,
    String.raw`\b(?:days?|weeks?|weekends?|months?|years?|night|morning|afternoon|evening|spring|summer|autumn|fall|winter)\b`,
    String.raw`\b(?:${MONTH_NAMES})\b|\d(?:st|nd|rd|th)\b`,
    `(?<![A-Za-z])${ENGLISH_WEEKDAY}(?![A-Za-z])`,
    "[昨今明前后去上下本这][天日年月周个星礼晚早]|周|星期|礼拜|[天日周年月]|号",
  ].join("|"),
  "iu",
);

const HAS_LATIN = /[A-Za-z]/u;
const HAS_CJK = /[\u3400-\u9fff]/u;

/** A Chinese count: digits, or numerals not continuing a number or a date (7月27日之后 is no count). */
const COUNT = String.raw`(?<![\d月〇零一二两三四五六七八九十百千])(?<n>\d+|[〇零一二两三四五六七八九十百千]+)`;
/** An English count: digits, `a`, `an` or a number word up to ninety (`four`, `twelve`). */
const ENGLISH_COUNT = `(?<count>\\d+|an?|${Object.keys(WORD_VALUES)
  .sort((a, b) => b.length - a.length)
  .join("|")})`;
const SLOTS: Record<string, string> = {
  count: ENGLISH_COUNT,
  weekday: `(?<weekday>${ENGLISH_WEEKDAY})(?![A-Za-z])`,
  zhweekday: `(?<zhweekday>${CHINESE_WEEKDAY})`,
  n: COUNT,
  ordinal: String.raw`(?<ordinal>\d{1,2})(?:st|nd|rd|th)`,
  season: `(?<season>${Object.keys(SEASON_MONTHS).join("|")})`,
};

/**
 * Each pattern compiled once, on its own (a slot's group name appears once in a regex; English
 * patterns match whole words, case-insensitive), with its longest word: a pattern whose word the
 * text does not hold is not tried.
 */
const COMPILED = RELATIVE_ROWS.flatMap((row) =>
  row.patterns.map((pattern) => {
    const literal = pattern.replace(/\{[a-z]+\}/gu, "");
    const body = pattern
      .split(/(\{[a-z]+\})/u)
      .map((part) => {
        const slot = /^\{([a-z]+)\}$/u.exec(part)?.[1];
        if (slot !== undefined) return SLOTS[slot] as string;
        return part.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&").replace(/ /gu, String.raw`\s+`);
      })
      .join("");
    const notAfter = row.notAfter === undefined ? "" : `(?<![${row.notAfter}])`;
    return {
      row,
      word: literal.split(/\s+/u).sort((a, b) => b.length - a.length)[0] as string,
      pattern: new RegExp(
        /[a-z]/u.test(literal) ? `(?<![A-Za-z])${body}(?![A-Za-z])` : `${notAfter}${body}`,
        "giu",
      ),
    };
  }),
);

/** A bare weekday that recurs (`every Friday`, 每周五) or labels a written date (`Sat Dec 12`). */
const RECURS_BEFORE = /(?:\bevery|\beach|每)\s*$/iu;
const DATE_AFTER = new RegExp(String.raw`^[\s,.(（]*(?:\d|(?:${MONTH_NAMES})\.?\s*\d)`, "iu");
const DATE_BEFORE = /[\d日号][\s,(（]*$/u;

interface TableMatch {
  start: number;
  end: number;
  row: RelativeRow;
  groups: Record<string, string | undefined>;
}

/** The table's phrases in the text, longest first where they overlap. */
function tableMatches(text: string): TableMatch[] {
  const found: TableMatch[] = [];
  const lower = text.toLowerCase();
  for (const { row, word, pattern } of COMPILED) {
    if (!lower.includes(word)) continue;
    for (const match of text.matchAll(pattern)) {
      const start = match.index ?? 0;
      const end = start + match[0].length;
      if (row.bare && isLabelOrRecurring(text, start, end)) continue;
      found.push({ start, end, row, groups: match.groups ?? {} });
    }
  }
  found.sort((a, b) => a.start - b.start || b.end - b.start - (a.end - a.start));
  const kept: TableMatch[] = [];
  for (const match of found) {
    const last = kept[kept.length - 1];
    if (last !== undefined && match.start < last.end) {
      // A longer phrase starting later wins over a shorter one it overlaps (上周 in 上周五 is part of it).
      if (match.end - match.start > last.end - last.start) kept[kept.length - 1] = match;
      continue;
    }
    kept.push(match);
  }
  return kept;
}

/** Whether [start, end) overlaps one of the matches (sorted, not overlapping): a binary search. */
function overlapsAny(matches: readonly TableMatch[], start: number, end: number): boolean {
  let low = 0;
  let high = matches.length;
  // The first match ending after `start`; it overlaps when it also begins before `end`.
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((matches[middle] as TableMatch).end <= start) low = middle + 1;
    else high = middle;
  }
  return low < matches.length && (matches[low] as TableMatch).start < end;
}

function isLabelOrRecurring(text: string, start: number, end: number): boolean {
  const before = text.slice(Math.max(0, start - 12), start);
  return RECURS_BEFORE.test(before) || DATE_BEFORE.test(before) || DATE_AFTER.test(text.slice(end, end + 16));
}

/** Collects what the expressions resolve to, each item once. */
class Collector {
  readonly days = new Set<string>();
  readonly bounds = new Set<string>();
  readonly months = new Set<string>();
  readonly years = new Set<number>();

  constructor(readonly reference: string) {}

  day(day: string): void {
    this.days.add(day);
  }

  /** The Monday-to-Sunday week holding `anchor`: its first and last days, and the anchor itself. */
  week(anchor: string): void {
    const monday = addDays(anchor, 1 - isoWeekday(anchor));
    this.bounds.add(monday);
    this.bounds.add(addDays(monday, 6));
    this.bounds.add(anchor);
  }

  weekend(weeks: number): void {
    const saturday = addDays(this.reference, 7 * weeks + 6 - isoWeekday(this.reference));
    this.bounds.add(saturday);
    this.bounds.add(addDays(saturday, 1));
  }

  month(year: number, month: number): void {
    this.months.add(`${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")}`);
  }

  year(year: number): void {
    this.years.add(year);
  }

  result(): ResolvedTime {
    if (this.days.size + this.bounds.size + this.months.size + this.years.size === 0) return NOTHING;
    return Object.freeze({
      days: [...this.days].sort(),
      bounds: [...this.bounds].sort(),
      months: [...this.months].sort(),
      years: [...this.years].sort((a, b) => a - b),
    });
  }
}

function ymd(day: string): [number, number, number] {
  return day.split("-").map(Number) as [number, number, number];
}

/** A month moved by whole months: [year, month]. */
function shiftMonth(year: number, month: number, by: number): [number, number] {
  const index = year * 12 + (month - 1) + by;
  return [Math.floor(index / 12), (index % 12) + 1];
}

function weekdayDay(reference: string, weekday: number, reading: WeekdayReading): string {
  const today = isoWeekday(reference);
  if (reading === "onOrBefore") return addDays(reference, -((today - weekday + 7) % 7));
  if (reading === "onOrAfter") return addDays(reference, (weekday - today + 7) % 7);
  if (reading === "before") return addDays(reference, -(((today - weekday + 6) % 7) + 1));
  if (reading === "after") return addDays(reference, ((weekday - today + 6) % 7) + 1);
  return addDays(reference, 7 * reading.weeks + weekday - today);
}

/** The day `dayOfMonth` of a month, or null when that month has no such day. */
function dayIn(year: number, month: number, dayOfMonth: number): string | null {
  return dayOfMonth <= daysInMonth(year, month) ? calendarDay(year, month, dayOfMonth) : null;
}

function countOf(groups: Record<string, string | undefined>): number | null {
  const written = groups.n ?? groups.count?.toLowerCase() ?? groups.ordinal;
  if (written === undefined) return null;
  const value = /^\d+$/u.test(written)
    ? Number(written)
    : groups.count !== undefined
      ? (WORD_VALUES[written] ?? (/^an?$/u.test(written) ? 1 : null))
      : chineseValue(written);
  if (value === null) return null;
  return Number.isSafeInteger(value) && value <= 10_000 ? value : null;
}

/** What one row's match resolves to. */
function resolveRow(into: Collector, resolves: Resolution, groups: Record<string, string | undefined>): void {
  const reference = into.reference;
  const [year, month, date] = ymd(reference);
  switch (resolves.unit) {
    case "day":
      into.day(addDays(reference, resolves.offset));
      return;
    case "week":
      into.week(addDays(reference, 7 * resolves.offset));
      return;
    case "weekend":
      for (const weeks of resolves.offsets) into.weekend(weeks);
      return;
    case "month":
      into.month(...shiftMonth(year, month, resolves.offset));
      return;
    case "year":
      into.year(year + resolves.offset);
      return;
    case "weekday": {
      const written = groups.weekday ?? groups.zhweekday ?? "";
      const weekday = weekdayOf(written);
      if (weekday === null) return;
      for (const reading of resolves.readings) into.day(weekdayDay(reference, weekday, reading));
      return;
    }
    case "counted": {
      const count = countOf(groups);
      if (count === null) return;
      const by = resolves.sign * count;
      if (resolves.of === "day") into.day(addDays(reference, by));
      else if (resolves.of === "week") into.week(addDays(reference, 7 * by));
      else if (resolves.of === "month") into.month(...shiftMonth(year, month, by));
      else {
        into.year(year + by);
        into.month(year + by, month);
      }
      return;
    }
    case "duration": {
      const count = countOf(groups);
      if (count === null) return;
      if (resolves.of === "month") into.month(...shiftMonth(year, month, -count));
      else into.year(year - count);
      return;
    }
    case "season": {
      const months = SEASON_MONTHS[(groups.season ?? "").toLowerCase()];
      if (months === undefined) return;
      for (const seasonYear of seasonYears(year, month, months, resolves.which)) into.year(seasonYear);
      return;
    }
    case "dayOfMonth": {
      const count = countOf(groups);
      if (count === null || count < 1 || count > 31) return;
      // The nearest such day on or before the reference, and on or after it.
      const [py, pm] = date >= count ? [year, month] : shiftMonth(year, month, -1);
      const [ny, nm] = date <= count ? [year, month] : shiftMonth(year, month, 1);
      for (const day of [dayIn(py, pm, count), dayIn(ny, nm, count)]) if (day !== null) into.day(day);
      return;
    }
  }
}

/**
 * The years a season's months fall in (northern hemisphere: summer is June to August, winter
 * December to February): the latest one that ended before the reference's month, the one of its
 * year (a winter: the one it is in, or the coming one), or the next to start after it.
 */
function seasonYears(
  year: number,
  month: number,
  months: readonly number[],
  which: "last" | "this" | "next",
): number[] {
  const first = months[0] as number;
  const wraps = first === 12;
  // The season is named by the year its first month falls in.
  const last = months[months.length - 1] as number;
  let start: number;
  if (which === "this") start = wraps && month <= 2 ? year - 1 : year;
  else if (which === "last")
    start = wraps ? (month > last ? year - 1 : year - 2) : month > last ? year : year - 1;
  else start = month < first ? year : year + 1;
  return wraps ? [start, start + 1] : [start];
}

/** Words that make a chrono reading no point in time: a duration ("for 4 years") or a vague count. */
const NOT_A_POINT = /^(?:for|over)\b|\b(?:few|couple|several|some|many)\b|几/iu;
/**
 * Hours and minutes ("2 hours ago"): within a day or two of the event's own, and the one reading
 * that could differ in a time zone where the event's wall-clock time falls in a daylight-saving gap.
 */
const HOURS = /\b(?:hours?|hrs?|minutes?|mins?|seconds?|secs?)\b|小时|分钟|秒钟/iu;
/** A weekend chrono reads as its Saturday or Sunday. */
const WEEKEND = /weekend|周末/iu;
/** A week named as such: its Monday and Sunday are held, not one day of it. */
const WEEK = /\bweeks?\b|周(?![一二三四五六日天末])|星期(?![一二三四五六日天])|礼拜(?![一二三四五六日天])/iu;
const DATE_COMPONENTS = ["day", "month", "year", "weekday"] as const;

/**
 * What one of chrono's readings resolves to (both ends of a range), or why the contract does not
 * take it.
 */
function resolveChrono(into: Collector, result: ParsedResult): string | null {
  const { text } = result;
  if (!(HAS_LATIN.test(text) || HAS_CJK.test(text))) return "digits only: the extractor reads numeric dates";
  if (NOT_A_POINT.test(text)) return "a duration or a vague count: no point in time";
  if (HOURS.test(text)) return "hours and minutes: the event's own day";
  const why = [result.start, ...(result.end ? [result.end] : [])].map((components) =>
    resolveComponents(into, components, text),
  );
  return why.every((reason) => reason !== null) ? (why[0] as string) : null;
}

function resolveComponents(into: Collector, components: ParsedComponents, text: string): string | null {
  const known = new Set(DATE_COMPONENTS.filter((component) => components.isCertain(component)));
  if (known.size === 0) return "no part of a date known";
  if (known.has("weekday") && !known.has("day")) return "a weekday alone: the table reads weekday phrases";
  const year = components.get("year");
  const month = components.get("month");
  const date = components.get("day");
  if (year === null || month === null) return "no year or month";
  if (known.has("day")) {
    const day = date === null ? null : calendarDay(year, month, date);
    if (day === null) return "no calendar day";
    if (WEEKEND.test(text)) return "a weekend: the table reads weekends";
    if (WEEK.test(text)) into.week(day);
    else into.day(day);
  } else if (known.has("month")) {
    // A month named alone ("in June") only as a name is written: "we march on" is no March.
    if (!known.has("year") && !/^[A-Z\u3400-\u9fff]/u.test(text.replace(/^(?:in|of)\s+/iu, "")))
      return "a month name not written as one";
    into.month(year, month);
  } else into.year(year);
  return null;
}

/** A range's end day written after a Chinese month-day with its month left out: 10月1日-7日, 11月25至27日. */
const ZH_RANGE_END = /^\s*[-–—~～至到]\s*(\d{1,2})\s*[日号]/u;

/**
 * The day that ends a range chrono read only the start of: "10月1日-7日" (the first to the seventh
 * of October) holds October 7 as surely as "Oct 1-7", which chrono reads whole. Null when no such
 * end follows, or it is no later day of the start's month.
 */
function zhRangeEnd(text: string, end: number, result: ParsedResult): { day: string; end: number } | null {
  if (result.end || !HAS_CJK.test(result.text)) return null;
  const match = ZH_RANGE_END.exec(text.slice(end, end + 12));
  const start = result.start;
  const year = start.get("year");
  const month = start.get("month");
  const first = start.get("day");
  if (match === null || year === null || month === null || first === null || !start.isCertain("day"))
    return null;
  const last = Number(match[1]);
  const day = last > first ? calendarDay(year, month, last) : null;
  return day === null ? null : { day, end: end + match[0].length };
}

/**
 * chrono's reference: the event's wall-clock date and time as a local Date. chrono computes in the
 * machine's local time (its "last night" and Chinese casual dates ignore the timezone option), so a
 * reference whose local fields are the event's own makes every result the same in any time zone.
 */
function chronoReference(reference: { day: string; hour: number; minute: number }): Date {
  const [year, month, date] = ymd(reference.day);
  const local = new Date(2000, 0, 1, 12, 0, 0, 0);
  local.setFullYear(year, month - 1, date);
  local.setHours(reference.hour, reference.minute, 0, 0);
  return local;
}

/** One expression read in a text: where, by whom, and what it resolves to (or why it was dropped). */
export interface TimeReading {
  start: number;
  end: number;
  text: string;
  by: "table" | "chrono";
  resolved: ResolvedTime;
  /** Why a chrono reading is not taken (a table phrase over it, a duration, "I sat" …). */
  dropped?: string;
}

/**
 * Every relative time expression of `text` read against `occurredAt` (CONTRACT §4b "Relative
 * time"), the dropped chrono readings included (for measuring what the parser misreads). Nothing
 * without a valid `occurredAt`. Linear in the text (an event's text is at most 16 KiB).
 */
export function readRelativeTime(text: string, occurredAt: string): TimeReading[] {
  const reference = referenceOf(occurredAt);
  if (reference === null) return [];
  const normalized = normalizeForExtraction(text);
  if (!TIME_WORDS.test(normalized)) return [];
  const readings: TimeReading[] = [];
  const table = tableMatches(normalized);
  for (const match of table) {
    const into = new Collector(reference.day);
    resolveRow(into, match.row.resolves, match.groups);
    const written = normalized.slice(match.start, match.end);
    readings.push({
      start: match.start,
      end: match.end,
      text: written,
      by: "table",
      resolved: into.result(),
    });
  }
  const instant = chronoReference(reference);
  const results = [
    ...(HAS_LATIN.test(normalized) ? chronoEnglish.parse(normalized, instant) : []),
    ...(HAS_CJK.test(normalized) ? chronoChinese.parse(normalized, instant) : []),
  ];
  for (const result of results) {
    const start = result.index;
    const end = start + result.text.length;
    const into = new Collector(reference.day);
    // Where the table reads a phrase, its reading stands: chrono's of the same words is dropped.
    const dropped = overlapsAny(table, start, end)
      ? "the table reads these words"
      : resolveChrono(into, result);
    const rangeEnd = dropped === null ? zhRangeEnd(normalized, end, result) : null;
    if (rangeEnd !== null) into.day(rangeEnd.day);
    readings.push({
      start,
      end: rangeEnd?.end ?? end,
      text: rangeEnd === null ? result.text : normalized.slice(start, rangeEnd.end),
      by: "chrono",
      resolved: into.result(),
      ...(dropped === null ? {} : { dropped }),
    });
  }
  return readings.sort((a, b) => a.start - b.start);
}

/**
 * What the relative time expressions of `text` resolve to against `occurredAt`: the union of its
 * readings that are taken. Callers cache it per event.
 */
export function resolveRelativeTime(text: string, occurredAt: string): ResolvedTime {
  const readings = readRelativeTime(text, occurredAt);
  const taken = readings.filter((reading) => reading.dropped === undefined);
  if (taken.length === 0) return NOTHING;
  if (taken.length === 1) return (taken[0] as TimeReading).resolved;
  const union = (pick: (resolved: ResolvedTime) => readonly string[]) =>
    [...new Set(taken.flatMap((reading) => pick(reading.resolved)))].sort();
  return Object.freeze({
    days: union((r) => r.days),
    bounds: union((r) => r.bounds),
    months: union((r) => r.months),
    years: [...new Set(taken.flatMap((reading) => reading.resolved.years))].sort((a, b) => a - b),
  });
}
