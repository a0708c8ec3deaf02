import { z } from "zod";
import { ReadingRules } from "#domain/readings.ts";
import type { ConsolidationOutput, SequencedEvent, Snapshot } from "#domain/schemas.ts";
import { rawBeforeRecord, rawForRecord } from "#domain/serving.ts";
import { StandingResolver } from "#domain/standing-resolver.ts";
import { InputError } from "#ports/errors.ts";
import { neverPause } from "#ports/time.ts";
import type { Deps } from "./deps.ts";
import {
  eventChars,
  eventInScope,
  JSON_MEASURE,
  type OversizedEvent,
  TEXT_MEASURES,
  TokenBudget,
} from "./recall-budget.ts";
import {
  type Matches,
  RECALL_COLD_MATCHES,
  RECALL_RANKED_HITS,
  rankedHits,
  type Searched,
  SummaryParts,
} from "./recall-parts.ts";
import { type EarlierReading, earlierReadingsAmong } from "./recall-readings.ts";
import { renderServedRecallText, textFrameTokens } from "./recall-text.ts";
import type { TextVersion } from "./recall-text-lines.ts";
import { ServedArtifacts, type ServedBody, type ServedIndex } from "./served-artifacts.ts";

/**
 * The recall use case: what an agent reads, the published summary with the newer valid events
 * after it, or the raw valid events, a page at a time and within a token budget. Invariant: a
 * summary is served only as the serving rule allows (`domain/serving.ts`: bypass off, alias epoch
 * equal to the clock's, the artifact PUBLISHED and not STALE); revoked, superseded and untrusted
 * events are never served, and no call reads the whole log.
 */

export type { OversizedEvent } from "./recall-budget.ts";
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
  /**
   * The summary's valid inputs `query` reaches, best first (first page only): cold inputs and,
   * since recall index version 3, inputs its claims or pending items derive from.
   */
  cold: SequencedEvent[];
  /** How many of `cold` a claim or pending item derives from (the others are cold inputs). */
  citedMatches: number;
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

export interface RecallOptions {
  /** At most this many tokens (cl100k_base) in the answer's items and events. */
  budget?: number | undefined;
  /** From `nextCursor`: continue the tail or the raw events after the previous page. */
  cursor?: string | undefined;
  /** Only this scope's items and events, and the global ones. */
  scope?: string | undefined;
  /** A question or words, searched over the served summary's claims, pending items and inputs. */
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

const NOTHING_OMITTED: Recall["omitted"] = {
  claims: 0,
  pending: 0,
  unresolvedConflicts: 0,
  summary: false,
  cold: 0,
  oversized: [],
};

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
  // The query is searched once, and each event it reaches read once, whichever selection uses them.
  const searched = new Map<ServedIndex, Promise<Searched>>();
  const read = new Map<string, SequencedEvent | null>();
  const first = await select(deps, subject, options, false, searched, read);
  if (textVersionOf(options.format) === null) return first;
  const tokens = textTokens(first, options);
  if (options.budget === undefined || tokens <= options.budget) return { ...first, servedTokens: tokens };
  const second = await select(deps, subject, options, true, searched, read);
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
  read: Map<string, SequencedEvent | null>,
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
  const cold = hits === null ? NO_MATCHES : await parts.hits(deps, snapshot, read);
  parts.summary();
  const page = await validPage(deps, snapshot, alias.coversThrough, budget, options.scope, "tail", true);
  parts.rest();
  return {
    ...frame,
    reason: `summary ${alias.parentArtifactId} covers through ${alias.coversThrough}; ${page.events.length} newer events follow${page.nextCursor ? " (more with the cursor)" : ""}${options.query !== undefined && index === null ? "; this summary has no search index: query not answered" : ""}${problem === null ? "" : `; this summary's search index cannot be read (${problem}): query not answered`}`,
    ...parts.served(),
    tail: page.events,
    cold: cold.events,
    citedMatches: cold.cited,
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
    citedMatches: 0,
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

const NO_MATCHES: Matches = { events: [], cited: 0, omitted: 0 };

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
