import cl100k from "js-tiktoken/ranks/cl100k_base";

/**
 * The budget's tokenizer (CONTRACT §4a: cl100k_base). The rank table is imported statically, so
 * a bundle (a Lambda's) carries it and needs no file beside it; importing it costs ~10 ms (it is
 * one string), while building the rank map from it is the expensive part, done on the first count.
 *
 * The count is js-tiktoken's, computed with a faster merge: its byte-pair merge rescans every pair
 * after each merge (quadratic in a piece's length: a 16 KiB run of one letter took minutes), so
 * one event could stall every budgeted recall. Here each piece of the pattern's split is merged
 * with a heap of adjacent pairs (lowest rank first, leftmost among equals: the same merges in the
 * same order, so the same tokens), O(n log n). Special-token text (`<|endoftext|>`) is counted as
 * ordinary text, never refused: memory may quote anything.
 */
let table: { ranks: ReadonlyMap<string, number>; wholes: ReadonlySet<string>; pieces: RegExp } | undefined;

function loadTable() {
  table ??= { ...rankTables(cl100k.bpe_ranks), pieces: new RegExp(cl100k.pat_str, "gu") };
  return table;
}

/**
 * The rank table as js-tiktoken reads it (lines of `! OFFSET TOKEN…`, each token base64, ranked
 * from OFFSET on), built in one pass: `ranks` by byte values joined by commas (js-tiktoken's
 * rankMap), and `wholes`, the tokens that are whole UTF-8 text, as that text: a piece of the split
 * found there is one token without encoding it (most pieces are).
 */
function rankTables(bpeRanks: string): { ranks: Map<string, number>; wholes: Set<string> } {
  const ranks = new Map<string, number>();
  const wholes = new Set<string>();
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  for (const line of bpeRanks.split("\n")) {
    const [, offset, ...tokens] = line.split(" ");
    if (offset === undefined) continue;
    let rank = Number.parseInt(offset, 10);
    for (const token of tokens) {
      const binary = atob(token);
      const bytes = new Uint8Array(binary.length);
      let ascii = true;
      for (let i = 0; i < binary.length; i++) {
        const byte = binary.charCodeAt(i);
        bytes[i] = byte;
        if (byte > 127) ascii = false;
      }
      ranks.set(bytes.join(","), rank++);
      if (ascii) wholes.add(binary);
      else
        try {
          wholes.add(decoder.decode(bytes));
        } catch {
          // Part of a character: only its bytes name it.
        }
    }
  }
  return { ranks, wholes };
}

const utf8 = new TextEncoder();

/**
 * Builds the rank map now rather than in the first count: a server calls it before it listens, so
 * the first budgeted recall does not hold every request behind the rank table (about a second).
 */
export function prepareTokenizer(): void {
  loadTable();
}

/**
 * Tokens of a text; a short text's count is remembered (a bounded memo by the text itself): the
 * events a recall spends its budget on are counted once, not on every recall that serves them.
 */
export function countTokens(text: string): number {
  const known = counted.get(text);
  if (known !== undefined) return known;
  const count = countPieces(text);
  if (text.length <= MEMO_TEXT_LIMIT) {
    if (memoChars + text.length > MEMO_CHARS) {
      counted.clear();
      memoChars = 0;
    }
    counted.set(text, count);
    memoChars += text.length;
  }
  return count;
}

/**
 * Texts counted lately, bounded by the characters they hold (emptied when full): an event's JSON
 * is well under the length kept, a whole summary is not (an artifact's parts are counted once
 * where it is cached).
 */
const counted = new Map<string, number>();
let memoChars = 0;
const MEMO_CHARS = 8 * 1024 * 1024;
const MEMO_TEXT_LIMIT = 4096;

/** The count itself: each piece of the pattern's split, merged. */
function countPieces(text: string): number {
  const { ranks, wholes, pieces } = loadTable();
  let count = 0;
  for (const match of text.matchAll(pieces)) {
    if (wholes.has(match[0])) {
      count++;
      continue;
    }
    const piece = utf8.encode(match[0]);
    count += ranks.has(piece.join(",")) ? 1 : mergedParts(piece, ranks);
  }
  return count;
}

/** The number of tokens byte-pair merging leaves of one piece (every single byte has a rank). */
export function mergedParts(bytes: Uint8Array, ranks: ReadonlyMap<string, number>): number {
  const n = bytes.length;
  if (n <= 1) return n;
  // Parts are identified by their start; `end`, `next` and `prev` link the live ones.
  const end = new Int32Array(n);
  const next = new Int32Array(n);
  const prev = new Int32Array(n);
  const alive = new Uint8Array(n).fill(1);
  for (let i = 0; i < n; i++) {
    end[i] = i + 1;
    next[i] = i + 1;
    prev[i] = i - 1;
  }
  const heap = new PairHeap();
  const offer = (start: number) => {
    const right = next[start] as number;
    if (start < 0 || right >= n) return;
    const stop = end[right] as number;
    const rank = ranks.get(bytes.subarray(start, stop).join(","));
    if (rank !== undefined) heap.push(rank, start, right, stop);
  };
  for (let i = 0; i < n - 1; i++) offer(i);
  let parts = n;
  for (let pair = heap.pop(); pair !== undefined; pair = heap.pop()) {
    const [, start, right, stop] = pair;
    // A stale pair: one of its parts has merged since it was offered.
    if (!alive[start] || end[start] !== right || !alive[right] || end[right] !== stop) continue;
    end[start] = stop;
    alive[right] = 0;
    const after = next[right] as number;
    next[start] = after;
    if (after < n) prev[after] = start;
    parts--;
    offer(prev[start] as number);
    offer(start);
  }
  return parts;
}

/** A binary min-heap of adjacent pairs ordered by rank, then by start (leftmost first). */
class PairHeap {
  private readonly items: Array<[number, number, number, number]> = [];

  push(rank: number, start: number, right: number, stop: number): void {
    const items = this.items;
    items.push([rank, start, right, stop]);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  pop(): [number, number, number, number] | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (top === undefined || last === undefined || items.length === 0) return top;
    items[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let least = i;
      if (left < items.length && this.before(left, least)) least = left;
      if (right < items.length && this.before(right, least)) least = right;
      if (least === i) return top;
      this.swap(i, least);
      i = least;
    }
  }

  private before(a: number, b: number): boolean {
    const x = this.items[a] as [number, number, number, number];
    const y = this.items[b] as [number, number, number, number];
    return x[0] < y[0] || (x[0] === y[0] && x[1] < y[1]);
  }

  private swap(a: number, b: number): void {
    const items = this.items;
    [items[a], items[b]] = [
      items[b] as [number, number, number, number],
      items[a] as [number, number, number, number],
    ];
  }
}
