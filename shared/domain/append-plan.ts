import { contradictionsV2, keyScope, PositionSet, positionId } from "./conflicts.ts";
import { eventHash } from "./hashing.ts";
import type { Assertion, MemoryEvent, SequencedEvent, TrustPolicy } from "./schemas.ts";
import { linkProblems } from "./selector.ts";
import { type ActedEvent, StandingResolver } from "./standing-resolver.ts";
import { sameStanding } from "./validity.ts";

/**
 * Planning an append, the same for every store: which events are new, which are identical
 * re-sends, which re-sends conflict, the sequences, whom each new revocation or supersession acts
 * on, the conflict index after the batch, and whether the epoch moves. The store gathers what the
 * plan asks for (through `AppendReads`) and applies the plan in one transaction, fenced on the
 * clock it read: pure logic here, I/O there.
 */

/** An event as stored: its content, hash, and the ids of the events that revoke or supersede it. */
export interface StoredEvent {
  event: SequencedEvent;
  hash: string;
  /** Events that name this one in `revokes` or `supersedes` (valid or not). */
  actors: string[];
}

/**
 * The conflict index entry of one (key, scope): every event that asserted each position on it,
 * whatever its validity now (validity is evaluated when it matters, from the events' actors).
 */
export interface ConflictIndexEntry {
  key: string;
  scope: string;
  /** position id (a hash of polarity + canonical value) → ids of events asserting it. */
  positions: Record<string, string[]>;
}

export interface AppendReads {
  clock: { highWater: number; inputEpoch: number };
  policy: TrustPolicy;
  /** Stored events by id (missing ids are simply absent). */
  loadEvents(ids: readonly string[]): Promise<Map<string, StoredEvent>>;
  /** Index entries by (key, scope); absent when nothing asserted on it yet. */
  loadIndex(keyScopes: ReadonlyArray<{ key: string; scope: string }>): Promise<ConflictIndexEntry[]>;
}

export interface AppendPlan {
  /** New events with their sequences and hashes, in sequence order. */
  newEvents: Array<{ event: SequencedEvent; hash: string }>;
  duplicates: string[];
  /** Existing or new events gaining actors: target id → actor ids to add. */
  actorsAdded: Map<string, string[]>;
  /** Index entries to write (complete new content of each touched entry). */
  index: ConflictIndexEntry[];
  clockBefore: { highWater: number; inputEpoch: number };
  clockAfter: { highWater: number; inputEpoch: number };
  /** Why the epoch moved ("m-4 is now revoked", "new conflict on k @ s"), empty when it did not. */
  epochReasons: string[];
  /** Whether a stored event's validity changed (not only the conflicts). */
  validityChanged: boolean;
}

export class EventConflictProblem extends Error {
  constructor(readonly eventIds: string[]) {
    super(`event ids re-sent with different content: ${eventIds.join(", ")}`);
    this.name = "EventConflictProblem";
  }
}

export class AppendProblem extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join("; "));
    this.name = "AppendProblem";
  }
}

/**
 * Plans appending `batch` (already schema-parsed) onto the state `reads` describes. Throws
 * EventConflictProblem or AppendProblem when the batch cannot be appended; nothing is planned then.
 */
export async function planAppend(batch: readonly MemoryEvent[], reads: AppendReads): Promise<AppendPlan> {
  const ids = batch.map((event) => event.eventId);
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const id of ids) (seen.has(id) ? repeated : seen).add(id);
  if (repeated.size > 0)
    throw new AppendProblem([`eventId ${[...repeated].join(", ")} appears twice in the batch`]);

  const linkTargets = batch.flatMap((event) => [...(event.revokes ?? []), ...(event.supersedes ?? [])]);
  const stored = await reads.loadEvents([...new Set([...ids, ...linkTargets])]);

  const duplicates: string[] = [];
  const conflicting: string[] = [];
  const fresh: MemoryEvent[] = [];
  for (const event of batch) {
    const existing = stored.get(event.eventId);
    if (!existing) fresh.push(event);
    else if (existing.hash === eventHash(withoutSequence(event))) duplicates.push(event.eventId);
    else conflicting.push(event.eventId);
  }
  if (conflicting.length > 0) throw new EventConflictProblem(conflicting);

  // Sequences continue the clock in batch order; links may only point at earlier events.
  const sequenceOf = new Map<string, number>();
  for (const [id, record] of stored) sequenceOf.set(id, record.event.sequence);
  const newEvents = fresh.map((event, index) => {
    const sequenced: SequencedEvent = {
      ...withoutSequence(event),
      sequence: reads.clock.highWater + index + 1,
    };
    sequenceOf.set(event.eventId, sequenced.sequence);
    return { event: sequenced, hash: eventHash(withoutSequence(event)) };
  });
  const problems: string[] = [];
  const actorsAdded = new Map<string, string[]>();
  const epochReasons: string[] = [];
  for (const { event } of newEvents) {
    const eventProblems = linkProblems(event, sequenceOf);
    problems.push(...eventProblems);
    if (eventProblems.length > 0) continue;
    for (const target of [...(event.revokes ?? []), ...(event.supersedes ?? [])]) {
      const actors = actorsAdded.get(target) ?? [];
      actors.push(event.eventId);
      actorsAdded.set(target, actors);
    }
  }
  if (problems.length > 0) throw new AppendProblem(problems);

  const standings = new Standings(
    reads,
    stored,
    newEvents.map((entry) => entry.event),
    actorsAdded,
  );
  const changed = await standings.validityChanges();
  epochReasons.push(...changed);
  const index = await planIndex(newEvents, standings, reads, epochReasons);
  const moved = epochReasons.length > 0;
  return {
    newEvents,
    duplicates,
    actorsAdded,
    index,
    clockBefore: reads.clock,
    clockAfter: {
      highWater: reads.clock.highWater + newEvents.length,
      inputEpoch: reads.clock.inputEpoch + (moved ? 1 : 0),
    },
    epochReasons,
    validityChanged: changed.length > 0,
  };
}

function withoutSequence(event: MemoryEvent): MemoryEvent {
  if (event.sequence === undefined) return event;
  const { sequence: _sequence, ...rest } = event;
  return rest;
}

/**
 * Where stored and new events stand before and after the batch: two resolvers of the selector's
 * own rule over one cache of stored events, the "after" one also seeing the batch and the actors it
 * adds.
 */
class Standings {
  private readonly records: Map<string, StoredEvent | null>;
  private readonly newById: Map<string, SequencedEvent>;
  readonly before: StandingResolver;
  readonly after: StandingResolver;

  constructor(
    private readonly reads: AppendReads,
    stored: ReadonlyMap<string, StoredEvent>,
    newEvents: readonly SequencedEvent[],
    private readonly actorsAdded: ReadonlyMap<string, string[]>,
  ) {
    this.records = new Map(stored);
    this.newById = new Map(newEvents.map((event) => [event.eventId, event]));
    this.before = new StandingResolver(async (ids) => {
      const found = new Map<string, ActedEvent>();
      await this.prefetch(ids);
      for (const id of ids) {
        const record = this.newById.has(id) ? null : await this.stored(id);
        if (record) found.set(id, record);
      }
      return found;
    }, reads.policy);
    this.after = new StandingResolver(async (ids) => {
      const found = new Map<string, ActedEvent>();
      await this.prefetch(ids);
      for (const id of ids) {
        const fresh = this.newById.get(id);
        const record = fresh ? null : await this.stored(id);
        const added = this.actorsAdded.get(id) ?? [];
        if (fresh) found.set(id, { event: fresh, actors: added });
        else if (record) found.set(id, { event: record.event, actors: [...record.actors, ...added] });
      }
      return found;
    }, reads.policy);
  }

  /** Loads the stored events among `ids` not known yet in one request, not one round trip each. */
  async prefetch(ids: readonly string[]): Promise<void> {
    const missing = ids.filter((id) => !this.newById.has(id) && !this.records.has(id));
    if (missing.length === 0) return;
    const loaded = await this.reads.loadEvents(missing);
    for (const id of missing) this.records.set(id, loaded.get(id) ?? null);
  }

  private async stored(id: string): Promise<StoredEvent | null> {
    if (!this.records.has(id)) await this.prefetch([id]);
    return this.records.get(id) ?? null;
  }

  /** Whether an event is a valid input (content, not a revocation) with the batch. */
  isValidInput(id: string): Promise<boolean> {
    return this.after.isValidInput(id);
  }

  /**
   * The stored events whose validity the batch changes, as epoch reasons. A changed standing
   * propagates only to the events that event revokes or supersedes (lower sequences), so the
   * walk starts at the batch's targets and stops where nothing changed.
   */
  async validityChanges(): Promise<string[]> {
    const reasons: string[] = [];
    const seen = new Set<string>();
    const work = [...this.actorsAdded.keys()].filter((id) => !this.newById.has(id));
    while (work.length > 0) {
      const id = work.pop() as string;
      if (seen.has(id)) continue;
      seen.add(id);
      const [before, after] = [await this.before.standing(id), await this.after.standing(id)];
      if (sameStanding(before, after)) continue;
      const record = await this.stored(id);
      // A revocation's own validity is control, not content: what it revokes is checked next.
      if (before.valid !== after.valid && record?.event.kind !== "revocation")
        reasons.push(after.valid ? `${id} is valid again` : `${id} is now ${after.reason}`);
      work.push(...(record?.event.revokes ?? []), ...(record?.event.supersedes ?? []));
    }
    return reasons.sort();
  }

  /** The event, when loaded. */
  event(id: string): SequencedEvent | undefined {
    return this.newById.get(id) ?? this.records.get(id)?.event;
  }
}

/**
 * Adds the new events' assertions to the index and, when nothing else moved the epoch (stored
 * validity unchanged), checks whether they open a new contradiction: a position on a (key, scope)
 * that now contradicts another event's and did not before (selector v2's rule).
 */
async function planIndex(
  newEvents: ReadonlyArray<{ event: SequencedEvent }>,
  standings: Standings,
  reads: AppendReads,
  epochReasons: string[],
): Promise<ConflictIndexEntry[]> {
  const touched = new Map<string, { key: string; scope: string }>();
  for (const { event } of newEvents)
    for (const assertion of event.assertions ?? [])
      touched.set(keyScope(assertion.key, assertion.scope), assertion);
  if (touched.size === 0) return [];
  const entries = new Map<string, ConflictIndexEntry>();
  for (const entry of await reads.loadIndex([...touched.values()]))
    entries.set(keyScope(entry.key, entry.scope), { ...entry, positions: { ...entry.positions } });

  if (epochReasons.length === 0) {
    // The valid new events' assertions grouped by (key, scope): one pass, not one per key.
    const added = new Map<string, Array<{ assertion: Assertion; eventId: string }>>();
    for (const { event } of newEvents) {
      if (!(await standings.isValidInput(event.eventId))) continue;
      for (const assertion of event.assertions ?? []) {
        const id = keyScope(assertion.key, assertion.scope);
        const list = added.get(id) ?? [];
        list.push({ assertion, eventId: event.eventId });
        added.set(id, list);
      }
    }
    for (const [id, { key, scope }] of touched) {
      const before = await validPositions(entries.get(id), key, scope, standings);
      const after = before.copy();
      for (const { assertion, eventId } of added.get(id) ?? [])
        after.add(assertion.polarity, assertion.value, eventId);
      // A (key, scope) with a single position (the common case) contradicts nothing.
      if (after.size < 2) continue;
      const had = contradictionsV2(before.positions()).positions;
      const has = contradictionsV2(after.positions()).positions;
      if ([...has].some((position) => !had.has(position))) {
        epochReasons.push(`new conflict on ${key} @ ${scope}`);
        break;
      }
    }
  }

  for (const { event } of newEvents) {
    for (const assertion of event.assertions ?? []) {
      const id = keyScope(assertion.key, assertion.scope);
      let entry = entries.get(id);
      if (!entry) {
        entry = { key: assertion.key, scope: assertion.scope, positions: {} };
        entries.set(id, entry);
      }
      const position = positionId(assertion.polarity, assertion.value);
      const holders = entry.positions[position] ?? [];
      if (!holders.includes(event.eventId)) entry.positions[position] = [...holders, event.eventId];
    }
  }
  return [...touched.keys()].map((id) => entries.get(id) as ConflictIndexEntry);
}

/**
 * The positions stored events hold on (key, scope) while valid, with at most two valid holders
 * each: whether holders differ is all contradiction asks. Most recent holders first, so a
 * current holder is found without walking a long history.
 */
async function validPositions(
  entry: ConflictIndexEntry | undefined,
  key: string,
  scope: string,
  standings: Standings,
): Promise<PositionSet> {
  const set = new PositionSet();
  // The newest two holders of every position in one request: usually all that is asked.
  await standings.prefetch(Object.values(entry?.positions ?? {}).flatMap((holders) => holders.slice(-2)));
  for (const [position, holders] of Object.entries(entry?.positions ?? {})) {
    let found = 0;
    for (let i = holders.length - 1; i >= 0 && found < 2; i--) {
      const holder = holders[i] as string;
      if (!(await standings.isValidInput(holder))) continue;
      const assertion = standings
        .event(holder)
        ?.assertions?.find(
          (a) => a.key === key && a.scope === scope && positionId(a.polarity, a.value) === position,
        );
      if (!assertion) continue;
      set.add(assertion.polarity, assertion.value, holder);
      found++;
    }
  }
  return set;
}
