import { positionKey } from "../conflicts.ts";
import { canonicalDate, dateTimeParts, monthDayOf, monthOf } from "../dates.ts";
import { eventTime } from "../event-time.ts";
import type { Mention } from "../mentions.ts";
import { extractMentions, IMPOSSIBLE_DATE } from "../mentions.ts";
import type { MustPreserveItem } from "../must-preserve.ts";
import { mustPreserveSet } from "../must-preserve.ts";
import { canonicalQuantity, parseDecimal, quantityKey } from "../quantity.ts";
import type { Polarity, SequencedEvent, ValueData } from "../schemas.ts";
import type { Conflict, Selection } from "../selector.ts";
import { KeyScopeMap } from "../selector.ts";
import { canonicalValue } from "../values.ts";

/**
 * The gate's context: everything it needs about one snapshot's inputs, indexed once (each valid
 * event's assertions, the holders of every exact position, the conflicts and their contradicting
 * positions, the tokens the inputs hold). Built once per snapshot, checked against any number of
 * candidates.
 */

export interface AssertionEntry {
  key: string;
  scope: string;
  valueKey: string;
  value: ValueData;
  polarity: Polarity;
  /** The must-preserve item this assertion is, if it is one. */
  item: MustPreserveItem | null;
}

export interface ConflictEntry extends Conflict {
  /** Each contradicting (polarity, value) by its position id, with one member that holds it. */
  contradicting: Map<string, { value: ValueData; valueKey: string; polarity: Polarity; eventId: string }>;
}

/**
 * The readings of a (key, scope) a `latest` rule covers (selector v3): the reading that holds, its
 * positions (current), and every earlier reading's position with the events holding it.
 */
export interface ReadingsEntry {
  latest: string;
  current: Set<string>;
  earlier: Map<string, { value: ValueData; valueKey: string; polarity: Polarity; holders: string[] }>;
}

/** What numbers, dates and ids the valid inputs hold (CONTRACT §4a, foreign tokens). */
export interface HeldTokens {
  unitNumbers: Set<string>;
  numbers: Set<string>;
  dates: Set<string>;
  ids: Set<string>;
}

/**
 * Everything the gate needs about one snapshot's inputs, indexed once. Build it once and check
 * any number of candidates against it (the pipeline checks exactly one; tests check many).
 */
export interface GateContext {
  selection: Selection;
  eventCount: number;
  mustPreserve: MustPreserveItem[];
  eventsById: Map<string, SequencedEvent>;
  /** Each valid event's assertions (at most 64 each), with canonical value keys. */
  assertionsByEvent: Map<string, AssertionEntry[]>;
  /** (key, scope) → `${polarity}\0${valueKey}` → the valid events asserting exactly that. */
  holdersByKeyScope: KeyScopeMap<Map<string, string[]>>;
  conflictsByKeyScope: KeyScopeMap<ConflictEntry>;
  /** Selector v3: each (key, scope) a `latest` rule covers, its current and earlier positions. */
  readingsByKeyScope: KeyScopeMap<ReadingsEntry>;
  held: HeldTokens;
}

/** Indexes a selection for the gate. `eventCount` is the size of the whole log (for the stats). */
export function buildGateContext(selection: Selection, eventCount: number): GateContext {
  const eventsById = new Map<string, SequencedEvent>();
  const assertionsByEvent = new Map<string, AssertionEntry[]>();
  const holdersByKeyScope = new KeyScopeMap<Map<string, string[]>>();
  const held: HeldTokens = { unitNumbers: new Set(), numbers: new Set(), dates: new Set(), ids: new Set() };
  const mustPreserve = mustPreserveSet(selection);
  const mustPreserveById = new Map(mustPreserve.map((item) => [item.itemId, item]));
  for (const event of selection.validInputs) {
    eventsById.set(event.eventId, event);
    holdEventTokens(held, event);
    const entries = (event.assertions ?? []).map((assertion, index): AssertionEntry => {
      const valueKey = canonicalValue(assertion.value);
      const holders = holdersByKeyScope.upsert(assertion.key, assertion.scope, () => new Map());
      const position = positionKey(assertion.polarity, valueKey);
      const eventIds = holders.get(position);
      if (!eventIds) holders.set(position, [event.eventId]);
      else if (eventIds[eventIds.length - 1] !== event.eventId) eventIds.push(event.eventId);
      return {
        key: assertion.key,
        scope: assertion.scope,
        valueKey,
        value: assertion.value,
        polarity: assertion.polarity,
        item: mustPreserveById.get(`${event.eventId}#${index}`) ?? null,
      };
    });
    assertionsByEvent.set(event.eventId, entries);
  }
  const conflictsByKeyScope = new KeyScopeMap<ConflictEntry>();
  for (const conflict of selection.conflicts) {
    const positions: ConflictEntry["contradicting"] = new Map();
    for (const position of conflict.positions)
      positions.set(positionKey(position.polarity, position.valueKey), {
        value: position.value,
        valueKey: position.valueKey,
        polarity: position.polarity,
        eventId: position.holders[0] ?? conflict.members[0] ?? "",
      });
    conflictsByKeyScope.set(conflict.key, conflict.scope, { ...conflict, contradicting: positions });
  }
  const readingsByKeyScope = new KeyScopeMap<ReadingsEntry>();
  for (const readings of selection.readings)
    readingsByKeyScope.set(readings.key, readings.scope, {
      latest: readings.latest,
      current: new Set(readings.current.map((p) => positionKey(p.polarity, p.valueKey))),
      earlier: new Map(readings.earlier.map((p) => [positionKey(p.polarity, p.valueKey), p])),
    });
  return {
    selection,
    eventCount,
    mustPreserve,
    eventsById,
    assertionsByEvent,
    holdersByKeyScope,
    conflictsByKeyScope,
    readingsByKeyScope,
    held,
  };
}

const heldByEvent = new WeakMap<SequencedEvent, HeldTokens>();

/**
 * The numbers, dates and ids one event holds: those of its text, its assertions' values, keys and
 * scopes, its eventId and source, the day it happened on and what its relative time expressions
 * resolve to against that day (CONTRACT §4b "When it happened", "Relative time"). Cached per
 * event object.
 */
export function eventHeldTokens(event: SequencedEvent): HeldTokens {
  let held = heldByEvent.get(event);
  if (!held) {
    held = { unitNumbers: new Set(), numbers: new Set(), dates: new Set(), ids: new Set() };
    holdEventTokens(held, event);
    heldByEvent.set(event, held);
  }
  return held;
}

/**
 * Adds what one event holds to `held`: the context's global set is filled this way directly (no
 * per-event sets on the way), the per-event sets of text support lazily, only for cited events.
 */
function holdEventTokens(held: HeldTokens, event: SequencedEvent): void {
  held.ids.add(event.eventId);
  if (event.source !== undefined) {
    held.ids.add(event.source);
    holdMentions(held, extractMentions(event.source).mentions);
  }
  // When it happened, and what its relative time resolves to against that (CONTRACT §4b).
  const time = eventTime(event);
  for (const day of time.days) holdDate(held, day);
  for (const date of time.dates) held.dates.add(date);
  // A year as a text writes it: 2022, or 2022年 (read as a number with the unit 年).
  for (const year of time.years) {
    held.numbers.add(year);
    holdMentions(held, extractMentions(`${year}年`).mentions);
  }
  // Its text's every mention, weekdays included (a restatement need not keep them: eventMentions).
  holdMentions(held, extractMentions(event.text ?? "").mentions);
  for (const assertion of event.assertions ?? []) {
    holdValue(held, assertion.value);
    held.ids.add(assertion.key);
    held.ids.add(assertion.scope);
    holdMentions(held, extractMentions(assertion.key).mentions);
    holdMentions(held, extractMentions(assertion.scope).mentions);
  }
}

/** Whether a mention is among the held tokens. */
export function holdsMention(held: HeldTokens, mention: Mention): boolean {
  if (mention.kind === "number")
    return mention.hasUnit && mention.rangeUnit === undefined
      ? held.unitNumbers.has(mention.key)
      : // A range's first end ("10 to 16 km") is held with its unit or as the bare number.
        held.unitNumbers.has(mention.key) || held.numbers.has(mention.number);
  if (mention.kind === "date")
    return (
      held.dates.has(mention.key) ||
      (mention.range?.every((number) => held.numbers.has(number.number)) ?? false) ||
      holdsDateTimeParts(held, mention.raw)
    );
  return held.ids.has(mention.key);
}

/**
 * A local date-time written whole (`2026-12-16 18:30`, no offset) is held where its day and its
 * hour and minute are, each as written: "Dec 16 at her place, 18:30" holds it (the converse of
 * holdMentions). One written with an offset or zone (`22:00 UTC`) is an instant, compared as one.
 */
function holdsDateTimeParts(held: HeldTokens, raw: string): boolean {
  const parts = dateTimeParts(raw);
  return (
    parts?.local === true && held.dates.has(parts.day) && parts.numbers.every((n) => held.numbers.has(n))
  );
}

export function holdMentions(held: HeldTokens, mentions: readonly Mention[]): void {
  for (const mention of mentions) {
    if (mention.kind === "number") {
      held.numbers.add(mention.number);
      if (mention.hasUnit) held.unitNumbers.add(mention.key);
    } else if (mention.kind === "date") {
      // No input holds a day that does not exist, even one that wrote it.
      if (!mention.key.startsWith(IMPOSSIBLE_DATE)) holdDate(held, mention.key);
      // `10-12` may also be the range 10 to 12: it holds both readings.
      if (mention.range !== undefined) holdMentions(held, mention.range);
      const parts = dateTimeParts(mention.raw);
      if (parts !== null) {
        holdDate(held, parts.day);
        for (const number of parts.numbers) held.numbers.add(number);
      }
    } else held.ids.add(mention.key);
  }
}

function holdDate(held: HeldTokens, key: string): void {
  held.dates.add(key);
  const monthDay = monthDayOf(key);
  if (monthDay !== null) held.dates.add(monthDay);
  // A month of a year is held when a day in it is (CONTRACT §4b: "December 2026").
  const month = monthOf(key);
  if (month !== null) held.dates.add(month);
}

export function holdValue(held: HeldTokens, value: ValueData): void {
  if ("quantity" in value) {
    const quantity = canonicalQuantity(parseDecimal(value.quantity), value.unit);
    held.numbers.add(quantity.number);
    held.unitNumbers.add(quantityKey(quantity));
  } else if ("date" in value) {
    const key = canonicalDate(value.date);
    if (key !== null) holdMentions(held, [{ kind: "date", key, raw: value.date }]);
  } else if ("text" in value) holdMentions(held, extractMentions(value.text).mentions);
  else if ("entity" in value) {
    held.ids.add(value.entity);
    holdMentions(held, extractMentions(value.entity).mentions);
  } else if ("scopes" in value)
    for (const scope of value.scopes) holdMentions(held, extractMentions(scope).mentions);
}
