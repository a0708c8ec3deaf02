import { positionKey } from "./conflicts.ts";
import type { CueCounts, Mention, TextMentions } from "./mentions.ts";
import { CUE_CLASSES, extractMentions, hasCues, mentionKey, mentionsToKeep } from "./mentions.ts";
import type { Polarity, SequencedEvent, ValueData } from "./schemas.ts";
import type { Conflict, Selection } from "./selector.ts";
import { compareStrings, isOpenTask, isTextOnly, KeyScopeMap, keyScope } from "./selector.ts";
import { canonicalValue, isExactValue } from "./values.ts";

/**
 * The must-preserve set (CONTRACT §2): what no summary may drop or bend. Extracted from the valid
 * inputs before any model runs, so the gate checks the summary against the inputs, never against
 * the summary's own word.
 */

export type MustPreserveItem =
  | {
      kind: "assertion";
      /** `<eventId>#<index of the assertion>` */
      itemId: string;
      eventId: string;
      key: string;
      scope: string;
      value: ValueData;
      valueKey: string;
      polarity: Polarity;
    }
  | { kind: "pending"; itemId: string; eventId: string; text: string }
  | { kind: "conflict"; itemId: string; key: string; scope: string; members: string[] }
  | {
      kind: "text";
      itemId: string;
      eventId: string;
      mentions: Mention[];
      negationCues: number;
      /** Every cue class's count (CONTRACT §4b); `negationCues` is `cues.negation`. */
      cues: CueCounts;
    }
  /** A constraint, permission or decision as a whole: some claim must derive from it (CONTRACT §4b). */
  | { kind: "event"; itemId: string; eventId: string; eventKind: string };

/** Kinds whose text-only events contribute mentions (notes and done tasks never do). */
const CONTRIBUTING_KINDS = new Set(["fact", "preference", "constraint", "decision", "permission"]);
const MUST_PRESERVE_KINDS = new Set(["constraint", "permission", "decision"]);

/** Whether an event must be derived from as a whole and never left cold (CONTRACT §4b "Whole events"). */
export function isWholeEvent(event: SequencedEvent): boolean {
  return MUST_PRESERVE_KINDS.has(event.kind);
}

/**
 * Whether a text-only event's numbers, dates, ids and cue words are kept by every text restating
 * it (CONTRACT §2): facts, preferences, the whole-event kinds and open tasks, not notes or done
 * tasks.
 */
export function contributesMentions(event: SequencedEvent): boolean {
  return isTextOnly(event) && (CONTRIBUTING_KINDS.has(event.kind) || isOpenTask(event));
}

/**
 * Whether a text-only event must be restated at all (CONTRACT §2, as the seed draws the set: exact
 * numbers, dates, entity ids and negated facts; issue 38). A constraint, permission, decision or
 * open task always is (with every cue of its text); a fact or preference only when its text holds
 * a number, date or id, or a negation. Its other cue words (modality, quantities, conditions, bounds,
 * time) bind a text that restates it, but force no restatement: "I can try some pottery" may go
 * cold, where it stays searchable; "I can't eat peanuts" may not.
 */
export function mustRestateText(event: SequencedEvent): boolean {
  if (!contributesMentions(event)) return false;
  const { mentions, cues } = eventMentions(event);
  if (mentions.length > 0 || cues.negation > 0) return true;
  return (isWholeEvent(event) || isOpenTask(event)) && hasCues(cues);
}

/** Whether an assertion of this event must be kept by some claim. */
export function isMustPreserveAssertion(
  event: SequencedEvent,
  assertion: { value: ValueData; polarity: Polarity },
): boolean {
  if (event.kind === "note") return false;
  return (
    MUST_PRESERVE_KINDS.has(event.kind) || assertion.polarity === "negated" || isExactValue(assertion.value)
  );
}

/**
 * The mentions a restatement of an event's text must keep (weekdays aside: `mentionsToKeep`) and
 * its cues; cached per event object.
 */
const mentionCache = new WeakMap<SequencedEvent, TextMentions>();
export function eventMentions(event: SequencedEvent): TextMentions {
  let cached = mentionCache.get(event);
  if (!cached) {
    cached = mentionsToKeep(extractMentions(event.text ?? ""));
    mentionCache.set(event, cached);
  }
  return cached;
}

/**
 * The positions earlier readings hold on each (key, scope) (selector v3), by `positionKey`: superseded
 * by time, so no summary must keep them (a summary may restate them as earlier readings).
 */
export function earlierPositions(selection: Selection): KeyScopeMap<Set<string>> {
  const earlier = new KeyScopeMap<Set<string>>();
  for (const readings of selection.readings)
    if (readings.earlier.length > 0)
      earlier.set(
        readings.key,
        readings.scope,
        new Set(readings.earlier.map((position) => positionKey(position.polarity, position.valueKey))),
      );
  return earlier;
}

/** Every must-preserve item of the selection, in a stable order. */
export function mustPreserveSet(selection: Selection): MustPreserveItem[] {
  const items: MustPreserveItem[] = [];
  const earlier = earlierPositions(selection);
  for (const event of selection.validInputs) {
    (event.assertions ?? []).forEach((assertion, index) => {
      if (!isMustPreserveAssertion(event, assertion)) return;
      const valueKey = canonicalValue(assertion.value);
      if (earlier.get(assertion.key, assertion.scope)?.has(positionKey(assertion.polarity, valueKey))) return;
      items.push({
        kind: "assertion",
        itemId: `${event.eventId}#${index}`,
        eventId: event.eventId,
        key: assertion.key,
        scope: assertion.scope,
        value: assertion.value,
        valueKey,
        polarity: assertion.polarity,
      });
    });
    if (isWholeEvent(event))
      items.push({
        kind: "event",
        itemId: `${event.eventId}#event`,
        eventId: event.eventId,
        eventKind: event.kind,
      });
    if (isOpenTask(event))
      items.push({
        kind: "pending",
        itemId: `${event.eventId}#pending`,
        eventId: event.eventId,
        text: event.text ?? "",
      });
    if (mustRestateText(event)) {
      const { mentions, negationCues, cues } = eventMentions(event);
      items.push({
        kind: "text",
        itemId: `${event.eventId}#text`,
        eventId: event.eventId,
        mentions,
        negationCues,
        cues,
      });
    }
  }
  for (const conflict of selection.conflicts) items.push(conflictItem(conflict));
  return items;
}

function conflictItem(conflict: Conflict): MustPreserveItem {
  return {
    kind: "conflict",
    itemId: `conflict:${keyScope(conflict.key, conflict.scope)}`,
    key: conflict.key,
    scope: conflict.scope,
    members: conflict.members,
  };
}

/**
 * A canonical, order-free description of a must-preserve set: equal exactly when the two sets
 * demand the same things of a summary. Used by the metamorphic tests and the manifest.
 */
export function mustPreserveFingerprint(items: readonly MustPreserveItem[]): string[] {
  return items.map(fingerprintOf).sort(compareStrings);
}

function fingerprintOf(item: MustPreserveItem): string {
  switch (item.kind) {
    case "assertion":
      return `assertion|${item.eventId}|${item.key}|${item.scope}|${item.polarity}|${item.valueKey}`;
    case "pending":
      return `pending|${item.eventId}`;
    case "conflict":
      return `conflict|${item.key}|${item.scope}|${item.members.join(",")}`;
    case "event":
      return `event|${item.eventId}`;
    case "text":
      return `text|${item.eventId}|${CUE_CLASSES.map((cls) => item.cues[cls]).join(".")}|${item.mentions.map(mentionKey).sort(compareStrings).join(",")}`;
  }
}
