import type { MemoryEvent, SequencedEvent } from "#domain/schemas.ts";
import { countTokens } from "#domain/tokens.ts";
import {
  type RecallSection,
  type RecallSectionItems,
  textGroup,
  textHeadingTokens,
  textItemTokens,
  textSkippedTokens,
} from "./recall-text.ts";
import type { TextVersion } from "./recall-text-lines.ts";
import type { PartMeasure } from "./served-artifacts.ts";

/**
 * What recall's answer costs: each item measured in the rendering asked for (JSON, text v1 or
 * v2), a token budget spent item by item, and which events a scope serves.
 */

/** An event no page can serve within the budget asked for: its id, sequence and size in tokens. */
export interface OversizedEvent {
  eventId: string;
  sequence: number;
  tokens: number;
}

/** What an item costs in a rendering; a section's heading is paid with its first item. */
export interface Measure extends PartMeasure {
  heading(section: RecallSection): number;
  /** The group an item is served under within its section, whose heading its first item pays. */
  group<S extends RecallSection>(
    section: S,
    item: RecallSectionItems[S],
  ): { group: string; tokens: number } | null;
  /** The note naming an event skipped as larger than any page can serve. */
  skipped(event: OversizedEvent): number;
}

/** An item as the JSON budget counts it: its JSON, the summary as its text. */
function jsonTokens(section: RecallSection, item: unknown): number {
  if (typeof item === "string") return countTokens(item);
  if (EVENT_SECTIONS.has(section) && Object.isFrozen(item)) {
    const measured = measuredEvent(item as SequencedEvent);
    measured.tokens ??= countTokens(JSON.stringify(item));
    return measured.tokens;
  }
  return countTokens(JSON.stringify(item));
}

const EVENT_SECTIONS: ReadonlySet<RecallSection> = new Set(["tail", "events", "matches"]);

/**
 * A stored event's JSON size and (once counted) tokens, measured once per decoded event: a
 * decoded event is frozen and shared by every read of its body (`decodeStoredEvent`), and each
 * recall that pages over the same events would otherwise serialise and count each of them again.
 */
function measuredEvent(event: SequencedEvent): { chars: number; tokens?: number } {
  let measured = measuredEvents.get(event);
  if (measured === undefined) {
    measured = { chars: JSON.stringify(event).length };
    measuredEvents.set(event, measured);
  }
  return measured;
}

const measuredEvents = new WeakMap<SequencedEvent, { chars: number; tokens?: number }>();

/** An event's JSON length: what a page's size bound counts (measured once when frozen). */
export function eventChars(event: SequencedEvent): number {
  return Object.isFrozen(event) ? measuredEvent(event).chars : JSON.stringify(event).length;
}

export const JSON_MEASURE: Measure = {
  rendering: "json",
  item: (section, item) => jsonTokens(section, item),
  heading: () => 0,
  group: () => null,
  skipped: () => 0,
};
const textMeasure = (version: TextVersion): Measure => ({
  rendering: version === 2 ? "text" : "text-v1",
  item: (section, item) => textItemTokens(section, item, version),
  heading: textHeadingTokens,
  group: (section, item) => textGroup(section, item, version),
  skipped: textSkippedTokens,
});
export const TEXT_MEASURES: Record<TextVersion, Measure> = { 1: textMeasure(1), 2: textMeasure(2) };

/**
 * Spends a token budget item by item, in the order the caller offers them. In JSON it counts
 * every item it takes, budget or not: their sum is the answer's `servedTokens`.
 */
export class TokenBudget {
  private used = 0;
  /** What the rendering set aside beyond its items (the text's first line and notes). */
  private reserved = 0;
  /** What a page holding only its frame leaves its items: an item costing more is never served. */
  private room: number | undefined;
  /** The tokens of the items taken (headings and reserve aside). */
  private items = 0;
  private readonly opened = new Set<string>();
  private readonly counting: boolean;
  constructor(
    readonly limit: number | undefined,
    readonly measure: Measure,
  ) {
    this.room = limit;
    this.counting = limit !== undefined || measure === JSON_MEASURE;
  }
  /**
   * Sets aside what the rendering costs beyond its items (the text's first line and notes);
   * `continued` is what a page continuing by cursor sets aside, which bounds what any page serves.
   */
  reserve(tokens: number, continued = tokens): void {
    this.used += tokens;
    this.reserved = tokens;
    if (this.limit !== undefined) this.room = this.limit - continued;
  }
  /** What `reserve` set aside, when that alone is more than the budget (then no item fits). */
  belowFrame(): { budget: number; needed: number } | null {
    return this.limit !== undefined && this.reserved > this.limit
      ? { budget: this.limit, needed: this.reserved }
      : null;
  }
  /**
   * True (and counted) when the item fits what is left; always true without a budget. `counted`
   * gives the item's cost when it is known already (an artifact's parts, counted once).
   */
  take<S extends RecallSection>(section: S, item: RecallSectionItems[S], counted?: number): boolean {
    return this.offer(section, item, counted) === "taken";
  }
  /**
   * As `take`, telling apart an item that a later page can serve ("later") from one that no page
   * can (`{tokens}`, its own cost: more than a page leaves its items).
   */
  offer<S extends RecallSection>(
    section: S,
    item: RecallSectionItems[S],
    counted?: number,
  ): "taken" | "later" | { tokens: number } {
    if (!this.counting) return "taken";
    const tokens = counted ?? this.measure.item(section, item);
    if (this.limit !== undefined && this.room !== undefined) {
      const group = this.measure.group(section, item);
      const groupKey = group === null ? null : `${section}\u0000${group.group}`;
      const heading =
        (this.opened.has(section) ? 0 : this.measure.heading(section)) +
        (group === null || this.opened.has(groupKey as string) ? 0 : group.tokens);
      if (heading + tokens > this.room) return { tokens };
      if (this.used + heading + tokens > this.limit) return "later";
      this.used += heading + tokens;
      this.opened.add(section);
      if (groupKey !== null) this.opened.add(groupKey);
    }
    this.items += tokens;
    return "taken";
  }
  /** Counts the note naming a skipped event; false (nothing counted) when it does not fit. */
  noteSkipped(event: OversizedEvent): boolean {
    if (this.limit === undefined) return true;
    const cost = this.measure.skipped(event);
    if (this.used + cost > this.limit) return false;
    this.used += cost;
    return true;
  }
  get limited(): boolean {
    return this.limit !== undefined;
  }
  /** What is left of the budget (infinite without one). */
  get remaining(): number {
    return this.limit === undefined ? Number.POSITIVE_INFINITY : this.limit - this.used;
  }
  /** The tokens of the items taken: a JSON answer's `servedTokens`. */
  get served(): number {
    return this.items;
  }
}

/** Whether something in `scope` is served to a recall for `wanted` (its scope and the global one). */
function inScope(wanted: string | undefined, scope: string): boolean {
  return wanted === undefined || scope === wanted || scope === "global";
}

/** An event is in a scope when it asserts nothing (it is about the subject) or asserts in it. */
export function eventInScope(wanted: string | undefined, event: MemoryEvent): boolean {
  if (wanted === undefined || !event.assertions || event.assertions.length === 0) return true;
  return event.assertions.some((assertion) => inScope(wanted, assertion.scope));
}
