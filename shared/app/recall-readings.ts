import { keyScope, positionKey } from "#domain/conflicts.ts";
import { latestReadingIn, type ReadingRules } from "#domain/readings.ts";
import type { Polarity, SequencedEvent, ValueData } from "#domain/schemas.ts";
import type { StandingResolver } from "#domain/standing-resolver.ts";
import { canonicalValue } from "#domain/values.ts";
import type { Deps } from "./deps.ts";

/** One position of a served event that a later reading superseded by time. */
export interface EarlierReading {
  eventId: string;
  key: string;
  scope: string;
  polarity: Polarity;
  value: ValueData;
  /** When it was read (the event's occurredAt), null when the event has none. */
  occurredAt: string | null;
  /** The event whose reading holds on (key, scope). */
  latest: string;
}

/**
 * The positions of `events` that are earlier readings: for each (key, scope) the rules name among
 * their assertions, the reading that holds is found from the conflict index (its holders' times,
 * validity asked newest first), never from the whole log.
 */
export async function earlierReadingsAmong(
  deps: Pick<Deps, "events">,
  subject: string,
  rules: ReadingRules,
  resolver: StandingResolver,
  events: readonly SequencedEvent[],
): Promise<EarlierReading[]> {
  if (rules.empty) return [];
  const keyScopes = new Map<string, { key: string; scope: string }>();
  for (const event of events)
    for (const { key, scope } of event.assertions ?? [])
      if (rules.covers(key, scope)) keyScopes.set(keyScope(key, scope), { key, scope });
  if (keyScopes.size === 0) return [];
  const latestOn = new Map<string, { eventId: string; positions: string[] }>();
  for (const entry of await deps.events.readingIndex(subject, [...keyScopes.values()])) {
    const latest = await latestReadingIn(entry, entry.key, entry.scope, {
      events: async (ids) => {
        await resolver.prefetch(ids);
        const found = new Map<string, SequencedEvent>();
        for (const id of ids) {
          const acted = await resolver.acted(id);
          if (acted) found.set(id, acted.event);
        }
        return found;
      },
      isValidInput: (id) => resolver.isValidInput(id),
    });
    if (latest) latestOn.set(keyScope(entry.key, entry.scope), latest);
  }
  const earlier: EarlierReading[] = [];
  for (const event of events)
    for (const assertion of event.assertions ?? []) {
      const latest = latestOn.get(keyScope(assertion.key, assertion.scope));
      if (!latest || !rules.covers(assertion.key, assertion.scope)) continue;
      if (latest.positions.includes(positionKey(assertion.polarity, canonicalValue(assertion.value))))
        continue;
      earlier.push({
        eventId: event.eventId,
        key: assertion.key,
        scope: assertion.scope,
        polarity: assertion.polarity,
        value: assertion.value,
        occurredAt: event.occurredAt ?? null,
        latest: latest.eventId,
      });
    }
  return earlier;
}
