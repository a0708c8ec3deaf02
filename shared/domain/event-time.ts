import { canonicalDate, isoWeekday } from "./dates.ts";
import { weekdayKey } from "./day-forms.ts";
import { resolveRelativeTime } from "./relative-time.ts";
import type { SequencedEvent } from "./schemas.ts";

/**
 * What an event holds by when it happened (CONTRACT §4b "When it happened" and "Relative time"):
 * its own day in every form the extractor reads, and what the relative time expressions of its
 * text resolve to against that day. Read once per event object: the gate's context and the text
 * support of every claim citing the event share it.
 */
export interface EventTime {
  /** Date keys (`day:`, `instant:`, `month:`, `weekday:`) the event holds beyond its text. */
  dates: readonly string[];
  /** Day keys whose month-day and month are held too (`day:2023-01-19` holds `monthday:01-19`). */
  days: readonly string[];
  /** Years held as the numbers a text writes them as (`2022` for "last year"). */
  years: readonly string[];
}

const NO_TIME: EventTime = Object.freeze({ dates: [], days: [], years: [] });
const eventTimes = new WeakMap<SequencedEvent, EventTime>();

/**
 * The event's own day (its calendar day as written in `occurredAt`, its weekday and year, and the
 * instant when it has a time) and the days, weeks, months and years its text's relative
 * expressions resolve to. An event without `occurredAt` holds none of it.
 */
export function eventTime(event: SequencedEvent): EventTime {
  let time = eventTimes.get(event);
  if (time === undefined) {
    time = readEventTime(event);
    eventTimes.set(event, time);
  }
  return time;
}

function readEventTime(event: SequencedEvent): EventTime {
  const occurredAt = event.occurredAt;
  if (occurredAt === undefined) return NO_TIME;
  const text = event.text ?? "";
  let byDay = recentlyRead.get(text);
  const known = byDay?.get(occurredAt);
  if (known !== undefined) return known;
  const time = timeOf(text, occurredAt);
  if (byDay === undefined) {
    if (recentlyRead.size >= RECENTLY_READ_LIMIT) recentlyRead.clear();
    byDay = new Map();
    recentlyRead.set(text, byDay);
  }
  byDay.set(occurredAt, time);
  return time;
}

/**
 * Texts read lately, by text then occurredAt: a rebuild reads the same events again as new
 * objects, and a text and its day always hold alike. Bounded: cleared when full.
 */
const recentlyRead = new Map<string, Map<string, EventTime>>();
const RECENTLY_READ_LIMIT = 100_000;

function timeOf(text: string, occurredAt: string): EventTime {
  const ownDay = canonicalDate(occurredAt.slice(0, 10));
  if (ownDay === null) return NO_TIME;
  const dates = new Set<string>();
  const days = new Set<string>();
  const years = new Set<string>();
  const precise = (day: string) => {
    days.add(`day:${day}`);
    dates.add(weekdayKey(isoWeekday(day)));
    years.add(String(Number(day.slice(0, 4))));
  };
  precise(ownDay.slice(4));
  const instant = canonicalDate(occurredAt);
  if (instant?.startsWith("instant:")) dates.add(instant);
  const resolved = resolveRelativeTime(text, occurredAt);
  for (const day of resolved.days) precise(day);
  for (const day of resolved.bounds) {
    days.add(`day:${day}`);
    years.add(String(Number(day.slice(0, 4))));
  }
  for (const month of resolved.months) {
    dates.add(`month:${month}`);
    years.add(String(Number(month.slice(0, 4))));
  }
  for (const year of resolved.years) years.add(String(year));
  return Object.freeze({ dates: [...dates], days: [...days], years: [...years] });
}
