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
 * The index as a few flat parts, which a store keeps as they are (the recall index encodes the
 * arrays in base64): loading it builds no object per term or per posting, so a large index costs a
 * serving process almost nothing to hold or to collect. `ids` and `terms` are joined by line
 * breaks (neither ever holds one), terms in ascending code-unit order; `lengths` holds each
 * field's document lengths in terms, field after field; `offsets` (terms × fields + 1 entries)
 * where each term's postings in each field start in `postings`, which holds [document, frequency]
 * pairs, documents ascending.
 */
export interface SearchIndexParts {
  ids: string;
  terms: string;
  lengths: Int32Array;
  offsets: Int32Array;
  postings: Int32Array;
}

/** A ranked hit: the document's id and its score. */
export interface SearchHit {
  id: string;
  score: number;
}

export class SearchIndex {
  private readonly count: number;
  /** Where each document's id and each term start in `ids` and `terms` (one more than there are). */
  private readonly idStarts: Int32Array;
  private readonly termStarts: Int32Array;
  /**
   * Per field, each document's length term of BM25's denominator, k1 · (1 − b + b · length / average),
   * computed once (a search then reads one number per posting).
   */
  private norms: Float64Array[] | undefined;
  /** Scratch arrays of finished searches, reused (a search on a large index allocates none). */
  private readonly scratch: Scratch[] = [];

  private constructor(private readonly parts: SearchIndexParts) {
    this.idStarts = lineStarts(parts.ids);
    this.termStarts = lineStarts(parts.terms);
    this.count = parts.ids === "" ? 0 : this.idStarts.length - 1;
  }

  /** Indexes the documents in the order given (the order equal scores keep). */
  static build(documents: readonly SearchDocument[]): SearchIndex {
    const lengths = new Int32Array(FIELDS.length * documents.length);
    const byTerm = new Map<string, number[][]>();
    documents.forEach((document, index) => {
      FIELDS.forEach((field, fieldIndex) => {
        const text = document.fields[field];
        if (text === undefined || text === "") return;
        const terms = searchTerms(text);
        lengths[fieldIndex * documents.length + index] = terms.length;
        const counts = new Map<string, number>();
        for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
        for (const [term, count] of counts) {
          let byField = byTerm.get(term);
          if (byField === undefined) {
            byField = FIELDS.map(() => []);
            byTerm.set(term, byField);
          }
          (byField[fieldIndex] as number[]).push(index, count);
        }
      });
    });
    const terms = [...byTerm.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const offsets = new Int32Array(terms.length * FIELDS.length + 1);
    let total = 0;
    terms.forEach((term, t) => {
      (byTerm.get(term) ?? []).forEach((postings, field) => {
        offsets[t * FIELDS.length + field] = total;
        total += postings.length;
      });
    });
    offsets[terms.length * FIELDS.length] = total;
    const postings = new Int32Array(total);
    let at = 0;
    for (const term of terms)
      for (const fieldPostings of byTerm.get(term) ?? []) {
        postings.set(fieldPostings, at);
        at += fieldPostings.length;
      }
    return new SearchIndex({
      ids: documents.map((document) => document.id).join("\n"),
      terms: terms.join("\n"),
      lengths,
      offsets,
      postings,
    });
  }

  /** An index from its parts (as `toParts` gave them); throws when they do not fit together. */
  static fromParts(parts: SearchIndexParts): SearchIndex {
    const index = new SearchIndex(parts);
    const terms = parts.terms === "" ? 0 : index.termStarts.length - 1;
    if (
      parts.lengths.length !== FIELDS.length * index.count ||
      parts.offsets.length !== terms * FIELDS.length + 1 ||
      parts.offsets[parts.offsets.length - 1] !== parts.postings.length
    )
      throw new RangeError("the search index's parts do not fit together");
    return index;
  }

  toParts(): SearchIndexParts {
    return this.parts;
  }

  get size(): number {
    return this.count;
  }

  /**
   * The query's distinct terms as searched: those the index holds, but those the text of more than
   * half its documents holds (this index's own stopwords: their weight is near nothing, their
   * postings are the longest; a name in half the documents' source still counts) unless no other
   * is left (then the rarest of them alone); at most MAX_SEARCH_TERMS, the
   * rarest kept (fewest documents: the most informative), ties in the query's order. A longer
   * question is cut, never refused.
   */
  queryTerms(query: string): string[] {
    return this.searchable(query).map((known) => known.term);
  }

  private searchable(query: string): Array<{ term: string; position: number }> {
    const seen = new Set<string>();
    const known: Array<{ term: string; position: number; documents: number; inText: number; order: number }> =
      [];
    for (const term of searchTerms(query)) {
      if (seen.has(term)) continue;
      seen.add(term);
      const position = this.termPosition(term);
      if (position < 0) continue;
      let documents = 0;
      for (let field = 0; field < FIELDS.length; field++)
        documents = Math.max(documents, this.postingsLength(position, field) / 2);
      const inText = this.postingsLength(position, FIELDS.indexOf("text")) / 2;
      known.push({ term, position, documents, inText, order: known.length });
    }
    const telling = known.filter((k) => k.inText <= this.count / 2);
    if (telling.length === 0 && known.length > 0)
      return [known.reduce((rarest, k) => (k.documents < rarest.documents ? k : rarest))];
    if (telling.length <= MAX_SEARCH_TERMS) return telling;
    return telling
      .sort((a, b) => a.documents - b.documents || a.order - b.order)
      .slice(0, MAX_SEARCH_TERMS)
      .sort((a, b) => a.order - b.order);
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
    const terms = this.searchable(query);
    if (terms.length === 0 || this.count === 0 || limit <= 0) return [];
    const norms = this.lengthNorms();
    // Per document its score, how many of the query's terms it holds, and the last term that
    // counted it, and the documents touched; every entry touched is zeroed again before reuse.
    const scratch = this.scratch.pop() ?? {
      scores: new Float64Array(this.count),
      matched: new Uint8Array(this.count),
      lastTerm: new Uint8Array(this.count),
      touched: new Int32Array(this.count),
      size: 0,
    };
    try {
      for (const [t, { position }] of terms.entries()) {
        for (let field = 0; field < FIELDS.length; field++) {
          const start = this.parts.offsets[position * FIELDS.length + field] as number;
          const length = this.postingsLength(position, field);
          if (length === 0) continue;
          const documents = length / 2;
          const weight =
            SEARCH_FIELDS[FIELDS[field] as SearchField] *
            Math.log(1 + (this.count - documents + 0.5) / (documents + 0.5));
          accumulate(
            this.parts.postings,
            start,
            start + length,
            weight,
            norms[field] as Float64Array,
            scratch,
            t + 1,
          );
        }
        yield;
      }
      return topDocuments(scratch, limit).map(({ document, score }) => ({ id: this.idOf(document), score }));
    } finally {
      clear(scratch);
      this.scratch.push(scratch);
    }
  }

  private lengthNorms(): Float64Array[] {
    this.norms ??= FIELDS.map((_, field) => {
      const lengths = this.parts.lengths.subarray(field * this.count, (field + 1) * this.count);
      let total = 0;
      for (const length of lengths) total += length;
      const average = this.count === 0 ? 1 : total / this.count || 1;
      const norms = new Float64Array(this.count);
      for (let document = 0; document < this.count; document++)
        norms[document] = K1 * (1 - B + (B * (lengths[document] as number)) / average);
      return norms;
    });
    return this.norms;
  }

  private postingsLength(position: number, field: number): number {
    const at = position * FIELDS.length + field;
    return (this.parts.offsets[at + 1] as number) - (this.parts.offsets[at] as number);
  }

  private idOf(document: number): string {
    return this.parts.ids.slice(this.idStarts[document], (this.idStarts[document + 1] as number) - 1);
  }

  /** The term's place in the sorted terms (binary search), -1 when the index does not hold it. */
  private termPosition(term: string): number {
    let low = 0;
    let high = this.termStarts.length - 2;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const found = this.parts.terms.slice(
        this.termStarts[middle],
        (this.termStarts[middle + 1] as number) - 1,
      );
      if (found === term) return middle;
      if (found < term) low = middle + 1;
      else high = middle - 1;
    }
    return -1;
  }
}

/** Where each line of a text joined by line breaks starts, and one past its end. */
function lineStarts(text: string): Int32Array {
  if (text === "") return Int32Array.of(0);
  const starts = [0];
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) starts.push(at + 1);
  starts.push(text.length + 1);
  return Int32Array.from(starts);
}

/**
 * One field's postings of one term added to the scores: BM25+ with the document's length norm, and
 * each document counted once per term (`mark`) among the terms it holds.
 */
function accumulate(
  postings: Int32Array,
  start: number,
  end: number,
  weight: number,
  norms: Float64Array,
  scratch: Scratch,
  mark: number,
): void {
  const { scores, matched, lastTerm, touched } = scratch;
  let size = scratch.size;
  for (let i = start; i < end; i += 2) {
    const document = postings[i] as number;
    const frequency = postings[i + 1] as number;
    if (matched[document] === 0) touched[size++] = document;
    scores[document] =
      (scores[document] as number) +
      weight * (DELTA + (frequency * (K1 + 1)) / (frequency + (norms[document] as number)));
    if (lastTerm[document] !== mark) {
      lastTerm[document] = mark;
      matched[document] = (matched[document] as number) + 1;
    }
  }
  scratch.size = size;
}

/** Zeroes what a search touched: entry by entry, or whole arrays when it touched many. */
function clear(scratch: Scratch): void {
  const { scores, matched, lastTerm, touched, size } = scratch;
  if (size > scores.length / 8) {
    scores.fill(0);
    matched.fill(0);
    lastTerm.fill(0);
  } else
    for (let i = 0; i < size; i++) {
      const document = touched[i] as number;
      scores[document] = 0;
      matched[document] = 0;
      lastTerm[document] = 0;
    }
  scratch.size = 0;
}

/** A search's working arrays, one entry per document, and the documents it touched (the first `size`). */
interface Scratch {
  scores: Float64Array;
  matched: Uint8Array;
  lastTerm: Uint8Array;
  touched: Int32Array;
  size: number;
}

interface Ranked {
  document: number;
  score: number;
}

/** Ranks below: a lower score, or the same score and a later document. */
const ranksBelow = (a: Ranked, b: Ranked) =>
  a.score < b.score || (a.score === b.score && a.document > b.document);

/**
 * The `limit` best documents a search touched, by score times the number of query terms each
 * holds, best first, equal scores by document number: a bounded min-heap (its root the lowest
 * ranked kept), so a common word matching most of a large index costs no full sort, and a document
 * that ranks below the root is passed over without allocating.
 */
function topDocuments({ scores, matched, touched, size }: Scratch, limit: number): Ranked[] {
  const heap: Ranked[] = [];
  const at = (i: number) => heap[i] as Ranked;
  const swap = (i: number, j: number) => {
    const kept = at(i);
    heap[i] = at(j);
    heap[j] = kept;
  };
  for (let k = 0; k < size; k++) {
    const document = touched[k] as number;
    const score = (scores[document] as number) * (matched[document] as number);
    if (heap.length < limit) {
      heap.push({ document, score });
      for (let i = heap.length - 1; i > 0 && ranksBelow(at(i), at((i - 1) >> 1)); i = (i - 1) >> 1)
        swap(i, (i - 1) >> 1);
      continue;
    }
    const root = at(0);
    if (score < root.score || (score === root.score && document > root.document)) continue;
    heap[0] = { document, score };
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
