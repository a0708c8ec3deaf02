import { z } from "zod";
import { ReadingRules } from "#domain/readings.ts";
import type {
  Claim,
  ConflictRef,
  ConsolidationOutput,
  MemoryEvent,
  PendingItem,
  SequencedEvent,
  Snapshot,
} from "#domain/schemas.ts";
import type { SearchHit } from "#domain/search-index.ts";
import { rawBeforeRecord, rawForRecord } from "#domain/serving.ts";
import { StandingResolver } from "#domain/standing-resolver.ts";
import { countTokens } from "#domain/tokens.ts";
import { InputError } from "#ports/errors.ts";
import { neverPause, type Pause } from "#ports/time.ts";
import type { Deps } from "./deps.ts";
import { type EarlierReading, earlierReadingsAmong } from "./recall-readings.ts";

import {
  type RecallSection,
  type RecallSectionItems,
  renderServedRecallText,
  shownDay,
  textFrameTokens,
  textGroup,
  textHeadingTokens,
  textItemTokens,
  textSkippedTokens,
} from "./recall-text.ts";
import type { TextVersion } from "./recall-text-lines.ts";
import {
  type ClaimPlan,
  type ClaimRun,
  type PartMeasure,
  type PartTokens,
  ServedArtifacts,
  type ServedBody,
  type ServedIndex,
} from "./served-artifacts.ts";

/**
 * The recall use case: what an agent reads, the published summary with the newer valid events
 * after it, or the raw valid events, a page at a time and within a token budget. Invariant: a
 * summary is served only as the serving rule allows (`domain/serving.ts`: bypass off, alias epoch
 * equal to the clock's, the artifact PUBLISHED and not STALE); revoked, superseded and untrusted
 * events are never served, and no call reads the whole log.
 */

export type { EarlierReading } from "./recall-readings.ts";

export interface Recall {
  mode: "summary" | "raw";
  reason: string;
  /** The clock this answer was read at. */
  highWater: number;
  inputEpoch: number;
  artifactId: string | null;
  /** The scope asked for (its items and the global ones are served), null for all. */
  scope: string | null;
  claims: ConsolidationOutput["claims"];
  pending: ConsolidationOutput["pending"];
  unresolvedConflicts: ConsolidationOutput["unresolvedConflicts"];
  summary: string | null;
  /** Valid events after the summary's coverage (summary mode), one page. */
  tail: SequencedEvent[];
  /** Valid events (raw mode), one page. */
  events: SequencedEvent[];
  /** Cold-layer events of the summary matching `query`, best first (first page only). */
  cold: SequencedEvent[];
  /**
   * The day shown beside each served claim and pending item (aligned with `claims` and `pending`):
   * the day of its newest source, for a claim restating free text or a reading; null otherwise.
   */
  days: { claims: Array<string | null>; pending: Array<string | null> };
  /**
   * Selector v3: the positions of the served `tail` or `events` that are earlier readings (a later
   * reading on their key and scope holds): valid, shown, never current. A summary's own earlier
   * readings are its claims with status "earlier".
   */
  earlierReadings: EarlierReading[];
  /**
   * What the token budget left out of this answer (the tail and raw events continue by cursor);
   * `oversized`: the events of this page's stretch of the log that alone exceed the whole budget,
   * skipped (the cursor moves past them) so that paging always makes progress.
   */
  omitted: {
    claims: number;
    pending: number;
    unresolvedConflicts: number;
    summary: boolean;
    cold: number;
    oversized: OversizedEvent[];
  };
  /** Pass as `cursor` for the next page of `tail` or `events`; null when this page is the last. */
  nextCursor: string | null;
  /**
   * The tokens (cl100k_base) served, in the rendering asked for: the whole text (§5a), or in JSON
   * the served items as the budget counts them (each claim, pending item, conflict and event as
   * JSON, the summary as its text).
   */
  servedTokens: number;
  /**
   * Text under a budget smaller than what its first line and notes alone need (set aside before
   * any item, the notes at their longest): the budget and that need. No item is served then, and
   * the text says so. Null otherwise (JSON counts its items alone, and sets nothing aside).
   */
  budgetBelowFrame: { budget: number; needed: number } | null;
  /**
   * Summary mode: the valid inputs of the summary that no claim or pending item derives from (its
   * cold layer, searchable with `query`), null when the summary's index does not count them
   * (artifacts built before it did). Raw mode: 0 (every valid event is served, a page at a time).
   */
  coldInputs: number | null;
}

/** An event no page can serve within the budget asked for: its id, sequence and size in tokens. */
export interface OversizedEvent {
  eventId: string;
  sequence: number;
  tokens: number;
}

export interface RecallOptions {
  /** At most this many tokens (cl100k_base) in the answer's items and events. */
  budget?: number | undefined;
  /** From `nextCursor`: continue the tail or the raw events after the previous page. */
  cursor?: string | undefined;
  /** Only this scope's items and events, and the global ones. */
  scope?: string | undefined;
  /** Lexical search over the served summary's cold layer. */
  query?: string | undefined;
  /** The rendering the budget counts and `servedTokens` reports (default json). */
  format?: RecallFormat | undefined;
  /** With format text: how the reader searches the cold layer, in its interface's words. */
  searchHint?: string | undefined;
}

/** JSON, or the text of §5a: `text` its version 2, `text-v1` its version 1. */
export type RecallFormat = "json" | "text" | "text-v1";

/** The text version a format names, null for JSON. */
export function textVersionOf(format: RecallFormat | undefined): TextVersion | null {
  return format === "text" ? 2 : format === "text-v1" ? 1 : null;
}

/** At most this many events in one recall answer; `nextCursor` pages on. */
export const RECALL_PAGE_EVENTS = 1000;
/**
 * At most about this many bytes of events (as JSON) in one page: an event may hold a megabyte
 * (64 assertions of 16 KiB), so a page is bounded by its size as well as by its count.
 */
export const RECALL_PAGE_BYTES = 5 * 1024 * 1024;
/** Without a budget, at most this many cold events matching a query (the claims are all served). */
export const RECALL_COLD_MATCHES = 20;
/** Under a budget, at most this many of a query's best documents are offered (claims and cold events). */
export const RECALL_RANKED_HITS = 200;

const NOTHING_OMITTED: Recall["omitted"] = {
  claims: 0,
  pending: 0,
  unresolvedConflicts: 0,
  summary: false,
  cold: 0,
  oversized: [],
};

/** What an item costs in a rendering; a section's heading is paid with its first item. */
interface Measure extends PartMeasure {
  heading(section: RecallSection): number;
  /** The group an item is served under within its section, whose heading its first item pays. */
  group<S extends RecallSection>(
    section: S,
    item: RecallSectionItems[S],
  ): { group: string; tokens: number } | null;
  /** The note naming an event skipped as larger than any page can serve. */
  skipped(event: OversizedEvent): number;
}

/** An item as the JSON budget counts it: its JSON, the summary as its text. */
function jsonTokens(section: RecallSection, item: unknown): number {
  if (typeof item === "string") return countTokens(item);
  if (EVENT_SECTIONS.has(section) && Object.isFrozen(item)) {
    const measured = measuredEvent(item as SequencedEvent);
    measured.tokens ??= countTokens(JSON.stringify(item));
    return measured.tokens;
  }
  return countTokens(JSON.stringify(item));
}

const EVENT_SECTIONS: ReadonlySet<RecallSection> = new Set(["tail", "events", "matches"]);

/**
 * A stored event's JSON size and (once counted) tokens, measured once per decoded event: a
 * decoded event is frozen and shared by every read of its body (`decodeStoredEvent`), and each
 * recall that pages over the same events would otherwise serialise and count each of them again.
 */
function measuredEvent(event: SequencedEvent): { chars: number; tokens?: number } {
  let measured = measuredEvents.get(event);
  if (measured === undefined) {
    measured = { chars: JSON.stringify(event).length };
    measuredEvents.set(event, measured);
  }
  return measured;
}

const measuredEvents = new WeakMap<SequencedEvent, { chars: number; tokens?: number }>();

/** An event's JSON length: what a page's size bound counts (measured once when frozen). */
function eventChars(event: SequencedEvent): number {
  return Object.isFrozen(event) ? measuredEvent(event).chars : JSON.stringify(event).length;
}

const JSON_MEASURE: Measure = {
  rendering: "json",
  item: (section, item) => jsonTokens(section, item),
  heading: () => 0,
  group: () => null,
  skipped: () => 0,
};
const textMeasure = (version: TextVersion): Measure => ({
  rendering: version === 2 ? "text" : "text-v1",
  item: (section, item) => textItemTokens(section, item, version),
  heading: textHeadingTokens,
  group: (section, item) => textGroup(section, item, version),
  skipped: textSkippedTokens,
});
const TEXT_MEASURES: Record<TextVersion, Measure> = { 1: textMeasure(1), 2: textMeasure(2) };

/**
 * Spends a token budget item by item, in the order the caller offers them. In JSON it counts
 * every item it takes, budget or not: their sum is the answer's `servedTokens`.
 */
class TokenBudget {
  private used = 0;
  /** What the rendering set aside beyond its items (the text's first line and notes). */
  private reserved = 0;
  /** What a page holding only its frame leaves its items: an item costing more is never served. */
  private room: number | undefined;
  /** The tokens of the items taken (headings and reserve aside). */
  private items = 0;
  private readonly opened = new Set<string>();
  private readonly counting: boolean;
  constructor(
    readonly limit: number | undefined,
    readonly measure: Measure,
  ) {
    this.room = limit;
    this.counting = limit !== undefined || measure === JSON_MEASURE;
  }
  /**
   * Sets aside what the rendering costs beyond its items (the text's first line and notes);
   * `continued` is what a page continuing by cursor sets aside, which bounds what any page serves.
   */
  reserve(tokens: number, continued = tokens): void {
    this.used += tokens;
    this.reserved = tokens;
    if (this.limit !== undefined) this.room = this.limit - continued;
  }
  /** What `reserve` set aside, when that alone is more than the budget (then no item fits). */
  belowFrame(): { budget: number; needed: number } | null {
    return this.limit !== undefined && this.reserved > this.limit
      ? { budget: this.limit, needed: this.reserved }
      : null;
  }
  /**
   * True (and counted) when the item fits what is left; always true without a budget. `counted`
   * gives the item's cost when it is known already (an artifact's parts, counted once).
   */
  take<S extends RecallSection>(section: S, item: RecallSectionItems[S], counted?: number): boolean {
    return this.offer(section, item, counted) === "taken";
  }
  /**
   * As `take`, telling apart an item that a later page can serve ("later") from one that no page
   * can (`{tokens}`, its own cost: more than a page leaves its items).
   */
  offer<S extends RecallSection>(
    section: S,
    item: RecallSectionItems[S],
    counted?: number,
  ): "taken" | "later" | { tokens: number } {
    if (!this.counting) return "taken";
    const tokens = counted ?? this.measure.item(section, item);
    if (this.limit !== undefined && this.room !== undefined) {
      const group = this.measure.group(section, item);
      const groupKey = group === null ? null : `${section}\u0000${group.group}`;
      const heading =
        (this.opened.has(section) ? 0 : this.measure.heading(section)) +
        (group === null || this.opened.has(groupKey as string) ? 0 : group.tokens);
      if (heading + tokens > this.room) return { tokens };
      if (this.used + heading + tokens > this.limit) return "later";
      this.used += heading + tokens;
      this.opened.add(section);
      if (groupKey !== null) this.opened.add(groupKey);
    }
    this.items += tokens;
    return "taken";
  }
  /** Counts the note naming a skipped event; false (nothing counted) when it does not fit. */
  noteSkipped(event: OversizedEvent): boolean {
    if (this.limit === undefined) return true;
    const cost = this.measure.skipped(event);
    if (this.used + cost > this.limit) return false;
    this.used += cost;
    return true;
  }
  get limited(): boolean {
    return this.limit !== undefined;
  }
  /** What is left of the budget (infinite without one). */
  get remaining(): number {
    return this.limit === undefined ? Number.POSITIVE_INFINITY : this.limit - this.used;
  }
  /** The tokens of the items taken: a JSON answer's `servedTokens`. */
  get served(): number {
    return this.items;
  }
}

/** Whether something in `scope` is served to a recall for `wanted` (its scope and the global one). */
function inScope(wanted: string | undefined, scope: string): boolean {
  return wanted === undefined || scope === wanted || scope === "global";
}

/** An event is in a scope when it asserts nothing (it is about the subject) or asserts in it. */
function eventInScope(wanted: string | undefined, event: MemoryEvent): boolean {
  if (wanted === undefined || !event.assertions || event.assertions.length === 0) return true;
  return event.assertions.some((assertion) => inScope(wanted, assertion.scope));
}

/**
 * Serves the summary plus its tail only when the alias's epoch equals the clock's, the artifact is
 * PUBLISHED and the tenant is not in bypass; otherwise the raw valid events and why. Revoked,
 * superseded and untrusted events are never served. Events come a page at a time (never the whole
 * log per call). Under a token budget the first page spends it in this order: claims that keep
 * must-preserve items, pending items, unresolved conflicts, the other claims, the prose summary,
 * the tail, then cold events matching `query`; what did not fit is counted in `omitted`.
 */
export async function recall(
  deps: Pick<Deps, "events" | "artifacts" | "settings" | "pause">,
  subject: string,
  options: RecallOptions = {},
): Promise<Recall> {
  // A text budget first keeps no room for the note on what it left out; when that note then
  // does not fit, the selection runs again with room for it at its longest.
  // JSON: the served items as the budget counts them, summed while it took them.
  // The query is searched once, whichever selection uses it.
  const searched = new Map<ServedIndex, Promise<Searched>>();
  const first = await select(deps, subject, options, false, searched);
  if (textVersionOf(options.format) === null) return first;
  const tokens = textTokens(first, options);
  if (options.budget === undefined || tokens <= options.budget) return { ...first, servedTokens: tokens };
  const second = await select(deps, subject, options, true, searched);
  return { ...second, servedTokens: textTokens(second, options) };
}

/** The tokens of the whole text recall serves (what a text budget's frame and items add up to). */
function textTokens(answer: Recall, options: RecallOptions): number {
  return renderServedRecallText(answer, {
    searchHint: options.searchHint,
    version: textVersionOf(options.format) ?? 2,
  }).tokens;
}

async function select(
  deps: Pick<Deps, "events" | "artifacts" | "settings" | "pause">,
  subject: string,
  options: RecallOptions,
  roomForLeftOut: boolean,
  searched: Map<ServedIndex, Promise<Searched>>,
): Promise<Recall> {
  const after = options.cursor === undefined ? null : decodeCursor(options.cursor);
  const snapshot = await deps.events.snapshot(subject);
  const alias = snapshot.expectedAlias;
  const reason = rawBeforeRecord(await deps.settings.settings(), snapshot);
  const base = {
    highWater: snapshot.highWater,
    inputEpoch: snapshot.inputEpoch,
    scope: options.scope ?? null,
  };
  const version = textVersionOf(options.format);
  const budget = new TokenBudget(options.budget, version === null ? JSON_MEASURE : TEXT_MEASURES[version]);
  const raw = async (why: string): Promise<Recall> => {
    const frame = itemlessRecall({ mode: "raw", reason: why, ...base, artifactId: null, coldInputs: 0 });
    reserveFrame(budget, frame, options, NOTHING_OMITTED);
    const page = await validPage(deps, snapshot, after ?? 0, budget, options.scope, "events");
    return {
      ...frame,
      events: page.events,
      earlierReadings: page.earlierReadings,
      omitted: { ...NOTHING_OMITTED, oversized: page.oversized },
      nextCursor: page.nextCursor,
      servedTokens: budget.served,
      budgetBelowFrame: budget.belowFrame(),
    };
  };
  if (reason !== null || !alias) return raw(reason ?? "no summary");
  const record = await deps.artifacts.getRecord(subject, alias.parentArtifactId);
  const unserved = rawForRecord(alias.parentArtifactId, record);
  if (unserved !== null) return raw(unserved);
  const served = ServedArtifacts.of(deps.artifacts);
  let body: ServedBody;
  try {
    body = await served.body(subject, alias.parentArtifactId, deps.pause);
  } catch (error) {
    // A missing or damaged body never fails a recall: the raw layer answers, saying why.
    return raw(
      `summary ${alias.parentArtifactId} cannot be read (${error instanceof Error ? error.name : "error"}: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}); raw until it is rebuilt`,
    );
  }
  // The index says how many inputs stay cold (every summary recall reports it) and answers queries.
  const index = await served.index(subject, alias.parentArtifactId);
  const frame = itemlessRecall({
    mode: "summary",
    reason: "",
    ...base,
    artifactId: alias.parentArtifactId,
    coldInputs: index?.coldInputs ?? null,
  });
  if (after !== null) {
    reserveFrame(budget, frame, options, NOTHING_OMITTED);
    const page = await validPage(deps, snapshot, after, budget, options.scope, "tail");
    return {
      ...frame,
      reason: `summary ${alias.parentArtifactId}: the tail continues`,
      tail: page.events,
      earlierReadings: page.earlierReadings,
      omitted: { ...NOTHING_OMITTED, oversized: page.oversized },
      nextCursor: page.nextCursor,
      servedTokens: budget.served,
      budgetBelowFrame: budget.belowFrame(),
    };
  }
  // Each part's tokens in this rendering, counted once per artifact, and the claims the scope serves.
  const pause = deps.pause ?? neverPause;
  if (index !== null) body.showDays(index);
  const tokens = await body.tokens(budget.measure, pause);
  const plan = body.claimPlan(options.scope, index?.mustPreserveClaims ?? new Set<number>(), tokens);
  reserveFrame(
    budget,
    frame,
    options,
    roomForLeftOut
      ? {
          claims: plan.all.indices.length,
          pending: body.body.pending.length,
          unresolvedConflicts: plan.conflicts.length,
          summary: body.body.summary !== "",
          cold: options.query === undefined ? 0 : budget.limited ? RECALL_RANKED_HITS : RECALL_COLD_MATCHES,
          // A skipped event's note is counted when the page meets it.
          oversized: [],
        }
      : NOTHING_OMITTED,
    alias.coversThrough < snapshot.highWater,
  );
  let search: Promise<Searched> = Promise.resolve({ hits: null, problem: null });
  if (index !== null) {
    search = searched.get(index) ?? rankedHits(index, options, budget.limited, pause);
    searched.set(index, search);
  }
  const { hits, problem } = await search;
  const parts = new SummaryParts(budget, body, tokens, plan, hits);
  parts.first();
  const cold = hits === null ? NO_MATCHES : await parts.hits(deps, snapshot);
  parts.summary();
  const page = await validPage(deps, snapshot, alias.coversThrough, budget, options.scope, "tail", true);
  parts.rest();
  return {
    ...frame,
    reason: `summary ${alias.parentArtifactId} covers through ${alias.coversThrough}; ${page.events.length} newer events follow${page.nextCursor ? " (more with the cursor)" : ""}${options.query !== undefined && index === null ? "; this summary has no search index: query not answered" : ""}${problem === null ? "" : `; this summary's search index cannot be read (${problem}): query not answered`}`,
    ...parts.served(),
    tail: page.events,
    cold: cold.events,
    earlierReadings: page.earlierReadings,
    omitted: { ...parts.omitted(), cold: cold.omitted, oversized: page.oversized },
    nextCursor: page.nextCursor,
    servedTokens: budget.served,
    budgetBelowFrame: budget.belowFrame(),
  };
}

/** A recall with no items yet: what a text budget's frame is measured on and each answer fills. */
export function itemlessRecall(
  head: Pick<Recall, "mode" | "reason" | "highWater" | "inputEpoch" | "scope" | "artifactId" | "coldInputs">,
): Recall {
  return {
    ...head,
    claims: [],
    pending: [],
    unresolvedConflicts: [],
    summary: null,
    tail: [],
    events: [],
    cold: [],
    days: { claims: [], pending: [] },
    earlierReadings: [],
    omitted: NOTHING_OMITTED,
    nextCursor: null,
    servedTokens: 0,
    budgetBelowFrame: null,
  };
}

/**
 * Under a budget on the text: sets aside what the text's first line and notes can cost at most
 * (a cursor when events may follow, everything left out, the cold note, the served count), so the
 * items the budget then takes can never make the whole text exceed it.
 */
function reserveFrame(
  budget: TokenBudget,
  frame: Recall,
  options: RecallOptions,
  mostOmitted: Recall["omitted"],
  paged = frame.highWater > 0,
): void {
  const version = textVersionOf(options.format);
  if (version === null || budget.limit === undefined) return;
  const limit = budget.limit;
  const frameTokens = (cursor: string | null, omitted: Recall["omitted"]) =>
    textFrameTokens(frame, { cursor, omitted, limit }, { searchHint: options.searchHint, version });
  const cursor = encodeCursor(frame.highWater);
  const tokens = frameTokens(paged ? cursor : null, mostOmitted);
  // A page continuing by cursor sets aside its frame with a cursor and nothing else left out.
  const continued = paged && mostOmitted === NOTHING_OMITTED ? tokens : frameTokens(cursor, NOTHING_OMITTED);
  budget.reserve(tokens, continued);
}

const NO_MATCHES = { events: [] as SequencedEvent[], omitted: 0 };

/**
 * A query's best documents (claims, pending items, cold events), best first: null without a
 * query or an index. Under a budget the best RECALL_RANKED_HITS are offered, the budget deciding
 * how many are served; without one, every claim is served and the best cold events up to
 * RECALL_COLD_MATCHES.
 */
async function rankedHits(
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

/** A query's hits (null without a query), or why the index could not answer it. */
interface Searched {
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
class SummaryParts {
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
   * The query's other claims and cold events, best first, until the first that does not fit (CONTRACT
   * §5a: "until the next does not fit"); the cold events served, and the cold hits left out (read or
   * not: a hit is read from the store only when it is offered).
   */
  async hits(
    deps: Pick<Deps, "events">,
    snapshot: Snapshot,
  ): Promise<{ events: SequencedEvent[]; omitted: number }> {
    const served: SequencedEvent[] = [];
    const hits = this.ranked ?? [];
    // Left out: every cold hit not served but those out of scope (or gone from the store).
    let unserved = hits.filter((hit) => !hit.id.startsWith("#")).length;
    const result = () => ({ events: served, omitted: unserved });
    // Cold events are read a window of hits at a time, each window twice the last: a budget is
    // usually spent within the first.
    let size = FIRST_HIT_WINDOW;
    for (let start = 0; start < hits.length; start += size, size *= 2) {
      const window = hits.slice(start, start + size);
      const coldIds = window.map((hit) => hit.id).filter((id) => !id.startsWith("#"));
      const stored =
        coldIds.length === 0 ? new Map() : await deps.events.eventsById(snapshot.subject, coldIds);
      for (const { id } of window) {
        const index = claimIndexOf(id);
        if (index !== null) {
          if (!this.plan.all.members.has(index) || this.offeredClaims.has(index)) continue;
          this.offerClaim(index);
          if (!this.keptClaims.has(index)) return result();
          continue;
        }
        if (id.startsWith("#")) continue;
        const event = stored.get(id)?.event;
        if (event === undefined || !eventInScope(this.plan.scope, event)) {
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

/** How many of a query's hits are read first (the next windows double). */
const FIRST_HIT_WINDOW = 16;

/**
 * The valid events after `after` up to the snapshot's high-water mark, one page: the log is read
 * in store pages, each event judged by the selector's rule from its own actors (never the whole
 * log), until RECALL_PAGE_EVENTS valid events, RECALL_PAGE_BYTES or the token budget. An event
 * larger than what any page leaves its items is skipped, named in `oversized`, and ends the page
 * (so one page counts the tokens of at most one event it does not serve). A page that holds
 * nothing before its events (raw, or continuing by cursor) serves or skips at least one, the note
 * naming a skipped event counted when it fits (only a budget smaller than its frame and that note
 * is then exceeded); the summary's first page (`mayDefer`) may end before one, its cursor page
 * starting afresh. So following `nextCursor` always reaches the end.
 */
async function validPage(
  deps: Pick<Deps, "events" | "pause">,
  snapshot: Snapshot,
  after: number,
  budget: TokenBudget,
  scope: string | undefined,
  section: "tail" | "events",
  mayDefer = false,
): Promise<{
  events: SequencedEvent[];
  oversized: OversizedEvent[];
  nextCursor: string | null;
  earlierReadings: EarlierReading[];
}> {
  const { subject, highWater } = snapshot;
  const policy = await deps.events.trustPolicy(subject);
  const resolver = new StandingResolver((ids) => deps.events.eventsById(subject, ids), policy, highWater);
  const events: SequencedEvent[] = [];
  const oversized: OversizedEvent[] = [];
  const page = async (nextCursor: string | null) => ({
    events,
    oversized,
    nextCursor,
    earlierReadings: await earlierReadingsAmong(deps, subject, ReadingRules.of(policy), resolver, events),
  });
  const pause = deps.pause ?? neverPause;
  let position = after;
  let bytes = 0;
  // A budget usually ends the page long before RECALL_PAGE_EVENTS: the log is read in growing pages.
  let readSize = budget.limited ? 64 : RECALL_PAGE_EVENTS;
  while (position < highWater) {
    const records = await deps.events.eventsPage(subject, position, highWater, readSize);
    readSize = Math.min(RECALL_PAGE_EVENTS, readSize * 4);
    if (records.length === 0) break;
    resolver.remember(records);
    for (const { event } of records) {
      await pause();
      if (
        eventInScope(scope, event) &&
        (resolver.validInputNow(event.eventId) ?? (await resolver.isValidInput(event.eventId)))
      ) {
        if (events.length >= RECALL_PAGE_EVENTS) return page(encodeCursor(position));
        const size = eventChars(event);
        if (events.length > 0 && bytes + size > RECALL_PAGE_BYTES) return page(encodeCursor(position));
        const offered = budget.offer(section, event);
        if (offered === "later") return page(encodeCursor(position));
        if (offered !== "taken") {
          const skipped = { eventId: event.eventId, sequence: event.sequence, tokens: offered.tokens };
          // The note naming it did not fit: a later page names it, unless this page must move on.
          if (!budget.noteSkipped(skipped) && (mayDefer || events.length > 0))
            return page(encodeCursor(position));
          oversized.push(skipped);
          return page(event.sequence < highWater ? encodeCursor(event.sequence) : null);
        }
        events.push(event);
        bytes += size;
      }
      position = event.sequence;
    }
  }
  return page(null);
}

const Cursor = z.object({ after: z.number().int().nonnegative() });

/** An opaque cursor: the sequence a page ended after. */
function encodeCursor(after: number): string {
  return Buffer.from(JSON.stringify({ after })).toString("base64url");
}

function decodeCursor(cursor: string): number {
  try {
    return Cursor.parse(JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))).after;
  } catch (error) {
    throw new InputError(
      `cursor: "${cursor.slice(0, 40)}" is not a cursor memgate issued; pass nextCursor as it came`,
      { cause: error, field: "cursor" },
    );
  }
}
