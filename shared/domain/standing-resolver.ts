import type { SequencedEvent, TrustPolicy } from "./schemas.ts";
import {
  type ActorStanding,
  SELECTOR_VERSION,
  type SelectorVersion,
  type Standing,
  standingOf,
} from "./validity.ts";

/**
 * The validity rule (`standingOf`) applied on demand, for callers that hold a few events rather
 * than a whole log: the append planner (before and after a batch) and paged recall. An event's
 * standing needs only the events acting on it (revoking or superseding it, always later ones) and,
 * in turn, theirs: a walk up the actors, loaded in batches and remembered.
 */

/** An event with the ids of every event that names it in `revokes` or `supersedes`. */
export interface ActedEvent {
  event: SequencedEvent;
  actors: readonly string[];
}

/** Loads events by id; ids that are not stored are simply absent. */
export type LoadActed = (ids: readonly string[]) => Promise<ReadonlyMap<string, ActedEvent>>;

const ABSENT: Standing = { admissible: false, valid: false, reason: "after-high-water" };

export class StandingResolver {
  private readonly known = new Map<string, ActedEvent | null>();
  private readonly memo = new Map<string, Standing>();

  constructor(
    private readonly load: LoadActed,
    private readonly policy: TrustPolicy,
    private readonly highWater = Number.POSITIVE_INFINITY,
    private readonly version: SelectorVersion = SELECTOR_VERSION,
  ) {}

  /** Records the caller already holds (a page of events), so they are not loaded again. */
  remember(records: Iterable<ActedEvent>): void {
    for (const record of records) this.known.set(record.event.eventId, record);
  }

  /** Loads the events among `ids` not known yet, in one request. */
  async prefetch(ids: readonly string[]): Promise<void> {
    const missing = [...new Set(ids)].filter((id) => !this.known.has(id));
    if (missing.length === 0) return;
    const loaded = await this.load(missing);
    for (const id of missing) this.known.set(id, loaded.get(id) ?? null);
  }

  async acted(id: string): Promise<ActedEvent | null> {
    if (!this.known.has(id)) await this.prefetch([id]);
    return this.known.get(id) ?? null;
  }

  async standing(id: string): Promise<Standing> {
    const remembered = this.memo.get(id);
    if (remembered) return remembered;
    const record = await this.acted(id);
    if (!record) return ABSENT;
    await this.prefetch(record.actors);
    const actors: ActorStanding[] = [];
    for (const actorId of record.actors) {
      const actor = await this.acted(actorId);
      if (!actor) continue;
      const effect = (actor.event.revokes ?? []).includes(id) ? "revoked" : "superseded";
      actors.push({ effect, standing: await this.standing(actorId) });
    }
    return this.decided(id, record, actors);
  }

  private decided(id: string, record: ActedEvent, actors: ActorStanding[]): Standing {
    const standing = standingOf(record.event, this.highWater, this.policy, actors, this.version);
    this.memo.set(id, standing);
    return standing;
  }

  /**
   * `isValidInput` when it needs no load: a known event whose standing is remembered or that
   * nothing acts on; undefined otherwise (ask `isValidInput`).
   */
  validInputNow(id: string): boolean | undefined {
    const record = this.known.get(id);
    if (!record) return undefined;
    if (record.event.kind === "revocation") return false;
    const standing =
      this.memo.get(id) ?? (record.actors.length === 0 ? this.decided(id, record, []) : undefined);
    return standing?.valid;
  }

  /** A valid input: content (never a revocation) that is valid. */
  async isValidInput(id: string): Promise<boolean> {
    const record = await this.acted(id);
    return record !== null && record.event.kind !== "revocation" && (await this.standing(id)).valid;
  }
}
