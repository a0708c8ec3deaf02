import {
  type Contradictions,
  contradictionsV1,
  contradictionsV2,
  PositionSet,
  positionKey,
} from "./conflicts.ts";
import { latestOf, ReadingRules, type ReadingTime, readingAt } from "./readings.ts";
import type { MemoryEvent, Polarity, SequencedEvent, TrustPolicy, ValueData } from "./schemas.ts";
import {
  type ActorStanding,
  type InvalidReason,
  SELECTOR_VERSION,
  type SelectorVersion,
  type Standing,
  standingOf,
} from "./validity.ts";
import { canonicalValue, describeValue } from "./values.ts";

/**
 * The selector (CONTRACT §2): which events of a snapshot are valid inputs, and which (key, scope)
 * pairs hold an unresolved conflict. Temporal handling decides validity; the consolidator never
 * picks a conflict's winner. Linear in events plus links: revokes and supersedes only point at
 * lower sequences, so one pass from the highest sequence down settles every event.
 */
export { type InvalidReason, SELECTOR_VERSION, type SelectorVersion } from "./validity.ts";

/** One side of a conflict: a (polarity, value) held by a member against another event's. */
export interface ConflictPosition {
  polarity: Polarity;
  valueKey: string;
  value: ValueData;
  /** The members holding exactly this position, sorted. */
  holders: string[];
}

export interface Conflict {
  key: string;
  scope: string;
  /** Sorted ids of the valid events holding a contradicting position on (key, scope). */
  members: string[];
  /** The contradicting positions (v1: every position on the key). */
  positions: ConflictPosition[];
}

/**
 * The readings on one (key, scope) under a `latest` rule (selector v3): the latest valid reading
 * holds; a position only earlier readings hold is superseded by time.
 */
export interface Readings {
  key: string;
  scope: string;
  /** The event whose reading holds: the latest occurredAt, ties to the higher sequence. */
  latest: string;
  /** The positions the latest reading holds, with every valid event holding each. */
  current: ConflictPosition[];
  /** The positions only earlier readings hold (superseded by time), with their holders. */
  earlier: ConflictPosition[];
}

export interface Selection {
  highWater: number;
  policy: TrustPolicy;
  selectorVersion: SelectorVersion;
  /** Valid content events (never revocations), ascending by sequence. */
  validInputs: SequencedEvent[];
  validIds: ReadonlySet<string>;
  /** Why each known event id that is not a valid input is not. */
  invalid: ReadonlyMap<string, InvalidReason>;
  /** Unresolved conflicts, sorted by key then scope. */
  conflicts: Conflict[];
  /** Selector v3: each (key, scope) under a `latest` rule that holds readings, sorted by key then scope. */
  readings: Readings[];
}

export { keyScope } from "./conflicts.ts";

/** Whether an event carries no assertions, so its text is what counts (CONTRACT §4a). */
export function isTextOnly(event: MemoryEvent): boolean {
  return event.kind !== "revocation" && (event.assertions === undefined || event.assertions.length === 0);
}

export function isOpenTask(event: MemoryEvent): boolean {
  return event.kind === "task" && event.taskStatus !== "done";
}

/** Each event id named in `revokes` or `supersedes`, with the events naming it and how. */
export function actorsByTarget(
  events: Iterable<MemoryEvent>,
): Map<string, Array<{ eventId: string; effect: ActorStanding["effect"] }>> {
  return finished(actorSteps(events));
}

function* actorSteps(
  events: Iterable<MemoryEvent>,
): Steps<Map<string, Array<{ eventId: string; effect: ActorStanding["effect"] }>>> {
  const actorsOf = new Map<string, Array<{ eventId: string; effect: ActorStanding["effect"] }>>();
  const add = (target: string, eventId: string, effect: ActorStanding["effect"]) => {
    const actors = actorsOf.get(target);
    if (actors) actors.push({ eventId, effect });
    else actorsOf.set(target, [{ eventId, effect }]);
  };
  let handled = 0;
  for (const event of events) {
    for (const target of event.revokes ?? []) add(target, event.eventId, "revoked");
    for (const target of event.supersedes ?? []) add(target, event.eventId, "superseded");
    if (++handled % CHECKS_PER_STEP === 0) yield;
  }
  return actorsOf;
}

/**
 * Computes validity under revocation, supersession and the trust policy, then the conflicts among
 * the valid inputs. `events` may be in any order; they must already be a checked log (see
 * `checkEventLog`): unique ids and sequences, links only to lower sequences.
 */
export function selectInputs(
  events: readonly SequencedEvent[],
  highWater: number,
  policy: TrustPolicy,
  version: SelectorVersion = SELECTOR_VERSION,
): Selection {
  return finished(selectionSteps(events, highWater, policy, version));
}

/**
 * `selectInputs` letting other work run between its steps (`pause`): the same selection, for a
 * server thread that must not stall while it selects over a large log.
 */
export function selectInputsPaced(
  events: readonly SequencedEvent[],
  highWater: number,
  policy: TrustPolicy,
  pause: () => Promise<void>,
  version: SelectorVersion = SELECTOR_VERSION,
): Promise<Selection> {
  return paced(selectionSteps(events, highWater, policy, version), pause);
}

/** Work that stops between steps (`yield`), so its caller may let other work run there. */
type Steps<T> = Generator<void, T, void>;

/** Items a step handles before it stops. */
const ITEMS_PER_STEP = 64;

function finished<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

async function paced<T>(steps: Steps<T>, pause: () => Promise<void>): Promise<T> {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await pause();
  }
}

function* selectionSteps(
  events: readonly SequencedEvent[],
  highWater: number,
  policy: TrustPolicy,
  version: SelectorVersion,
): Steps<Selection> {
  const actorsOf = yield* actorSteps(events);
  yield;
  const standings = new Map<string, Standing>();
  const invalid = new Map<string, InvalidReason>();
  const validInputs: SequencedEvent[] = [];
  let handled = 0;
  for (const event of newestFirst(events)) {
    if (++handled % ITEMS_PER_STEP === 0) yield;
    const actors = (actorsOf.get(event.eventId) ?? []).flatMap((actor): ActorStanding[] => {
      const standing = standings.get(actor.eventId);
      return standing ? [{ effect: actor.effect, standing }] : [];
    });
    const standing = standingOf(event, highWater, policy, actors, version);
    standings.set(event.eventId, standing);
    if (standing.reason !== null) invalid.set(event.eventId, standing.reason);
    else if (event.kind === "revocation") invalid.set(event.eventId, "control-event");
    else validInputs.push(event);
  }
  validInputs.reverse();
  const rules = version === "v3" ? ReadingRules.of(policy) : new ReadingRules([]);
  return {
    highWater,
    policy,
    selectorVersion: version,
    validInputs,
    validIds: new Set(validInputs.map((event) => event.eventId)),
    invalid,
    conflicts: yield* conflictSteps(validInputs, version, rules),
    readings: yield* readingSteps(validInputs, rules),
  };
}

/** The events newest first: a checked log (ascending) read backwards, any other order sorted. */
function newestFirst(events: readonly SequencedEvent[]): Iterable<SequencedEvent> {
  if (!isAscending(events)) return [...events].sort((a, b) => b.sequence - a.sequence);
  return (function* () {
    for (let i = events.length - 1; i >= 0; i--) yield events[i] as SequencedEvent;
  })();
}

/** The contradiction rule of a selector version. */
export function contradictionsOf(version: SelectorVersion): typeof contradictionsV2 {
  return version === "v1" ? contradictionsV1 : contradictionsV2;
}

/**
 * The unresolved conflicts among valid inputs: (key, scope) pairs where two events contradict.
 * Under selector v3 a (key, scope) the rules name holds readings, and readings never conflict: the
 * latest holds, the rest are earlier readings (`findReadings`).
 */
export function findConflicts(
  validInputs: readonly SequencedEvent[],
  version: SelectorVersion = SELECTOR_VERSION,
  rules: ReadingRules = new ReadingRules([]),
): Conflict[] {
  return finished(conflictSteps(validInputs, version, rules));
}

function* conflictSteps(
  validInputs: readonly SequencedEvent[],
  version: SelectorVersion,
  rules: ReadingRules,
): Steps<Conflict[]> {
  const byKeyScope = new KeyScopeMap<{ key: string; scope: string; positions: PositionSet }>();
  let handled = 0;
  for (const event of validInputs) {
    if (++handled % ITEMS_PER_STEP === 0) yield;
    for (const assertion of event.assertions ?? [])
      if (!rules.covers(assertion.key, assertion.scope))
        byKeyScope
          .upsert(assertion.key, assertion.scope, () => ({
            key: assertion.key,
            scope: assertion.scope,
            positions: new PositionSet(),
          }))
          .positions.add(assertion.polarity, assertion.value, event.eventId);
  }
  const contradictions = contradictionsOf(version);
  const conflicts: Conflict[] = [];
  for (const entry of byKeyScope.values()) {
    if (++handled % ITEMS_PER_STEP === 0) yield;
    if (entry.positions.size < 2) continue;
    const positions = entry.positions.positions();
    const found: Contradictions = contradictions(positions);
    if (found.members.size === 0) continue;
    conflicts.push({
      key: entry.key,
      scope: entry.scope,
      members: [...found.members].sort(compareStrings),
      positions: positions
        .filter((position) => found.positions.has(positionKey(position.polarity, position.valueKey)))
        .map((position) => ({
          polarity: position.polarity,
          valueKey: position.valueKey,
          value: position.value,
          holders: position.holders.filter((holder) => found.members.has(holder)).sort(compareStrings),
        })),
    });
  }
  return conflicts.sort((a, b) => compareStrings(a.key, b.key) || compareStrings(a.scope, b.scope));
}

/**
 * The readings of every (key, scope) the rules name (selector v3): among the valid events asserting
 * on it (affirmed or negated: a negated reading is a reading), the latest holds (`latestOf`); its
 * positions are current, and every position no latest assertion holds is an earlier reading.
 */
export function findReadings(validInputs: readonly SequencedEvent[], rules: ReadingRules): Readings[] {
  return finished(readingSteps(validInputs, rules));
}

function* readingSteps(validInputs: readonly SequencedEvent[], rules: ReadingRules): Steps<Readings[]> {
  if (rules.empty) return [];
  const byKeyScope = new KeyScopeMap<{
    key: string;
    scope: string;
    readings: ReadingTime[];
    positions: PositionSet;
    latestPositions: Map<string, Set<string>>;
  }>();
  let handled = 0;
  for (const event of validInputs) {
    if (++handled % ITEMS_PER_STEP === 0) yield;
    const at = readingAt(event.occurredAt);
    for (const assertion of event.assertions ?? []) {
      if (!rules.covers(assertion.key, assertion.scope)) continue;
      const entry = byKeyScope.upsert(assertion.key, assertion.scope, () => ({
        key: assertion.key,
        scope: assertion.scope,
        readings: [],
        positions: new PositionSet(),
        latestPositions: new Map(),
      }));
      if (entry.readings[entry.readings.length - 1]?.eventId !== event.eventId)
        entry.readings.push({ eventId: event.eventId, sequence: event.sequence, at });
      const valueKey = canonicalValue(assertion.value);
      entry.positions.add(assertion.polarity, assertion.value, event.eventId, valueKey);
      const held = entry.latestPositions.get(event.eventId) ?? new Set<string>();
      held.add(positionKey(assertion.polarity, valueKey));
      entry.latestPositions.set(event.eventId, held);
    }
  }
  const found: Readings[] = [];
  for (const entry of byKeyScope.values()) {
    if (++handled % ITEMS_PER_STEP === 0) yield;
    const latest = latestOf(entry.readings) as ReadingTime;
    const current = entry.latestPositions.get(latest.eventId) ?? new Set<string>();
    const held = entry.positions.positions().map((position) => ({
      polarity: position.polarity,
      valueKey: position.valueKey,
      value: position.value,
      holders: [...position.holders].sort(compareStrings),
    }));
    found.push({
      key: entry.key,
      scope: entry.scope,
      latest: latest.eventId,
      current: held.filter((p) => current.has(positionKey(p.polarity, p.valueKey))),
      earlier: held.filter((p) => !current.has(positionKey(p.polarity, p.valueKey))),
    });
  }
  return found.sort((a, b) => compareStrings(a.key, b.key) || compareStrings(a.scope, b.scope));
}

/** How two selections of one log differ: ids valid in one only, conflicts in one only. */
export function selectionDifferences(before: Selection, after: Selection): string[] {
  const differences: string[] = [];
  const onlyIn = (a: ReadonlySet<string>, b: ReadonlySet<string>) =>
    [...a].filter((id) => !b.has(id)).sort(compareStrings);
  const lost = onlyIn(before.validIds, after.validIds);
  const gained = onlyIn(after.validIds, before.validIds);
  if (lost.length > 0) differences.push(`no longer valid: ${lost.join(", ")}`);
  if (gained.length > 0) differences.push(`now valid: ${gained.join(", ")}`);
  const named = (selection: Selection) =>
    new Set(selection.conflicts.map((c) => `${c.key} @ ${c.scope} [${c.members.join(", ")}]`));
  const conflictsLost = onlyIn(named(before), named(after));
  const conflictsGained = onlyIn(named(after), named(before));
  if (conflictsLost.length > 0) differences.push(`no longer a conflict: ${conflictsLost.join(", ")}`);
  if (conflictsGained.length > 0) differences.push(`now a conflict: ${conflictsGained.join(", ")}`);
  // Readings: a position that becomes, or stops being, an earlier reading changes what holds.
  const earlier = (selection: Selection) =>
    new Set(
      selection.readings.flatMap((r) =>
        r.earlier.map(
          (p) => `${r.key} @ ${r.scope}: ${p.polarity === "negated" ? "not " : ""}${describeValue(p.value)}`,
        ),
      ),
    );
  const earlierLost = onlyIn(earlier(before), earlier(after));
  const earlierGained = onlyIn(earlier(after), earlier(before));
  if (earlierLost.length > 0) differences.push(`no longer an earlier reading: ${earlierLost.join(", ")}`);
  if (earlierGained.length > 0) differences.push(`now an earlier reading: ${earlierGained.join(", ")}`);
  return differences;
}

/** Code-point order, independent of locale. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** What is wrong with an event log as a whole, one line per problem. */
export class EventLogError extends Error {
  constructor(
    readonly problems: string[],
    options?: { cause?: unknown },
  ) {
    super(
      `invalid events: ${problems.slice(0, 5).join("; ")}${problems.length > 5 ? ` (and ${problems.length - 5} more)` : ""}`,
      options,
    );
    this.name = "EventLogError";
  }
}

/**
 * Checks the rules that span events: ids and sequences unique, and `revokes`/`supersedes` naming
 * only events with a lower sequence (so validity is well-founded). Throws EventLogError listing
 * every problem; returns the events sorted by sequence.
 */
export function checkEventLog(events: readonly SequencedEvent[]): SequencedEvent[] {
  return finished(checkSteps(events));
}

/** `checkEventLog` letting other work run between its steps (`pause`), for a serving thread. */
export function checkEventLogPaced(
  events: readonly SequencedEvent[],
  pause: () => Promise<void>,
): Promise<SequencedEvent[]> {
  return paced(checkSteps(events), pause);
}

function* checkSteps(events: readonly SequencedEvent[]): Steps<SequencedEvent[]> {
  const problems: string[] = [];
  const sequenceOf = new Map<string, number>();
  const sequences = new Set<number>();
  let handled = 0;
  for (const event of events) {
    if (sequenceOf.has(event.eventId))
      problems.push(`eventId ${event.eventId} appears twice; each id must be unique`);
    if (sequences.has(event.sequence))
      problems.push(`sequence ${event.sequence} appears twice (event ${event.eventId})`);
    sequenceOf.set(event.eventId, event.sequence);
    sequences.add(event.sequence);
    if (++handled % CHECKS_PER_STEP === 0) yield;
  }
  for (const event of events) {
    if (event.revokes !== undefined || event.supersedes !== undefined)
      problems.push(...linkProblems(event, sequenceOf));
    if (++handled % CHECKS_PER_STEP === 0) yield;
  }
  if (problems.length > 0) throw new EventLogError(problems);
  return isAscending(events) ? [...events] : [...events].sort((a, b) => a.sequence - b.sequence);
}

/** Whether the events are in ascending sequence (a log as stored): no sort needed. */
function isAscending(events: readonly SequencedEvent[]): boolean {
  for (let i = 1; i < events.length; i++)
    if ((events[i - 1] as SequencedEvent).sequence >= (events[i] as SequencedEvent).sequence) return false;
  return true;
}

/** Events a step of the log check handles (each is a few map operations). */
const CHECKS_PER_STEP = 1024;

/**
 * What is wrong with an event's `revokes` and `supersedes`: each must name a known event with a
 * lower sequence (so validity is well-founded). `sequenceOf` knows every event that may be named.
 */
export function linkProblems(event: SequencedEvent, sequenceOf: ReadonlyMap<string, number>): string[] {
  const problems: string[] = [];
  for (const [field, targets] of [
    ["revokes", event.revokes],
    ["supersedes", event.supersedes],
  ] as const) {
    for (const target of targets ?? []) {
      const targetSequence = sequenceOf.get(target);
      if (targetSequence === undefined)
        problems.push(`${event.eventId}.${field} names ${target}, which is not in the log`);
      else if (targetSequence >= event.sequence)
        problems.push(
          `${event.eventId}.${field} names ${target}, which does not come before it; it may only point at earlier events`,
        );
    }
  }
  return problems;
}

/**
 * A map keyed by (key, scope) without building a joined string per lookup: the gate looks up
 * every claim, and string concatenation plus rehashing was its hottest cost.
 */
export class KeyScopeMap<T> {
  private readonly byKey = new Map<string, Map<string, T>>();

  get(key: string, scope: string): T | undefined {
    return this.byKey.get(key)?.get(scope);
  }

  has(key: string, scope: string): boolean {
    return this.byKey.get(key)?.has(scope) ?? false;
  }

  set(key: string, scope: string, value: T): void {
    let byScope = this.byKey.get(key);
    if (!byScope) {
      byScope = new Map();
      this.byKey.set(key, byScope);
    }
    byScope.set(scope, value);
  }

  /** The value at (key, scope), created with `make` when absent. */
  upsert(key: string, scope: string, make: () => T): T {
    let value = this.get(key, scope);
    if (value === undefined) {
      value = make();
      this.set(key, scope, value);
    }
    return value;
  }

  *values(): IterableIterator<T> {
    for (const byScope of this.byKey.values()) yield* byScope.values();
  }
}
