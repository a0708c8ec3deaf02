/**
 * Dates compared as the contract says: a date equals a date on the same calendar day, a date-time
 * equals a date-time at the same instant (offsets normalised, no offset means UTC), and a date never
 * equals a date-time. Pure arithmetic: no Date object, no time zone database, no clock.
 */

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

export function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Canonical calendar day "YYYY-MM-DD", or null when the day does not exist. */
export function calendarDay(year: number, month: number, day: number): string | null {
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  return `${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`;
}

/** Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146097 + dayOfEra - 719468;
}

/**
 * The canonical key of an ISO 8601 date or date-time: "day:YYYY-MM-DD" or "instant:<seconds since
 * epoch, exact>"; null when the text is not a valid one.
 */
export function canonicalDate(text: string): string | null {
  const dateOnly = ISO_DATE.exec(text);
  if (dateOnly) {
    const day = calendarDay(Number(dateOnly[1]), Number(dateOnly[2]), Number(dateOnly[3]));
    return day === null ? null : `day:${day}`;
  }
  const dateTime = ISO_DATE_TIME.exec(text);
  if (!dateTime) return null;
  const [, y, mo, d, h, mi, s = "0", fraction = "", offset = "Z"] = dateTime;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (calendarDay(year, month, day) === null) return null;
  if (
    hour > 24 ||
    minute > 59 ||
    second > 60 ||
    (hour === 24 && (minute > 0 || second > 0 || /[1-9]/.test(fraction)))
  )
    return null;
  let offsetMinutes = 0;
  if (offset !== "Z" && offset !== "z") {
    const sign = offset.startsWith("-") ? -1 : 1;
    const digits = offset.slice(1).replace(":", "");
    const offsetHours = Number(digits.slice(0, 2));
    const offsetMins = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (offsetHours > 23 || offsetMins > 59) return null;
    offsetMinutes = sign * (offsetHours * 60 + offsetMins);
  }
  const wholeSeconds =
    daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offsetMinutes * 60;
  const trimmedFraction = fraction.replace(/0+$/, "");
  return `instant:${wholeSeconds}${trimmedFraction ? `.${trimmedFraction}` : ""}`;
}

/**
 * An ISO 8601 date or date-time as a fixed-width text whose order is time order: seconds since the
 * epoch (exact, offsets normalised, no offset means UTC) then nine fraction digits. A date stands
 * for the start of its day (UTC). Null when the text is not a valid date or date-time. What the
 * `latest` rule orders readings by (CONTRACT §2, selector v3).
 */
export function sortableInstant(text: string): string | null {
  const canonical = canonicalDate(text);
  if (canonical === null) return null;
  let seconds: number;
  let fraction = "";
  if (canonical.startsWith("day:")) {
    const [year, month, day] = canonical.slice(4).split("-").map(Number) as [number, number, number];
    seconds = daysFromCivil(year, month, day) * 86400;
  } else {
    const [whole, digits = ""] = canonical.slice("instant:".length).split(".");
    seconds = Number(whole);
    fraction = digits;
  }
  // Years 0000–9999 with any offset stay within ±3·10^11 s: shifted by 10^12 they are positive.
  return `${String(seconds + 1e12).padStart(13, "0")}.${fraction.padEnd(9, "0")}`;
}

/** The proleptic Gregorian date of a day number (days since 1970-01-01; Hinnant's civil_from_days). */
function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const dayOfEra = z - era * 146097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36524) - Math.floor(dayOfEra / 146096)) /
      365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shifted = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * shifted + 2) / 5) + 1;
  const month = shifted < 10 ? shifted + 3 : shifted - 9;
  return { year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

/** A calendar day "YYYY-MM-DD" moved by whole days (negative: earlier). */
export function addDays(day: string, days: number): string {
  const [year, month, date] = day.split("-").map(Number) as [number, number, number];
  const moved = civilFromDays(daysFromCivil(year, month, date) + days);
  return calendarDay(moved.year, moved.month, moved.day) as string;
}

/** The ISO weekday of a calendar day "YYYY-MM-DD": 1 is Monday, 7 is Sunday. */
export function isoWeekday(day: string): number {
  const [year, month, date] = day.split("-").map(Number) as [number, number, number];
  // 1970-01-01 was a Thursday (4).
  return ((((daysFromCivil(year, month, date) + 3) % 7) + 7) % 7) + 1;
}

/** The month-day key a full-date key also stands for, or null for instants and month-days. */
export function monthDayOf(key: string): string | null {
  return key.startsWith("day:") ? `monthday:${key.slice(9)}` : null;
}

/**
 * What a written date-time also holds (`2026-12-03 10:00` holds the day 2026-12-03 and the numbers
 * 10 and 0 as written): prose restating it as "Dec 3 at 10:00" is supported by it. Null for
 * anything but an ISO date-time.
 */
export function dateTimeParts(raw: string): { day: string; numbers: string[]; local: boolean } | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::\d{2})?/u.exec(raw);
  if (!match) return null;
  const day = calendarDay(Number(match[1]), Number(match[2]), Number(match[3]));
  return day === null
    ? null
    : {
        day: `day:${day}`,
        numbers: [String(Number(match[4])), String(Number(match[5]))],
        // Written with no offset or zone after it: a wall time, not an instant.
        local: match[0].length === raw.length,
      };
}

/** The month a day falls in (`day:2026-12-03` → `month:2026-12`): a held day holds its month. */
export function monthOf(key: string): string | null {
  return key.startsWith("day:") ? `month:${key.slice(4, 11)}` : null;
}

/** The English month names, lower-cased, January first. */
export const ENGLISH_MONTHS: readonly string[] = [
  "january",
  "february",
  "march",
  "april",
  "may",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december",
];
