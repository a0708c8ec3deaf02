import { contradictionsV2, keyScope, PositionSet, positionId } from "./conflicts.ts";
import { eventHash } from "./hashing.ts";
import { latestReadingIn, ReadingRules, readingAt } from "./readings.ts";
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
  /**
   * Each holder's sequence and reading time (`readingAt` of its occurredAt, null without one), as
   * the `latest` rule orders readings (selector v3). Recorded for every holder appended since v3;
   * a holder missing here (an older store) is looked up in the log.
   */
  readings?: Record<string, { sequence: number; at: string | null }>;
}

export interface AppendReads {
  clock: { highWater: number; inputEpoch: number };
  policy: TrustPolicy;
  /** Stored events by id (missing ids are simply absent). */
  loadEvents(ids: readonly string[]): Promise<Map<string, StoredEvent>>;
  /** Index entries by (key, scope); absent when nothing asserted on it yet. */
  loadIndex(keyScopes: ReadonlyArray<{ key: string; scope: string }>): Promise<ConflictIndexEntry[]>;
  /** Called between the batch's events: lets the store's other work run during a large batch. */
  pause?: () => Promise<void>;
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

  const pause = pauseOf(reads);
  const duplicates: string[] = [];
  const conflicting: string[] = [];
  const fresh: MemoryEvent[] = [];
  for (const event of batch) {
    await pause();
    const existing = stored.get(event.eventId);
    if (!existing) fresh.push(event);
    else if (existing.hash === eventHash(withoutSequence(event))) duplicates.push(event.eventId);
    else conflicting.push(event.eventId);
  }
  if (conflicting.length > 0) throw new EventConflictProblem(conflicting);

  // Sequences continue the clock in batch order; links may only point at earlier events.
  const sequenceOf = new Map<string, number>();
  for (const [id, record] of stored) sequenceOf.set(id, record.event.sequence);
  const newEvents: AppendPlan["newEvents"] = [];
  for (const event of fresh) {
    await pause();
    const sequenced: SequencedEvent = {
      ...withoutSequence(event),
      sequence: reads.clock.highWater + newEvents.length + 1,
    };
    sequenceOf.set(event.eventId, sequenced.sequence);
    newEvents.push({ event: sequenced, hash: eventHash(withoutSequence(event)) });
  }
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

function pauseOf(reads: AppendReads): () => Promise<void> {
  return reads.pause ?? (() => Promise.resolve());
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
  const pause = pauseOf(reads);
  const touched = new Map<string, { key: string; scope: string }>();
  for (const { event } of newEvents) {
    await pause();
    for (const assertion of event.assertions ?? [])
      touched.set(keyScope(assertion.key, assertion.scope), assertion);
  }
  if (touched.size === 0) return [];
  const entries = new Map<string, ConflictIndexEntry>();
  for (const [index, entry] of (await reads.loadIndex([...touched.values()])).entries()) {
    if (index % 256 === 0) await pause();
    entries.set(keyScope(entry.key, entry.scope), { ...entry, positions: { ...entry.positions } });
  }

  if (epochReasons.length === 0) {
    const rules = ReadingRules.of(reads.policy);
    // The valid new events' assertions grouped by (key, scope): one pass, not one per key.
    const added = new Map<string, Array<{ assertion: Assertion; event: SequencedEvent }>>();
    for (const { event } of newEvents) {
      await pause();
      if (!(await standings.isValidInput(event.eventId))) continue;
      for (const assertion of event.assertions ?? []) {
        const id = keyScope(assertion.key, assertion.scope);
        const list = added.get(id) ?? [];
        list.push({ assertion, event });
        added.set(id, list);
      }
    }
    for (const [id, { key, scope }] of touched) {
      await pause();
      if (rules.covers(key, scope)) {
        // Readings never conflict; what matters is whether the value that holds changed.
        if (!added.has(id)) continue;
        const before = await latestPositions(entries.get(id), key, scope, standings, "before", pause);
        if (before === null) continue; // the first reading: a new fact, as any first assertion
        const after = await latestPositions(
          withHolders(entries.get(id), key, scope, added.get(id) ?? []),
          key,
          scope,
          standings,
          "after",
          pause,
        );
        if (after !== null && before.join("\n") !== after.join("\n")) {
          epochReasons.push(`a later reading holds on ${key} @ ${scope}`);
          break;
        }
        continue;
      }
      const before = await validPositions(entries.get(id), key, scope, standings, pause);
      const after = before.copy();
      for (const { assertion, event } of added.get(id) ?? [])
        after.add(assertion.polarity, assertion.value, event.eventId);
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

  const written = new Map<string, ConflictIndexEntry>();
  for (const { event } of newEvents) {
    await pause();
    for (const assertion of event.assertions ?? []) {
      const id = keyScope(assertion.key, assertion.scope);
      let entry = written.get(id);
      if (!entry) {
        entry = withHolders(entries.get(id), assertion.key, assertion.scope, []);
        written.set(id, entry);
      }
      addHolder(entry, assertion, event);
    }
  }
  return [...touched.keys()].map((id) => written.get(id) as ConflictIndexEntry);
}

/** A copy of the entry of (key, scope) with the given holders added. */
function withHolders(
  entry: ConflictIndexEntry | undefined,
  key: string,
  scope: string,
  holders: ReadonlyArray<{ assertion: Assertion; event: SequencedEvent }>,
): ConflictIndexEntry {
  const next: ConflictIndexEntry = {
    key,
    scope,
    positions: { ...(entry?.positions ?? {}) },
    ...(entry?.readings ? { readings: { ...entry.readings } } : {}),
  };
  for (const { assertion, event } of holders) addHolder(next, assertion, event);
  return next;
}

/** Records that `event` holds `assertion`'s position, and when it read it (the entry is a copy). */
function addHolder(entry: ConflictIndexEntry, assertion: Assertion, event: SequencedEvent): void {
  const position = positionId(assertion.polarity, assertion.value);
  const holders = entry.positions[position] ?? [];
  if (!holders.includes(event.eventId)) entry.positions[position] = [...holders, event.eventId];
  entry.readings ??= {};
  entry.readings[event.eventId] = { sequence: event.sequence, at: readingAt(event.occurredAt) };
}

/**
 * The positions (sorted `positionKey`s) the latest valid reading holds on (key, scope), before or
 * after the batch; null when no valid event reads it (`latestReadingIn`).
 */
async function latestPositions(
  entry: ConflictIndexEntry | undefined,
  key: string,
  scope: string,
  standings: Standings,
  when: "before" | "after",
  pause: () => Promise<void>,
): Promise<string[] | null> {
  const resolver = when === "before" ? standings.before : standings.after;
  const latest = await latestReadingIn(entry, key, scope, {
    events: async (ids) => {
      await prefetchPaced(standings, ids, pause);
      const found = new Map<string, SequencedEvent>();
      for (const id of ids) {
        const event = standings.event(id);
        if (event) found.set(id, event);
      }
      return found;
    },
    isValidInput: (id) => resolver.isValidInput(id),
  });
  return latest?.positions ?? null;
}

/** Events a step of `prefetchPaced` reads before it lets other work run. */
const PREFETCH_PER_STEP = 64;

/** `standings.prefetch` a step at a time: a key held by hundreds of large events pauses between steps. */
async function prefetchPaced(standings: Standings, ids: readonly string[], pause: () => Promise<void>) {
  for (let start = 0; start < ids.length; start += PREFETCH_PER_STEP) {
    await pause();
    await standings.prefetch(ids.slice(start, start + PREFETCH_PER_STEP));
  }
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
  pause: () => Promise<void>,
): Promise<PositionSet> {
  const set = new PositionSet();
  // The newest two holders of every position, read a step at a time: usually all that is asked.
  await prefetchPaced(
    standings,
    Object.values(entry?.positions ?? {}).flatMap((holders) => holders.slice(-2)),
    pause,
  );
  for (const [position, holders] of Object.entries(entry?.positions ?? {})) {
    await pause();
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
