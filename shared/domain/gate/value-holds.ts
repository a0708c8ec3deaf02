import type { Mention } from "../mentions.ts";
import type { ValueData } from "../schemas.ts";
import { type HeldTokens, holdsMention, holdValue } from "./context.ts";

/**
 * A value is not repeated in text (CONTRACT §4b, issue 38): a number, date or id of an event's text
 * that a claim deriving from the event already holds in its structured value, canonically equal,
 * is kept by that claim; no text restating the event needs to write it again (the prompts tell
 * models never to repeat a value beside it).
 */

/** The numbers, dates and ids structured values hold, as the gate compares mentions with them. */
export function heldByValues(values: readonly ValueData[]): HeldTokens {
  const held: HeldTokens = { unitNumbers: new Set(), numbers: new Set(), dates: new Set(), ids: new Set() };
  for (const value of values) holdValue(held, value);
  return held;
}

/**
 * Whether structured values hold a mention: canonically equal (`holdsMention` over what they hold),
 * or, for a date-time written without an offset, a date-time value whose written local date and
 * time are those (see `wallTimeHeld`).
 */
export function valuesHold(values: readonly ValueData[], held: HeldTokens, mention: Mention): boolean {
  return holdsMention(held, mention) || wallTimeHeld(values, mention);
}

/**
 * A date-time an event's text writes without an offset ("cutover 2026-08-22 22:00") is the local
 * time of a date-time value that writes the same date, hour and minute with its offset
 * (`2026-08-22T22:00:00+08:00`): the event states its own value in its own words. Read alone, the
 * text's date-time is UTC (CONTRACT §4b), another instant; beside the value it is the same one.
 * Seconds are compared when the text writes them.
 */
export function wallTimeHeld(values: readonly ValueData[], mention: Mention): boolean {
  if (mention.kind !== "date") return false;
  const written = WALL_TIME.exec(mention.raw);
  if (!written || written[4] !== undefined) return false;
  const [, day, minute, second] = written;
  return values.some((value) => {
    if (!("date" in value)) return false;
    const held = WALL_TIME.exec(value.date);
    return (
      held !== null &&
      held[1] === day &&
      held[2] === minute &&
      (second === undefined || (held[3] ?? ":00") === second)
    );
  });
}

/** An ISO date-time: its date, its hour and minute, its seconds, and its offset when written. */
const WALL_TIME =
  /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2})(:\d{2})?(?:[.,]\d{1,9})?(Z|z|[+-]\d{2}(?::?\d{2})?| ?UTC)?$/u;
