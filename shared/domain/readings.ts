import type { ConflictIndexEntry } from "./append-plan.ts";
import { positionKey } from "./conflicts.ts";
import { sortableInstant } from "./dates.ts";
import { canonicalJson } from "./hashing.ts";
import type { LatestRule, SequencedEvent, StoredPolicy, TrustPolicy } from "./schemas.ts";
import { canonicalValue } from "./values.ts";

/**
 * Readings (CONTRACT §2, selector v3): values of something that changes over time (a bucket's
 * size, a stock count, a replica's lag). The trust policy's `latest` rules name the keys whose
 * values are readings; on such a (key, scope) the latest reading holds and the others are earlier
 * readings, valid inputs whose positions are superseded by time: never a conflict, never current.
 * Pure: the order comes from each event's own `occurredAt` and sequence, never from a clock.
 */

/**
 * The policy a subject's selections use: its own `latest` rules when it has set some (an empty list
 * included), otherwise the store's default. `latest` is omitted when no rule applies.
 */
export function effectivePolicy(stored: StoredPolicy): TrustPolicy {
  const latest = stored.latest ?? stored.storeLatest ?? [];
  return {
    minTrust: stored.minTrust,
    blockedSources: stored.blockedSources,
    ...(latest.length > 0 ? { latest } : {}),
  };
}

/** The policy as set on the subject (what `GET …/policy` shows), without the store's default. */
export function policyAsSet(stored: StoredPolicy): TrustPolicy {
  const { storeLatest: _storeLatest, ...policy } = stored;
  return policy;
}

/** Whether two rule lists are the same list (order and spelling included). */
export function sameRules(
  a: readonly LatestRule[] | undefined,
  b: readonly LatestRule[] | undefined,
): boolean {
  return canonicalJson(a ?? []) === canonicalJson(b ?? []);
}

/** Whether `text` matches `glob`: `*` matches any run of characters (none included), the rest itself. */
export function globMatches(glob: string, text: string): boolean {
  return compileGlob(glob)(text);
}

/** `glob` as a matcher, split at its `*` once (a rule is asked about every key of a log). */
function compileGlob(glob: string): (text: string) => boolean {
  const parts = glob.split("*");
  if (parts.length === 1) return (text) => glob === text;
  const first = parts[0] as string;
  const last = parts[parts.length - 1] as string;
  const middle = parts.slice(1, -1).filter((part) => part !== "");
  return (text) => {
    if (text.length < first.length + last.length || !text.startsWith(first) || !text.endsWith(last))
      return false;
    // The middle parts in order, each leftmost: any match of them leaves the most room after it.
    let from = first.length;
    const end = text.length - last.length;
    for (const part of middle) {
      const at = text.indexOf(part, from);
      if (at < 0 || at + part.length > end) return false;
      from = at + part.length;
    }
    return true;
  };
}

/** A rule as matchers: a key glob alone covers every scope. */
interface CompiledRule {
  key: (key: string) => boolean;
  scope: ((scope: string) => boolean) | null;
}

/**
 * Each rule list's compiled rules and answers, kept across selections (a policy change selects the
 * log twice, a recall once more): keyed by the list itself, which policies never change in place.
 */
const rulesOfList = new WeakMap<readonly LatestRule[], ReadingRules>();
/** Answers one rule list keeps, (key, scope) pairs; then it starts again. */
const MAX_REMEMBERED_PAIRS = 65_536;

/** The rules a selection applies: which (key, scope) pairs hold readings. Remembers each answer. */
export class ReadingRules {
  private readonly answers = new Map<string, Map<string, boolean>>();
  private remembered = 0;
  private readonly compiled: CompiledRule[];

  constructor(readonly rules: readonly LatestRule[]) {
    this.compiled = rules.map((rule) =>
      typeof rule === "string"
        ? { key: compileGlob(rule), scope: null }
        : { key: compileGlob(rule.key), scope: compileGlob(rule.scope) },
    );
  }

  static of(policy: Pick<TrustPolicy, "latest">): ReadingRules {
    const rules = policy.latest;
    if (rules === undefined || rules.length === 0) return new ReadingRules([]);
    let known = rulesOfList.get(rules);
    if (known === undefined) {
      known = new ReadingRules(rules);
      rulesOfList.set(rules, known);
    }
    return known;
  }

  get empty(): boolean {
    return this.rules.length === 0;
  }

  covers(key: string, scope: string): boolean {
    if (this.rules.length === 0) return false;
    let byScope = this.answers.get(key);
    if (!byScope) {
      if (this.remembered >= MAX_REMEMBERED_PAIRS) {
        this.answers.clear();
        this.remembered = 0;
      }
      byScope = new Map();
      this.answers.set(key, byScope);
    }
    let answer = byScope.get(scope);
    if (answer === undefined) {
      answer = this.compiled.some((rule) => rule.key(key) && (rule.scope === null || rule.scope(scope)));
      byScope.set(scope, answer);
      this.remembered++;
    }
    return answer;
  }
}

/** A reading as the `latest` rule orders it: its event, sequence and time (null without occurredAt). */
export interface ReadingTime {
  eventId: string;
  sequence: number;
  /** `sortableInstant` of the event's occurredAt; null when it has none. */
  at: string | null;
}

/** When an event's reading was taken, as the rule orders it (null when it has no occurredAt). */
export function readingAt(occurredAt: string | undefined): string | null {
  return occurredAt === undefined ? null : sortableInstant(occurredAt);
}

/**
 * The reading that holds among valid readings on one (key, scope), in any order: the latest
 * `occurredAt`, ties to the higher sequence. A reading without `occurredAt` was recorded after the
 * readings before it in the log, so it takes the latest time among them (none: before every time):
 * readings without dates order by sequence, and a new undated reading follows every dated one
 * logged before it.
 */
export function latestOf<T extends ReadingTime>(readings: readonly T[]): T | undefined {
  let latest: T | undefined;
  let latestAt: string | null = null;
  let seenAt: string | null = null;
  for (const reading of [...readings].sort((a, b) => a.sequence - b.sequence)) {
    const at = reading.at ?? seenAt;
    if (reading.at !== null && (seenAt === null || reading.at > seenAt)) seenAt = reading.at;
    // In sequence order, so a tie goes to this (higher) sequence.
    if (latest === undefined || latestAt === null || (at !== null && at >= latestAt)) {
      latest = reading;
      latestAt = at;
    }
  }
  return latest;
}

/**
 * The reading that holds among `readings` (any order) where validity is asked as needed and most
 * readings are never asked: the index of a long history checks the newest and stops. The result is
 * `latestOf` over the valid ones.
 */
export async function latestValidOf<T extends ReadingTime>(
  readings: readonly T[],
  isValid: (reading: T) => Promise<boolean>,
): Promise<T | undefined> {
  // The latest time among valid dated readings, and the highest sequence holding it.
  const dated = readings
    .filter((reading) => reading.at !== null)
    .sort((a, b) => ((a.at as string) < (b.at as string) ? 1 : a.at === b.at ? b.sequence - a.sequence : -1));
  let newest: T | undefined;
  for (const reading of dated)
    if (await isValid(reading)) {
      newest = reading;
      break;
    }
  // From the highest sequence down, the first valid reading at that time, or undated after it.
  const bySequence = [...readings].sort((a, b) => b.sequence - a.sequence);
  for (const reading of bySequence) {
    const qualifies =
      newest === undefined ||
      reading.at === newest.at ||
      (reading.at === null && reading.sequence > newest.sequence);
    if (qualifies && (await isValid(reading))) return reading;
  }
  return undefined;
}

/** What finding the latest reading in an index entry needs: events by id, and validity. */
export interface ReadingLookup {
  /** The events among `ids` (absent ones skipped), loaded in one request where possible. */
  events(ids: readonly string[]): Promise<ReadonlyMap<string, SequencedEvent>>;
  isValidInput(id: string): Promise<boolean>;
}

/**
 * The latest valid reading on (key, scope) among the holders of its conflict-index entry, and the
 * positions (`positionKey`s, sorted) it holds there; null when no valid event reads it. Holders
 * whose time the entry does not keep (appended before selector v3) are looked up; validity is
 * asked newest first and the walk stops at the answer.
 */
export async function latestReadingIn(
  entry: ConflictIndexEntry | undefined,
  key: string,
  scope: string,
  lookup: ReadingLookup,
): Promise<{ eventId: string; event: SequencedEvent; positions: string[] } | null> {
  const holders = [...new Set(Object.values(entry?.positions ?? {}).flat())];
  const unknown = holders.filter((holder) => entry?.readings?.[holder] === undefined);
  const looked = unknown.length > 0 ? await lookup.events(unknown) : new Map<string, SequencedEvent>();
  const readings: ReadingTime[] = [];
  for (const holder of holders) {
    const known = entry?.readings?.[holder];
    const event = looked.get(holder);
    if (known) readings.push({ eventId: holder, ...known });
    else if (event)
      readings.push({ eventId: holder, sequence: event.sequence, at: readingAt(event.occurredAt) });
  }
  const latest = await latestValidOf(readings, (reading) => lookup.isValidInput(reading.eventId));
  if (!latest) return null;
  const event = looked.get(latest.eventId) ?? (await lookup.events([latest.eventId])).get(latest.eventId);
  if (!event) return null;
  return { eventId: latest.eventId, event, positions: positionsOn(event, key, scope) };
}

/** The positions (`positionKey`s, sorted, distinct) an event holds on (key, scope). */
export function positionsOn(event: SequencedEvent, key: string, scope: string): string[] {
  const positions = (event.assertions ?? [])
    .filter((assertion) => assertion.key === key && assertion.scope === scope)
    .map((assertion) => positionKey(assertion.polarity, canonicalValue(assertion.value)));
  return [...new Set(positions)].sort();
}

/** The inputs holding an earlier reading in a selection, each with the reading that holds (for the manifest). */
export function earlierReadingInputs(
  readings: ReadonlyArray<{
    key: string;
    scope: string;
    latest: string;
    earlier: ReadonlyArray<{ holders: readonly string[] }>;
  }>,
): Array<{ eventId: string; key: string; scope: string; latest: string }> {
  return readings.flatMap(({ key, scope, latest, earlier }) =>
    [...new Set(earlier.flatMap((position) => position.holders))].map((eventId) => ({
      eventId,
      key,
      scope,
      latest,
    })),
  );
}
