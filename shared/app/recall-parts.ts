import type { Claim, ConflictRef, PendingItem, SequencedEvent, Snapshot } from "#domain/schemas.ts";
import type { SearchHit } from "#domain/search-index.ts";
import type { Pause } from "#ports/time.ts";
import type { Deps } from "./deps.ts";
import type { Recall, RecallOptions } from "./recall.ts";
import { eventInScope, type TokenBudget } from "./recall-budget.ts";
import { shownDay } from "./recall-text.ts";
import type { ClaimPlan, ClaimRun, PartTokens, ServedBody, ServedIndex } from "./served-artifacts.ts";

/**
 * What a query reaches in a summary (its ranked claims, pending items and cold events) and the
 * summary's parts served under a budget in the budget's order (CONTRACT §6 "Search").
 */

/** Without a budget, at most this many cold events matching a query (the claims are all served). */
export const RECALL_COLD_MATCHES = 20;
/** Under a budget, at most this many of a query's best documents are offered (claims and cold events). */
export const RECALL_RANKED_HITS = 200;

/**
 * A query's best documents (claims, pending items, cold events), best first: null without a
 * query or an index. Under a budget the best RECALL_RANKED_HITS are offered, the budget deciding
 * how many are served; without one, every claim is served and the best cold events up to
 * RECALL_COLD_MATCHES.
 */
export async function rankedHits(
  index: ServedIndex,
  options: RecallOptions,
  limited: boolean,
  pause: Pause,
): Promise<Searched> {
  if (options.query === undefined || options.query.trim() === "") return { hits: null, problem: null };
  let hits: SearchHit[];
  try {
    hits = await (await index.search(pause)).search(options.query, RECALL_RANKED_HITS, pause);
  } catch (error) {
    // A damaged index never fails a recall: the summary is served without the query's hits.
    return {
      hits: null,
      problem: error instanceof Error ? (error.message.split("\n")[0] ?? error.name) : String(error),
    };
  }
  if (limited) return { hits, problem: null };
  const cold = hits.filter((hit) => !hit.id.startsWith("#")).slice(0, RECALL_COLD_MATCHES);
  const kept = new Set(cold.map((hit) => hit.id));
  return { hits: hits.filter((hit) => hit.id.startsWith("#") || kept.has(hit.id)), problem: null };
}

/** The events a query's hits served: how many a claim or pending item derives from, how many left out. */
export interface Matches {
  events: SequencedEvent[];
  cited: number;
  omitted: number;
}

/** A query's hits (null without a query), or why the index could not answer it. */
export interface Searched {
  hits: SearchHit[] | null;
  problem: string | null;
}

/**
 * The summary's parts served within the budget, in the budget's order (CONTRACT §6): the claims
 * that keep must-preserve items, the pending items, the unresolved conflicts (`first`); without a
 * query, the other claims and the summary, then the tail; with a query, the other claims and the
 * cold events by relevance (`hits`), the summary, the tail, then the claims the query did not
 * reach (`rest`). Within the first two groups a query's hits come first. What is served is restored
 * to the artifact's own order; a served cold event keeps its rank.
 */
export class SummaryParts {
  private readonly keptClaims = new Set<number>();
  private readonly offeredClaims = new Set<number>();
  private keptPending: Array<{ item: PendingItem; index: number }> = [];
  private keptConflicts: ConflictRef[] = [];
  private keptSummary = false;
  /** The rank of each pending item a query reached. */
  private readonly pendingRank = new Map<number, number>();

  constructor(
    private readonly budget: TokenBudget,
    private readonly artifact: ServedBody,
    private readonly tokens: PartTokens,
    private readonly plan: ClaimPlan,
    private readonly ranked: readonly SearchHit[] | null,
  ) {
    for (const [rank, hit] of (ranked ?? []).entries())
      if (hit.id.startsWith("#p")) this.pendingRank.set(Number(hit.id.slice(2)), rank);
  }

  /** No claim fits what the budget has left: offering more changes nothing. */
  private get claimsFull(): boolean {
    return this.budget.remaining < this.plan.smallestClaim;
  }

  private offerClaim(index: number): void {
    this.offeredClaims.add(index);
    const claim = this.artifact.body.claims[index] as Claim;
    if (this.budget.take("claims", claim, this.tokens.claims[index])) this.keptClaims.add(index);
  }

  /**
   * Offers the claims of `run` the query reached first (best first), then the others in order,
   * passing over the stretches where no claim costs as little as what the budget has left, until
   * MISFITS_IN_A_ROW claims in a row did not fit (CONTRACT §6 "Search": a full budget never walks
   * the whole summary).
   */
  private offerClaims(run: ClaimRun): void {
    let misfits = 0;
    const offer = (index: number) => {
      this.offerClaim(index);
      misfits = this.keptClaims.has(index) ? 0 : misfits + 1;
      return misfits < MISFITS_IN_A_ROW && !this.claimsFull;
    };
    for (const hit of this.ranked ?? []) {
      const index = claimIndexOf(hit.id);
      if (index !== null && !this.offeredClaims.has(index) && run.members.has(index) && !offer(index)) return;
    }
    for (let at = run.next(0, this.budget.remaining); at < run.indices.length; ) {
      const index = run.indices[at] as number;
      if (!this.offeredClaims.has(index) && !offer(index)) return;
      at = run.next(at + 1, this.budget.remaining);
    }
  }

  first(): void {
    const { body } = this.artifact;
    this.offerClaims(this.plan.mustPreserve);
    this.keptPending = body.pending
      .map((item, index) => ({ item, index, rank: this.pendingRank.get(index) ?? Number.POSITIVE_INFINITY }))
      .sort((a, b) => a.rank - b.rank || a.index - b.index)
      .filter((p) => this.budget.take("tasks", p.item, this.tokens.pending[p.index]))
      .sort((a, b) => a.index - b.index);
    this.keptConflicts = this.plan.conflicts
      .filter((index) =>
        this.budget.take(
          "conflicts",
          body.unresolvedConflicts[index] as ConflictRef,
          this.tokens.unresolvedConflicts[index],
        ),
      )
      .map((index) => body.unresolvedConflicts[index] as ConflictRef);
    if (this.ranked === null) this.offerClaims(this.plan.all);
  }

  /**
   * The query's other claims and events, best first, until the first that does not fit (CONTRACT
   * §5a: "until the next does not fit"); the events served, how many of them the summary's claims
   * or pending items derive from (the others are cold inputs), and the event hits left out (read or
   * not: a hit is read from the store only when it is offered, and once into `read`, which a
   * recall's second selection reuses; null for an id the store no longer holds).
   */
  async hits(
    deps: Pick<Deps, "events">,
    snapshot: Snapshot,
    read: Map<string, SequencedEvent | null>,
  ): Promise<Matches> {
    const served: SequencedEvent[] = [];
    const hits = this.ranked ?? [];
    // Left out: every event hit not served but those out of scope (or gone from the store).
    let unserved = hits.filter((hit) => !hit.id.startsWith("#")).length;
    const { cited } = this.artifact;
    const result = () => ({
      events: served,
      cited: served.filter((event) => cited.has(event.eventId)).length,
      omitted: unserved,
    });
    // Events are read a window of hits at a time: the first FIRST_HIT_WINDOW, then as many as what
    // the budget has left would hold at the cost of those served so far (a few more), at most
    // twice the last window; until one is served, each window twice the last.
    const before = this.budget.remaining;
    let size = FIRST_HIT_WINDOW;
    for (let start = 0; start < hits.length; start += size) {
      if (start > 0)
        size = nextWindow(size, served.length, before - this.budget.remaining, this.budget.remaining);
      const window = hits.slice(start, start + size);
      const unread = window.map((hit) => hit.id).filter((id) => !id.startsWith("#") && !read.has(id));
      if (unread.length > 0) {
        const stored = await deps.events.eventsById(snapshot.subject, unread);
        for (const id of unread) read.set(id, stored.get(id)?.event ?? null);
      }
      for (const { id } of window) {
        const index = claimIndexOf(id);
        if (index !== null) {
          if (!this.plan.all.members.has(index) || this.offeredClaims.has(index)) continue;
          this.offerClaim(index);
          if (!this.keptClaims.has(index)) return result();
          continue;
        }
        if (id.startsWith("#")) continue;
        const event = read.get(id);
        if (!event || !eventInScope(this.plan.scope, event)) {
          unserved--;
          continue;
        }
        if (!this.budget.take("matches", event)) return result();
        served.push(event);
        unserved--;
      }
    }
    return result();
  }

  summary(): void {
    this.keptSummary = this.budget.take("summary", this.artifact.body.summary, this.tokens.summary);
  }

  /** The claims a query did not reach, after the tail. */
  rest(): void {
    if (this.ranked !== null) this.offerClaims(this.plan.all);
  }

  served(): Pick<Recall, "claims" | "pending" | "unresolvedConflicts" | "summary" | "days"> {
    const claims = [...this.keptClaims]
      .sort((a, b) => a - b)
      .map((index) => this.artifact.body.claims[index] as Claim);
    const pending = this.keptPending.map((p) => p.item);
    return {
      claims,
      pending,
      days: { claims: claims.map(shownDay), pending: pending.map(shownDay) },
      unresolvedConflicts: this.keptConflicts,
      summary: this.keptSummary ? this.artifact.body.summary : null,
    };
  }

  omitted(): Pick<Recall["omitted"], "claims" | "pending" | "unresolvedConflicts" | "summary"> {
    return {
      claims: this.plan.all.indices.length - this.keptClaims.size,
      pending: this.artifact.body.pending.length - this.keptPending.length,
      unresolvedConflicts: this.plan.conflicts.length - this.keptConflicts.length,
      summary: !this.keptSummary,
    };
  }
}

/** The claim a search document names (`#c<index>`), null for anything else. */
function claimIndexOf(id: string): number | null {
  return id.startsWith("#c") ? Number(id.slice(2)) : null;
}

/** After this many claims in a row that did not fit, a budget offers no more of that group. */
const MISFITS_IN_A_ROW = 64;

/** How many of a query's hits are read first. */
const FIRST_HIT_WINDOW = 16;

/**
 * The next window of hits to read: what `remaining` holds at the average cost of the `served`
 * events (`spent` tokens, claims served among them included), and a few more, between a few and
 * twice the last window; twice the last while nothing is served (or without a budget).
 */
function nextWindow(last: number, served: number, spent: number, remaining: number): number {
  if (served === 0 || !Number.isFinite(remaining)) return last * 2;
  const fits = Math.ceil(remaining / Math.max(1, spent / served));
  return Math.min(last * 2, Math.max(FIRST_HIT_WINDOW / 2, fits + FIRST_HIT_WINDOW / 2));
}
