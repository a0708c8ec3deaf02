import MiniSearch from "minisearch";
import { z } from "zod";
import { uncitedInputs } from "#domain/cold-layer.ts";
import { sortableInstant } from "#domain/dates.ts";
import type { ChecklistEntry, GateContext } from "#domain/gate/index.ts";
import { extractMentions } from "#domain/mentions.ts";
import type { Claim, ConsolidationOutput, MemoryEvent, PendingItem, ValueData } from "#domain/schemas.ts";
import { MAX_SEARCH_TERMS, type SearchDocument, type SearchHit, SearchIndex } from "#domain/search-index.ts";
import { dayWords } from "#domain/search-terms.ts";
import { parseStrictJsonPaced } from "#domain/strict-json.ts";
import type { Pause } from "#ports/time.ts";

/**
 * What recall needs of an artifact beyond its body, built once when the artifact is generated and
 * stored write-once beside it: which claims keep must-preserve items (as the gate judged them:
 * they come first under a token budget), how many inputs stay cold, and the search a query runs.
 * Version 3 ranks a question's words over the claims, the pending items and every valid input,
 * the cold layer and the inputs the claims restate (CONTRACT §6 "Search"): a summarised turn's own
 * words are reached too. Version 2 searched the claims, the pending items and the cold layer;
 * version 1 the cold layer alone, with MiniSearch. Both are still read. A recall with `query`
 * searches the index and never scans the log.
 */
const RecallIndexV1 = z.object({
  version: z.literal(1),
  /** Indexes into `claims` of the claims that keep a must-preserve item, in claim order. */
  mustPreserveClaims: z.array(z.number().int().nonnegative()),
  /** MiniSearch's serialised index over the cold events' text (ids are event ids). */
  cold: z.string(),
  /**
   * How many valid inputs no claim or pending item derives from (the cold layer, all of it in
   * `cold`); absent in indexes built before it was counted.
   */
  coldInputs: z.number().int().nonnegative().optional(),
});
const Day = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .nullable();
const RecallDays = z.object({ claims: z.array(Day), pending: z.array(Day) });
export type RecallDays = z.infer<typeof RecallDays>;

/** Versions 2 and 3: one shape; version 3 indexes every valid input, version 2 the cold ones. */
const RecallIndexRanked = z.object({
  version: z.union([z.literal(2), z.literal(3)]),
  mustPreserveClaims: z.array(z.number().int().nonnegative()),
  coldInputs: z.number().int().nonnegative(),
  /** The day the text shows beside each claim and pending item (`servedDays`), aligned with them. */
  days: RecallDays,
  /**
   * The serialised `SearchIndex` (JSON text, parsed on the first query): claims as `#c<index>`,
   * pending items as `#p<index>` (ids no event can have), events by their event id (version 3:
   * every valid input; version 2: the cold ones).
   */
  search: z.string(),
});
export const RecallIndex = z.union([RecallIndexV1, RecallIndexRanked]);
export type RecallIndex = z.infer<typeof RecallIndex>;

/** The search document id of a summary's claim or pending item (`#` starts no event id). */
export const claimDocument = (index: number) => `#c${index}`;
export const pendingDocument = (index: number) => `#p${index}`;

/**
 * Builds the index of a gate-passed candidate from the context and the checklist of the very check
 * that passed it (the gate is not run again). Searched: each claim (its text, its value, its key and
 * scope and its sources' days, who wrote its sources, and as context their texts and the texts of
 * the inputs before them), each pending item (its text, its sources' days, authors and that
 * context), and each valid input in sequence order, cold or restated by a claim (its text and text
 * values, its assertions' keys and scopes and its day, its source, and the texts of the two valid
 * inputs before it and the one after it in the log as context).
 */
export function buildRecallIndex(
  context: GateContext,
  body: ConsolidationOutput,
  checklist: readonly ChecklistEntry[],
): RecallIndex {
  const mustPreserveClaims = new Set<number>();
  for (const { keptBy } of checklist) {
    const match = keptBy === null ? null : /^claims\[(\d+)\]/.exec(keptBy);
    if (match?.[1] !== undefined) mustPreserveClaims.add(Number(match[1]));
  }
  const inputs = context.selection.validInputs;
  const position = new Map<string, number>(inputs.map((event, i) => [event.eventId, i]));
  const eventsOf = (ids: readonly string[]) => ids.flatMap((id) => inputs[position.get(id) ?? -1] ?? []);
  // Many events share a day: its words are made once.
  const daysRead = new Map<string, string>();
  const dayWordsOf = (event: MemoryEvent) => {
    const day = event.occurredAt?.slice(0, 10) ?? "";
    const known = daysRead.get(day);
    if (known !== undefined) return known;
    const words = dayWords(day);
    daysRead.set(day, words);
    return words;
  };
  const sources: Sources = {
    authors: (ids) => [...new Set(eventsOf(ids).flatMap((event) => event.source ?? []))].join(" "),
    texts: (ids) => {
      // Each source with the input before it: a reply's words are often in the question it answers.
      const places = new Set(
        ids.flatMap((id) => {
          const at = position.get(id);
          return at === undefined ? [] : [at - 1, at];
        }),
      );
      return [...places]
        .sort((a, b) => a - b)
        .flatMap((at) => (inputs[at] === undefined ? [] : [eventText(inputs[at])]))
        .join(" ");
    },
    days: (ids) => [...new Set(eventsOf(ids).map(dayWordsOf))].join(" "),
  };
  const documents: SearchDocument[] = [
    ...body.claims.map((claim, i) => ({ id: claimDocument(i), fields: claimFields(claim, sources) })),
    ...body.pending.map((item, i) => ({ id: pendingDocument(i), fields: pendingFields(item, sources) })),
  ];
  // Every valid input in sequence order (the order equal scores keep).
  for (const [at, event] of inputs.entries()) {
    const id = event.eventId;
    const around = [inputs[at - 2], inputs[at - 1], inputs[at + 1]].flatMap((neighbour) =>
      neighbour ? [eventText(neighbour)] : [],
    );
    documents.push({
      id,
      fields: {
        text: eventText(event),
        keys: [...(event.assertions ?? []).map((a) => `${a.key} ${a.scope}`), dayWordsOf(event)].join(" "),
        ...(event.source === undefined ? {} : { source: event.source }),
        context: around.join(" "),
      },
    });
  }
  return {
    version: 3,
    mustPreserveClaims: [...mustPreserveClaims].sort((a, b) => a - b),
    coldInputs: uncitedInputs(body, inputs).length,
    days: servedDays(body, (id) => inputs[position.get(id) ?? -1]),
    search: encodeSearch(SearchIndex.build(documents)),
  };
}

/**
 * The day recall's text shows beside each claim and pending item (CONTRACT §5a, version 2): no
 * reading, count, status or restated statement is served without the day it was true. A claim shows
 * the calendar day of its newest source (its `occurredAt` as written; the latest instant when
 * several have one) when it restates free text or a reading (a `text`, or a `{text}` or quantity
 * value) drawn from a fact, note or task (what was so on a day, not a standing rule: constraints,
 * permissions, decisions and preferences hold until changed), and its text holds no date already; a
 * pending item when its text holds no date. A claim of an earlier reading shows its `asOf`.
 * Measured on the eight shared logs' recorded answers to consolidate-v5: 912 tokens, 8.9 % of their
 * text; on the chat-heavy ones 136 (3.2 %). Null when no source has an `occurredAt`.
 */
export function servedDays(
  body: Pick<ConsolidationOutput, "claims" | "pending">,
  eventOf: (id: string) => MemoryEvent | undefined,
): RecallDays {
  const newestDay = (ids: readonly string[]): string | null => {
    let newest: { instant: string; day: string } | null = null;
    for (const id of ids) {
      const occurredAt = eventOf(id)?.occurredAt;
      const instant = occurredAt === undefined ? null : sortableInstant(occurredAt);
      if (occurredAt === undefined || instant === null) continue;
      if (newest === null || instant > newest.instant) newest = { instant, day: occurredAt.slice(0, 10) };
    }
    return newest?.day ?? null;
  };
  const dated = (text: string | undefined) =>
    text !== undefined && extractMentions(text).mentions.some((mention) => mention.kind === "date");
  const shows = (claim: Claim) =>
    claim.status !== "earlier" &&
    (claim.text !== undefined || "text" in claim.value || "quantity" in claim.value) &&
    claim.derivedFrom.some((id) => STATE_KINDS.has(eventOf(id)?.kind ?? "")) &&
    !dated(claim.text) &&
    !("text" in claim.value && dated(claim.value.text));
  return {
    claims: body.claims.map((claim) => (shows(claim) ? newestDay(claim.derivedFrom) : null)),
    pending: body.pending.map((item) => (dated(item.text) ? null : newestDay(item.derivedFrom))),
  };
}

/** The kinds of event that say how things were on a day (what a claim's day is shown for). */
const STATE_KINDS: ReadonlySet<string> = new Set(["fact", "note", "task"]);

/** An event's words: its text and its text values. */
function eventText(event: MemoryEvent): string {
  const values = (event.assertions ?? []).flatMap((a) => ("text" in a.value ? [a.value.text] : []));
  return [event.text ?? "", ...values].join(" ");
}

/**
 * What a claim's or pending item's sources give its search: their authors, their texts as context,
 * and the words of their days.
 */
interface Sources {
  authors(ids: readonly string[]): string;
  texts(ids: readonly string[]): string;
  days(ids: readonly string[]): string;
}

function claimFields(claim: Claim, sources: Sources): SearchDocument["fields"] {
  return {
    text: [claim.text ?? "", valueWords(claim.value)].join(" "),
    keys: `${claim.key} ${claim.scope} ${sources.days(claim.derivedFrom)}`,
    source: sources.authors(claim.derivedFrom),
    context: sources.texts(claim.derivedFrom),
  };
}

function pendingFields(item: PendingItem, sources: Sources): SearchDocument["fields"] {
  return {
    text: item.text,
    keys: sources.days(item.derivedFrom),
    source: sources.authors(item.derivedFrom),
    context: sources.texts(item.derivedFrom),
  };
}

/** A value as words: a text as written, a quantity with its unit, a date, an entity, scopes. */
function valueWords(value: ValueData): string {
  if ("text" in value) return value.text;
  if ("bool" in value) return "";
  if ("quantity" in value) return `${value.quantity} ${value.unit ?? ""}`;
  if ("date" in value) return value.date;
  if ("entity" in value) return value.entity;
  return value.scopes.join(" ");
}

/** A served artifact's search, loaded once from its recall index (see `ServedIndex`). */
export interface RecallSearch {
  /**
   * The best `limit` documents for `query`, best first: claims (`#c<index>`), pending items
   * (`#p<index>`) and events (their ids), pausing between query words.
   */
  search(query: string, limit: number, pause: Pause): Promise<SearchHit[]>;
}

/**
 * The index's search, loaded once: a version 2 or 3 index decodes its flat parts (no object per
 * term or posting, so even a 100,000-event log loads in one short step); a version 1 index
 * answers as its MiniSearch index of cold events (parsed with pauses, for a serving thread), its
 * words combined with OR (each a fuzzy prefix search, at most MAX_SEARCH_TERMS of them).
 */
export async function loadRecallSearch(index: RecallIndex, pause: Pause): Promise<RecallSearch> {
  if (index.version !== 1) {
    await pause();
    const search = decodeSearch(index.search);
    return {
      async search(query, limit, pausing) {
        const steps = search.searchSteps(query, limit);
        for (;;) {
          const step = steps.next();
          if (step.done) return step.value;
          await pausing();
        }
      },
    };
  }
  const parsed = await parseStrictJsonPaced(index.cold, pause);
  const cold = parsed.ok
    ? await MiniSearch.loadJSAsync(
        parsed.value as Parameters<typeof MiniSearch.loadJSAsync>[0],
        V1_SEARCH_OPTIONS,
      )
    : MiniSearch.loadJSON(index.cold, V1_SEARCH_OPTIONS);
  return {
    async search(query, limit, pausing) {
      const words = (MiniSearch.getDefault("tokenize") as (text: string) => string[])(query)
        .filter((word) => word !== "")
        .slice(0, MAX_SEARCH_TERMS);
      const scores = new Map<string, number>();
      for (const word of words) {
        await pausing();
        for (const hit of cold.search(word))
          scores.set(String(hit.id), (scores.get(String(hit.id)) ?? 0) + hit.score);
      }
      return [...scores]
        .map(([id, score]) => ({ id, score }))
        .sort((a, b) => b.score - a.score)
        .slice(0, limit);
    },
  };
}

/**
 * A search index as the recall index stores it: JSON with its id and term lists as text and its
 * arrays as base64 of their little-endian 32-bit integers (a large index parses in one step and
 * loads as a handful of typed arrays).
 */
const StoredSearch = z.object({
  version: z.literal(1),
  ids: z.string(),
  terms: z.string(),
  lengths: z.string(),
  offsets: z.string(),
  postings: z.string(),
});

export function encodeSearch(index: SearchIndex): string {
  const { ids, terms, lengths, offsets, postings } = index.toParts();
  const base64 = (array: Int32Array) =>
    Buffer.from(littleEndian(array).buffer, array.byteOffset, array.byteLength).toString("base64");
  return JSON.stringify({
    version: 1,
    ids,
    terms,
    lengths: base64(lengths),
    offsets: base64(offsets),
    postings: base64(postings),
  });
}

/** The search index a recall index stores; throws when it is damaged. */
export function decodeSearch(text: string): SearchIndex {
  const stored = StoredSearch.parse(JSON.parse(text));
  const ints = (encoded: string) => {
    const bytes = Buffer.from(encoded, "base64");
    if (bytes.length % 4 !== 0) throw new RangeError("a search array is not whole 32-bit integers");
    const array = new Int32Array(bytes.length / 4);
    new Uint8Array(array.buffer).set(bytes);
    return littleEndian(array);
  };
  return SearchIndex.fromParts({
    ids: stored.ids,
    terms: stored.terms,
    lengths: ints(stored.lengths),
    offsets: ints(stored.offsets),
    postings: ints(stored.postings),
  });
}

const BIG_ENDIAN = new Uint8Array(Int32Array.of(1).buffer)[0] === 0;
/** The array in little-endian byte order (itself on little-endian machines, every one memgate runs on). */
function littleEndian(array: Int32Array): Int32Array {
  if (!BIG_ENDIAN) return array;
  const swapped = new Int32Array(array.length);
  const view = new DataView(swapped.buffer);
  for (const [i, value] of array.entries()) view.setInt32(i * 4, value, true);
  return swapped;
}

/** How version 1 indexes were built (MiniSearch over the cold events' text and keys). */
const V1_SEARCH_OPTIONS = {
  idField: "eventId",
  fields: ["text", "keys"],
  // A fifth of a word's letters may differ, at most two: a long word's fuzzy walk over the terms
  // grows with its edit distance (a 256-character query of long words took tens of milliseconds).
  searchOptions: { prefix: true, fuzzy: 0.2, maxFuzzy: 2 },
};
