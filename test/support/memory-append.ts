import type { AppendPlan, ConflictIndexEntry, StoredEvent } from "#domain/append-plan.ts";
import { planAppend } from "#domain/append-plan.ts";
import type { MemoryEvent, TrustPolicy } from "#domain/schemas.ts";
import { DEFAULT_TRUST_POLICY } from "#domain/schemas.ts";

/**
 * The append planner over plain maps: what both stores do inside their transactions, without an
 * engine, so properties can compare the planner's epoch decisions with the selector on many logs.
 */
export class PlannedLog {
  readonly events = new Map<string, StoredEvent>();
  readonly index = new Map<string, ConflictIndexEntry>();
  clock = { highWater: 0, inputEpoch: 0 };

  constructor(readonly policy: TrustPolicy = DEFAULT_TRUST_POLICY) {}

  async append(batch: readonly MemoryEvent[]): Promise<AppendPlan> {
    const plan = await planAppend(batch, {
      clock: this.clock,
      policy: this.policy,
      loadEvents: async (ids) => {
        const found = new Map<string, StoredEvent>();
        for (const id of ids) {
          const stored = this.events.get(id);
          if (stored) found.set(id, { ...stored, actors: [...stored.actors] });
        }
        return found;
      },
      loadIndex: async (keyScopes) =>
        keyScopes.flatMap(({ key, scope }) => {
          const entry = this.index.get(JSON.stringify([key, scope]));
          return entry ? [entry] : [];
        }),
    });
    for (const { event, hash } of plan.newEvents) this.events.set(event.eventId, { event, hash, actors: [] });
    for (const [target, actors] of plan.actorsAdded) this.events.get(target)?.actors.push(...actors);
    for (const entry of plan.index) this.index.set(JSON.stringify([entry.key, entry.scope]), entry);
    this.clock = plan.clockAfter;
    return plan;
  }

  sequenced() {
    return [...this.events.values()].map((stored) => stored.event);
  }
}
