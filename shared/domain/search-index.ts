import { z } from "zod";
import { searchTerms } from "./search-terms.ts";

/**
 * Recall's ranked search (CONTRACT §5 "Search"): an inverted index of documents (a summary's
 * claims and pending items, its cold events) read through `searchTerms`, scored for a query with
 * BM25+ per field (k1 1.2, b 0.7, δ 0.5: MiniSearch's defaults), each field's score weighted by
 * its boost, the sum multiplied by the number of distinct query terms the document holds, so a
 * document matching more of the question ranks first. Words are combined with OR: a question's
 * every word need not occur. Pure and deterministic: equal scores keep the documents' order, and
 * the same index and query give the same ranking, however the index was serialised and loaded.
 */

/** The fields a document may have, with the weight of each in a score. */
export const SEARCH_FIELDS = {
  /** What the document says: an event's text and text values, a claim's text and value. */
  text: 1,
  /** Assertion keys and scopes (a claim's key and scope), split into their words. */
  keys: 1,
  /** Who wrote an event (`source`): a question names the person it asks about. */
  source: 2,
  /** The events before and after it in the log: a reply's words are often in what it answers. */
  context: 0.6,
} as const;
export type SearchField = keyof typeof SEARCH_FIELDS;
const FIELDS = Object.keys(SEARCH_FIELDS) as SearchField[];

const K1 = 1.2;
const B = 0.7;
const DELTA = 0.5;

/** At most this many distinct terms of a query are searched: its most informative ones. */
export const MAX_SEARCH_TERMS = 16;

export interface SearchDocument {
  id: string;
  fields: Partial<Record<SearchField, string>>;
}

/**
 * The serialised index: document ids in order; per field, each document's length in terms; per
 * term, per field, its postings as [document, frequency] pairs flattened, documents ascending.
 */
export const SerializedSearchIndex = z.object({
  version: z.literal(1),
  ids: z.array(z.string()),
  lengths: z.array(z.array(z.number().int().nonnegative())),
  postings: z.record(z.string(), z.array(z.array(z.number().int().nonnegative()))),
});
export type SerializedSearchIndex = z.infer<typeof SerializedSearchIndex>;

/** A ranked hit: the document's id and its score. */
export interface SearchHit {
  id: string;
  score: number;
}

export class SearchIndex {
  private readonly averageLengths: number[];

  private constructor(private readonly data: SerializedSearchIndex) {
    this.averageLengths = FIELDS.map((_, field) => {
      const lengths = data.lengths[field] ?? [];
      const total = lengths.reduce((sum, length) => sum + length, 0);
      return data.ids.length === 0 ? 0 : total / data.ids.length;
    });
  }

  /** Indexes the documents in the order given (the order equal scores keep). */
  static build(documents: readonly SearchDocument[]): SearchIndex {
    const lengths = FIELDS.map(() => new Array<number>(documents.length).fill(0));
    const postings: Record<string, number[][]> = Object.create(null);
    documents.forEach((document, index) => {
      FIELDS.forEach((field, fieldIndex) => {
        const text = document.fields[field];
        if (text === undefined || text === "") return;
        const terms = searchTerms(text);
        (lengths[fieldIndex] as number[])[index] = terms.length;
        const counts = new Map<string, number>();
        for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
        for (const [term, count] of counts) {
          let byField = postings[term];
          if (byField === undefined) {
            byField = FIELDS.map(() => []);
            postings[term] = byField;
          }
          (byField[fieldIndex] as number[]).push(index, count);
        }
      });
    });
    return new SearchIndex({ version: 1, ids: documents.map((document) => document.id), lengths, postings });
  }

  /** An index from its serialised form (schema-checked by the caller's parse). */
  static load(data: SerializedSearchIndex): SearchIndex {
    return new SearchIndex(data);
  }

  toJSON(): SerializedSearchIndex {
    return this.data;
  }

  get size(): number {
    return this.data.ids.length;
  }

  /**
   * The query's distinct terms as searched: those the index holds, at most MAX_SEARCH_TERMS, the
   * rarest first kept (fewest documents: the most informative), ties in the query's order; a
   * longer question is cut, never refused.
   */
  queryTerms(query: string): string[] {
    const seen = new Set<string>();
    const known: Array<{ term: string; documents: number; order: number }> = [];
    for (const term of searchTerms(query)) {
      if (seen.has(term)) continue;
      seen.add(term);
      const byField = this.postingsOf(term);
      if (byField === undefined) continue;
      const documents = Math.max(...byField.map((postings) => postings.length / 2));
      known.push({ term, documents, order: known.length });
    }
    if (known.length <= MAX_SEARCH_TERMS) return known.map((k) => k.term);
    return known
      .sort((a, b) => a.documents - b.documents || a.order - b.order)
      .slice(0, MAX_SEARCH_TERMS)
      .sort((a, b) => a.order - b.order)
      .map((k) => k.term);
  }

  /** The best `limit` documents for `query`, best first (equal scores in document order). */
  search(query: string, limit: number): SearchHit[] {
    const steps = this.searchSteps(query, limit);
    for (;;) {
      const step = steps.next();
      if (step.done) return step.value;
    }
  }

  /**
   * `search` a query term at a time: the generator yields after each term's postings (a serving
   * thread pauses there) and returns the hits.
   */
  *searchSteps(query: string, limit: number): Generator<void, SearchHit[]> {
    const terms = this.queryTerms(query);
    const count = this.data.ids.length;
    if (terms.length === 0 || count === 0 || limit <= 0) return [];
    const scores = new Float64Array(count);
    const matched = new Uint8Array(count);
    const touched: number[] = [];
    for (const term of terms) {
      const byField = this.postingsOf(term) ?? [];
      const seenHere = new Set<number>();
      FIELDS.forEach((field, fieldIndex) => {
        const postings = byField[fieldIndex] ?? [];
        if (postings.length === 0) return;
        const documents = postings.length / 2;
        const idf = Math.log(1 + (count - documents + 0.5) / (documents + 0.5));
        const average = this.averageLengths[fieldIndex] || 1;
        const lengths = this.data.lengths[fieldIndex] ?? [];
        const boost = SEARCH_FIELDS[field];
        for (let i = 0; i < postings.length; i += 2) {
          const document = postings[i] as number;
          const frequency = postings[i + 1] as number;
          const length = lengths[document] ?? 0;
          const score =
            idf * (DELTA + (frequency * (K1 + 1)) / (frequency + K1 * (1 - B + (B * length) / average)));
          if (matched[document] === 0) touched.push(document);
          scores[document] = (scores[document] as number) + boost * score;
          if (!seenHere.has(document)) {
            seenHere.add(document);
            matched[document] = (matched[document] as number) + 1;
          }
        }
      });
      yield;
    }
    return topDocuments(
      touched,
      (document) => (scores[document] as number) * (matched[document] as number),
      limit,
    ).map(({ document, score }) => ({ id: this.data.ids[document] as string, score }));
  }

  private postingsOf(term: string): number[][] | undefined {
    return Object.hasOwn(this.data.postings, term) ? this.data.postings[term] : undefined;
  }
}

interface Ranked {
  document: number;
  score: number;
}

/** Ranks below: a lower score, or the same score and a later document. */
const ranksBelow = (a: Ranked, b: Ranked) =>
  a.score < b.score || (a.score === b.score && a.document > b.document);

/**
 * The `limit` best of `documents` by `scoreOf`, best first, equal scores by document number: a
 * bounded min-heap (its root the lowest ranked kept), so a common word matching most of a large
 * index costs no full sort.
 */
function topDocuments(
  documents: readonly number[],
  scoreOf: (document: number) => number,
  limit: number,
): Ranked[] {
  const heap: Ranked[] = [];
  const at = (i: number) => heap[i] as Ranked;
  const swap = (i: number, j: number) => {
    const kept = at(i);
    heap[i] = at(j);
    heap[j] = kept;
  };
  for (const document of documents) {
    const entry = { document, score: scoreOf(document) };
    if (heap.length < limit) {
      heap.push(entry);
      for (let i = heap.length - 1; i > 0 && ranksBelow(at(i), at((i - 1) >> 1)); i = (i - 1) >> 1)
        swap(i, (i - 1) >> 1);
      continue;
    }
    if (!ranksBelow(at(0), entry)) continue;
    heap[0] = entry;
    for (let i = 0; ; ) {
      const left = 2 * i + 1;
      let lowest = i;
      if (left < heap.length && ranksBelow(at(left), at(lowest))) lowest = left;
      if (left + 1 < heap.length && ranksBelow(at(left + 1), at(lowest))) lowest = left + 1;
      if (lowest === i) break;
      swap(i, lowest);
      i = lowest;
    }
  }
  return heap.sort((a, b) => (ranksBelow(a, b) ? 1 : ranksBelow(b, a) ? -1 : 0));
}
