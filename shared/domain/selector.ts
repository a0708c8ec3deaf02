import type { MemoryEvent, SequencedEvent, Trust, TrustPolicy } from "./schemas.ts";
import { TRUST_LEVELS } from "./schemas.ts";
import { canonicalValue } from "./values.ts";

/**
 * Selector v1 (CONTRACT §2): which events of a snapshot are valid inputs, and which (key, scope)
 * pairs hold an unresolved conflict. Temporal handling decides validity; the consolidator never
 * picks a conflict's winner. Linear in events plus links: revokes and supersedes only point at
 * lower sequences, so one pass from the highest sequence down settles every event.
 */
export const SELECTOR_VERSION = "v1";

export type InvalidReason =
  | "after-high-water"
  | "revoked"
  | "superseded"
  | "untrusted"
  | "blocked-source"
  | "control-event";

export interface Conflict {
  key: string;
  scope: string;
  /** Sorted ids of every valid event asserting on (key, scope). */
  members: string[];
}

export interface Selection {
  highWater: number;
  policy: TrustPolicy;
  /** Valid content events (never revocations), ascending by sequence. */
  validInputs: SequencedEvent[];
  validIds: ReadonlySet<string>;
  /** Why each known event id that is not a valid input is not. */
  invalid: ReadonlyMap<string, InvalidReason>;
  /** Unresolved conflicts, sorted by key then scope. */
  conflicts: Conflict[];
}

/** A (key, scope) pair as one map key. */
export function keyScope(key: string, scope: string): string {
  return `${key}\u0000${scope}`;
}

const trustRank = (trust: Trust): number => TRUST_LEVELS.indexOf(trust);

/** Whether the policy lets this event's trust level and source count. */
export function isTrusted(event: MemoryEvent, policy: TrustPolicy): boolean {
  if (trustRank(event.trust) < trustRank(policy.minTrust)) return false;
  return !isBlockedSource(event.source, policy);
}

function isBlockedSource(source: string | undefined, policy: TrustPolicy): boolean {
  if (source === undefined) return false;
  return policy.blockedSources.some((pattern) =>
    pattern.endsWith("*") ? source.startsWith(pattern.slice(0, -1)) : source === pattern,
  );
}

/** Whether an event carries no assertions, so its text is what counts (CONTRACT §4a). */
export function isTextOnly(event: MemoryEvent): boolean {
  return event.kind !== "revocation" && (event.assertions === undefined || event.assertions.length === 0);
}

export function isOpenTask(event: MemoryEvent): boolean {
  return event.kind === "task" && event.taskStatus !== "done";
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
): Selection {
  const actorsOf = new Map<string, Actor[]>();
  for (const event of events) {
    for (const target of event.revokes ?? [])
      addActor(actorsOf, target, { eventId: event.eventId, effect: "revoked" });
    for (const target of event.supersedes ?? [])
      addActor(actorsOf, target, { eventId: event.eventId, effect: "superseded" });
  }
  const validAny = new Set<string>();
  const invalid = new Map<string, InvalidReason>();
  const validInputs: SequencedEvent[] = [];
  for (const event of [...events].sort((a, b) => b.sequence - a.sequence)) {
    const reason = invalidReason(event, highWater, policy, actorsOf.get(event.eventId) ?? [], validAny);
    if (reason !== null) {
      invalid.set(event.eventId, reason);
      continue;
    }
    validAny.add(event.eventId);
    if (event.kind === "revocation") invalid.set(event.eventId, "control-event");
    else validInputs.push(event);
  }
  validInputs.reverse();
  return {
    highWater,
    policy,
    validInputs,
    validIds: new Set(validInputs.map((event) => event.eventId)),
    invalid,
    conflicts: findConflicts(validInputs),
  };
}

interface Actor {
  eventId: string;
  effect: "revoked" | "superseded";
}

function addActor(actorsOf: Map<string, Actor[]>, target: string, actor: Actor): void {
  const actors = actorsOf.get(target);
  if (actors) actors.push(actor);
  else actorsOf.set(target, [actor]);
}

function invalidReason(
  event: SequencedEvent,
  highWater: number,
  policy: TrustPolicy,
  actors: readonly Actor[],
  validHigher: ReadonlySet<string>,
): InvalidReason | null {
  if (event.sequence > highWater) return "after-high-water";
  if (trustRank(event.trust) < trustRank(policy.minTrust)) return "untrusted";
  if (isBlockedSource(event.source, policy)) return "blocked-source";
  const effective = actors.find((actor) => validHigher.has(actor.eventId));
  return effective ? effective.effect : null;
}

/** (key, scope) pairs on which the valid inputs hold more than one distinct (value, polarity). */
export function findConflicts(validInputs: readonly SequencedEvent[]): Conflict[] {
  const byKeyScope = new Map<
    string,
    { key: string; scope: string; values: Set<string>; members: Set<string> }
  >();
  for (const event of validInputs) {
    for (const assertion of event.assertions ?? []) {
      const id = keyScope(assertion.key, assertion.scope);
      let entry = byKeyScope.get(id);
      if (!entry) {
        entry = { key: assertion.key, scope: assertion.scope, values: new Set(), members: new Set() };
        byKeyScope.set(id, entry);
      }
      entry.values.add(`${assertion.polarity}|${canonicalValue(assertion.value)}`);
      entry.members.add(event.eventId);
    }
  }
  const conflicts: Conflict[] = [];
  for (const entry of byKeyScope.values()) {
    if (entry.values.size > 1)
      conflicts.push({
        key: entry.key,
        scope: entry.scope,
        members: [...entry.members].sort(compareStrings),
      });
  }
  return conflicts.sort((a, b) => compareStrings(a.key, b.key) || compareStrings(a.scope, b.scope));
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
  const problems: string[] = [];
  const sequenceOf = new Map<string, number>();
  const sequences = new Set<number>();
  for (const event of events) {
    if (sequenceOf.has(event.eventId))
      problems.push(`eventId ${event.eventId} appears twice; each id must be unique`);
    if (sequences.has(event.sequence))
      problems.push(`sequence ${event.sequence} appears twice (event ${event.eventId})`);
    sequenceOf.set(event.eventId, event.sequence);
    sequences.add(event.sequence);
  }
  for (const event of events) problems.push(...linkProblems(event, sequenceOf));
  if (problems.length > 0) throw new EventLogError(problems);
  return [...events].sort((a, b) => a.sequence - b.sequence);
}

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
