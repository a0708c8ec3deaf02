import { monthDayOf } from "./dates.ts";
import { extractMentions, normalizeForExtraction } from "./mentions.ts";

/**
 * Which side of a date a text places a thing (CONTRACT §4b "Time relations"): `upTo` for "by",
 * "before", "until", "no later than", 直到, 截至 before the date or 之前, 以前, 为止 after it;
 * `onward` for "after", "since", "from", "starting", 从, 自 before it or 之后, 以后, 起 after it.
 */
export type TimeRelation = "upTo" | "onward";

/** A date a text writes, with the side of it the words beside it place a thing on (null: neither). */
export interface PlacedDate {
  key: string;
  raw: string;
  relation: TimeRelation | null;
}

const UP_TO_BEFORE =
  /(?:^|[^\p{L}\p{N}])(?:by|before|until|till|no later than|not later than|prior to|due)\s+(?:on\s+|the\s+)?$|(?:直到|截至|截止到?)\s*$/iu;
const ONWARD_BEFORE =
  /(?:^|[^\p{L}\p{N}])(?:after|since|from|starting|beginning|effective)\s+(?:on\s+|from\s+|the\s+)?$|(?:从|自)\s*$/iu;
const UP_TO_AFTER = /^\s*(?:之前|以前|为止|前(?![天年月周日个]))/u;
const ONWARD_AFTER = /^\s*(?:之后|以后|起|开始|后(?![天年月周日个]))/u;

/** How far before a date its relation word may stand ("no later than the " and a little more). */
const LOOK_BEHIND = 24;

/**
 * The dates `text` writes, in order, each with the relation the words right beside it give. Linear
 * in the text: each date's raw text is found after the previous one.
 */
export function placedDates(text: string): PlacedDate[] {
  const normalized = normalizeForExtraction(text);
  const placed: PlacedDate[] = [];
  let cursor = 0;
  for (const mention of extractMentions(text).mentions) {
    const at = normalized.indexOf(mention.raw, cursor);
    if (at < 0) continue;
    cursor = at + mention.raw.length;
    if (mention.kind !== "date") continue;
    const before = normalized.slice(Math.max(0, at - LOOK_BEHIND), at);
    const after = normalized.slice(cursor, cursor + 4);
    const relation =
      UP_TO_BEFORE.test(before) || (!ONWARD_BEFORE.test(before) && UP_TO_AFTER.test(after))
        ? "upTo"
        : ONWARD_BEFORE.test(before) || ONWARD_AFTER.test(after)
          ? "onward"
          : null;
    placed.push({ key: mention.key, raw: mention.raw, relation });
  }
  return placed;
}

/** Whether two date keys name the same day (a full date and its month-day written without a year). */
export function sameDay(a: string, b: string): boolean {
  return a === b || monthDayOf(a) === b || monthDayOf(b) === a;
}

/**
 * The dates a restatement places on the other side from every source that places them (`by
 * 2026-12-05` restated `after 2026-12-05`): a source that writes the date with no relation word,
 * or with the restatement's own, lets it through. Each as `RAW` with the relation it turned into.
 */
export function turnedRelations(text: string, sources: readonly string[]): PlacedDate[] {
  const placed = placedDates(text).filter((date) => date.relation !== null);
  if (placed.length === 0) return [];
  const written = sources.flatMap(placedDates);
  return placed.filter((date) => {
    const same = written.filter((source) => sameDay(source.key, date.key));
    return same.some((source) => source.relation !== null) && !same.some((s) => s.relation === date.relation);
  });
}
