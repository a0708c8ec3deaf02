import { eventHash, sha256 } from "./hashing.ts";
import type { MemoryEvent, SequencedEvent, TrustPolicy } from "./schemas.ts";
import { isTrusted, linkProblems } from "./selector.ts";
import { canonicalValue } from "./values.ts";

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
  /** Why the epoch moved ("revokes m-4", "new conflict on k @ s"), empty when it did not. */
  epochReasons: string[];
  /** Whether a new event revokes or supersedes another: validity changed, not only the conflicts. */
  validityChanged: boolean;
}

/** Identifies a position on a (key, scope) compactly: the index stores these, not whole values. */
export function positionId(polarity: string, value: Parameters<typeof canonicalValue>[0]): string {
  return sha256(`${polarity}\u0000${canonicalValue(value)}`).slice(7, 39);
}

function indexId(key: string, scope: string): string {
  return JSON.stringify([key, scope]);
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
  const repeated = ids.filter((id, index) => ids.indexOf(id) !== index);
  if (repeated.length > 0)
    throw new AppendProblem([`eventId ${[...new Set(repeated)].join(", ")} appears twice in the batch`]);

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
    for (const [field, targets] of [
      ["revokes", event.revokes],
      ["supersedes", event.supersedes],
    ] as const)
      if ((targets ?? []).length > 0)
        epochReasons.push(`${event.eventId} ${field} ${(targets ?? []).join(", ")}`);
  }
  if (problems.length > 0) throw new AppendProblem(problems);

  const index = await planIndex(
    newEvents.map((entry) => entry.event),
    stored,
    actorsAdded,
    reads,
    epochReasons,
  );
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
    validityChanged: actorsAdded.size > 0,
  };
}

function withoutSequence(event: MemoryEvent): MemoryEvent {
  if (event.sequence === undefined) return event;
  const { sequence: _sequence, ...rest } = event;
  return rest;
}

/**
 * Adds the new events' assertions to the index and, when the batch has not already moved the
 * epoch, checks whether any of them opens a new position beside another held by a valid event: a
 * new conflict, which moves the epoch.
 */
async function planIndex(
  newEvents: readonly SequencedEvent[],
  stored: Map<string, StoredEvent>,
  actorsAdded: ReadonlyMap<string, string[]>,
  reads: AppendReads,
  epochReasons: string[],
): Promise<ConflictIndexEntry[]> {
  const touched = new Map<string, { key: string; scope: string }>();
  for (const event of newEvents)
    for (const assertion of event.assertions ?? [])
      touched.set(indexId(assertion.key, assertion.scope), assertion);
  if (touched.size === 0) return [];
  const entries = new Map<string, ConflictIndexEntry>();
  for (const entry of await reads.loadIndex([...touched.values()]))
    entries.set(indexId(entry.key, entry.scope), { ...entry, positions: { ...entry.positions } });

  const newById = new Map(newEvents.map((event) => [event.eventId, event]));
  const records = new Map(stored);
  const active = new Map<string, boolean>();
  /** In force now: trusted by the policy, and no event in force revokes or supersedes it. */
  const isActive = async (id: string): Promise<boolean> => {
    const known = active.get(id);
    if (known !== undefined) return known;
    let record = records.get(id);
    if (!record && !newById.has(id)) {
      record = (await reads.loadEvents([id])).get(id);
      if (record) records.set(id, record);
    }
    const event = newById.get(id) ?? record?.event;
    let inForce = event !== undefined && isTrusted(event, reads.policy);
    for (const actor of [...(record?.actors ?? []), ...(actorsAdded.get(id) ?? [])]) {
      if (!inForce) break;
      if (await isActive(actor)) inForce = false;
    }
    active.set(id, inForce);
    return inForce;
  };
  /** A valid input: content (never a revocation) that is in force. */
  const isValid = async (id: string): Promise<boolean> =>
    (newById.get(id) ?? records.get(id)?.event)?.kind !== "revocation" && (await isActive(id));

  for (const event of newEvents) {
    for (const assertion of event.assertions ?? []) {
      const id = indexId(assertion.key, assertion.scope);
      let entry = entries.get(id);
      if (!entry) {
        entry = { key: assertion.key, scope: assertion.scope, positions: {} };
        entries.set(id, entry);
      }
      const position = positionId(assertion.polarity, assertion.value);
      if (epochReasons.length === 0 && (await isValid(event.eventId))) {
        const holdsAlready = await anyValid(entry.positions[position] ?? [], isValid);
        let others = false;
        for (const [other, holders] of Object.entries(entry.positions)) {
          if (other !== position && (await anyValid(holders, isValid))) {
            others = true;
            break;
          }
        }
        if (others && !holdsAlready)
          epochReasons.push(`${event.eventId} opens a new conflict on ${assertion.key} @ ${assertion.scope}`);
      }
      const holders = entry.positions[position] ?? [];
      if (!holders.includes(event.eventId)) entry.positions[position] = [...holders, event.eventId];
    }
  }
  return [...touched.keys()].map((id) => entries.get(id) as ConflictIndexEntry);
}

async function anyValid(ids: readonly string[], isValid: (id: string) => Promise<boolean>): Promise<boolean> {
  // Most recent first: a current holder is found without walking a long history.
  for (let i = ids.length - 1; i >= 0; i--) if (await isValid(ids[i] as string)) return true;
  return false;
}
