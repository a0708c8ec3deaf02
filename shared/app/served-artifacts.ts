import { z } from "zod";
import { citedIds } from "#domain/cold-layer.ts";
import { deepFreeze } from "#domain/frozen.ts";
import {
  Claim,
  ConflictRef,
  type ConsolidationOutput,
  ConsolidationOutput as ConsolidationOutputSchema,
  loneSurrogatePath,
  MAX_NESTING_DEPTH,
  nestsDeeperThan,
  PendingItem,
} from "#domain/schemas.ts";
import type { ArtifactFiles } from "#ports/artifacts.ts";
import { NotFoundError } from "#ports/errors.ts";
import { mapWithPauses, neverPause, type Pause } from "#ports/time.ts";
import { loadRecallSearch, type RecallDays, RecallIndex, type RecallSearch } from "./recall-index.ts";
import { type RecallSection, type RecallSectionItems, showDays } from "./recall-text.ts";

/**
 * Artifacts as recall serves them, read and parsed once per store: an artifact's body and recall
 * index are written once and never change, so an entry cached by artifact id never goes out of
 * date and needs no invalidation (whether an artifact is served is decided per request, from its
 * record and the alias, never from here). The token count of each part is computed once per
 * artifact and rendering (JSON, text), on its first recall in it, and the cold layer's search
 * loaded once, on its first query. A failed read is not kept: the next recall reads again. Bodies are frozen (every recall
 * serving one shares it). Bounded by the size of the JSON held; the least recently served go first.
 */
export class ServedArtifacts {
  /**
   * At most this much JSON text (UTF-16 code units) held per store: a 100,000-event subject's
   * recall index is about 40 million (each turn's words, day and three neighbours' words), and
   * its body and index must fit together, or each recall reads them again in turn
   * (bench/query-recall.ts: p50 4 ms held, 320 ms when they evicted each other at 32 Mi).
   */
  static readonly LIMIT = 128 * 1024 * 1024;

  private static readonly byStore = new WeakMap<ArtifactFiles, ServedArtifacts>();

  /** The cache of one store object (the same for every use case handed that store). */
  static of(store: ArtifactFiles): ServedArtifacts {
    let served = ServedArtifacts.byStore.get(store);
    if (!served) {
      served = new ServedArtifacts(store);
      ServedArtifacts.byStore.set(store, served);
    }
    return served;
  }

  private readonly entries = new Map<string, { value: Promise<unknown>; size: number }>();
  private held = 0;

  private constructor(private readonly store: ArtifactFiles) {}

  /**
   * The artifact's body, parsed with the candidate schema a part at a time, pausing between parts
   * (a damaged body throws the schema's error, every time).
   */
  body(subject: string, artifactId: string, pause: Pause = neverPause): Promise<ServedBody> {
    return this.cached(`body\u0000${subject}\u0000${artifactId}`, async () => {
      const { body, size } = await parsedBody(
        await this.store.readArtifact(subject, artifactId, pause),
        pause,
      );
      return { value: new ServedBody(body), size };
    });
  }

  /** The artifact's recall index; null when it was written without one (older artifacts). */
  index(subject: string, artifactId: string): Promise<ServedIndex | null> {
    return this.cached(`index\u0000${subject}\u0000${artifactId}`, async () => {
      try {
        const index = RecallIndex.parse(await this.store.readRecallIndex(subject, artifactId));
        return {
          value: new ServedIndex(index),
          size: index.version === 1 ? index.cold.length : index.search.length,
        };
      } catch (error) {
        if (error instanceof NotFoundError || error instanceof z.ZodError) return { value: null, size: 0 };
        throw error;
      }
    });
  }

  private cached<T>(key: string, read: () => Promise<{ value: T; size: number }>): Promise<T> {
    const known = this.entries.get(key);
    if (known) {
      // Most recently served last: eviction takes from the front.
      this.entries.delete(key);
      this.entries.set(key, known);
      return known.value as Promise<T>;
    }
    const entry: { value: Promise<T>; size: number } = {
      value: read().then(({ value, size }) => this.settle(key, entry, value, size)),
      size: 0,
    };
    this.entries.set(key, entry);
    entry.value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return entry.value;
  }

  private settle<T>(key: string, entry: { size: number }, value: T, size: number): T {
    if (this.entries.get(key) !== entry) return value;
    entry.size = size;
    this.held += size;
    for (const [oldest, held] of this.entries) {
      if (this.held <= ServedArtifacts.LIMIT || oldest === key) break;
      this.entries.delete(oldest);
      this.held -= held.size;
    }
    return value;
  }
}

/** What an item of a recall answer costs in one rendering (JSON, text version 2 or 1). */
export interface PartMeasure {
  readonly rendering: "json" | "text" | "text-v1";
  item<S extends RecallSection>(section: S, item: RecallSectionItems[S]): number;
}

/** A parsed body with the token count of each part, counted once per rendering. */
export class ServedBody {
  private readonly counted = new Map<PartMeasure["rendering"], Promise<PartTokens>>();

  private daysShown = false;
  private readonly plans = new WeakMap<PartTokens, Map<string, ClaimPlan>>();

  private citedInputs: ReadonlySet<string> | undefined;

  constructor(readonly body: ConsolidationOutput) {}

  /** The inputs its claims and pending items derive from (the others are its cold layer). */
  get cited(): ReadonlySet<string> {
    this.citedInputs ??= citedIds(this.body);
    return this.citedInputs;
  }

  /**
   * The claims (and conflicts) a recall of `scope` serves from, computed once per scope and
   * rendering: recall with a budget then walks only as far as the budget reaches, never the whole
   * summary.
   */
  claimPlan(scope: string | undefined, mustPreserve: ReadonlySet<number>, tokens: PartTokens): ClaimPlan {
    let byScope = this.plans.get(tokens);
    if (!byScope) {
      byScope = new Map();
      this.plans.set(tokens, byScope);
    }
    const key = scope ?? "";
    let plan = byScope.get(key);
    if (!plan) {
      const served = (of: string) => scope === undefined || of === scope || of === "global";
      const all: number[] = [];
      this.body.claims.forEach((claim, index) => {
        if (served(claim.scope)) all.push(index);
      });
      const conflicts: number[] = [];
      this.body.unresolvedConflicts.forEach((conflict, index) => {
        if (served(conflict.scope)) conflicts.push(index);
      });
      const costs = tokens.claims;
      plan = {
        scope,
        all: new ClaimRun(all, costs),
        mustPreserve: new ClaimRun(
          all.filter((index) => mustPreserve.has(index)),
          costs,
        ),
        conflicts,
        smallestClaim: all.reduce(
          (least, index) => Math.min(least, costs[index] ?? 0),
          Number.POSITIVE_INFINITY,
        ),
      };
      byScope.set(key, plan);
    }
    return plan;
  }

  /** Remembers the days its index gives its claims and pending items (once), for the text to show. */
  showDays(index: ServedIndex): void {
    if (this.daysShown || index.days === undefined) return;
    showDays(this.body, index.days);
    this.daysShown = true;
  }

  /**
   * Tokens of each claim, pending item and conflict and of the summary, as `measure` counts them;
   * counted once (recalls arriving meanwhile wait for the same count), pausing between parts.
   */
  tokens(measure: PartMeasure, pause: Pause): Promise<PartTokens> {
    let tokens = this.counted.get(measure.rendering);
    if (!tokens) {
      tokens = this.count(measure, pause);
      this.counted.set(measure.rendering, tokens);
    }
    return tokens;
  }

  private async count(measure: PartMeasure, pause: Pause): Promise<PartTokens> {
    const each = <S extends RecallSection>(section: S, items: readonly RecallSectionItems[S][]) =>
      mapWithPauses(items, pause, (item) => measure.item(section, item));
    return {
      claims: await each("claims", this.body.claims),
      pending: await each("tasks", this.body.pending),
      unresolvedConflicts: await each("conflicts", this.body.unresolvedConflicts),
      summary: measure.item("summary", this.body.summary),
    };
  }
}

/** The claims one scope's recall serves from: all of them and the must-preserve ones, in order. */
export interface ClaimPlan {
  scope: string | undefined;
  all: ClaimRun;
  mustPreserve: ClaimRun;
  /** The unresolved conflicts in scope, by index. */
  conflicts: readonly number[];
  /** The fewest tokens a claim of the scope costs (infinite when it has none). */
  smallestClaim: number;
}

/**
 * Claims in order with what each costs, and the least cost of each block of them: `next` finds the
 * next claim that could fit a room without looking at the blocks where none could.
 */
export class ClaimRun {
  static readonly BLOCK = 128;
  readonly members: ReadonlySet<number>;
  private readonly blockLeast: Float64Array;

  constructor(
    readonly indices: readonly number[],
    private readonly costs: readonly number[],
  ) {
    this.members = new Set(indices);
    this.blockLeast = new Float64Array(Math.ceil(indices.length / ClaimRun.BLOCK)).fill(
      Number.POSITIVE_INFINITY,
    );
    indices.forEach((index, at) => {
      const block = Math.floor(at / ClaimRun.BLOCK);
      this.blockLeast[block] = Math.min(this.blockLeast[block] as number, costs[index] ?? 0);
    });
  }

  /** The first position from `from` whose claim costs at most `room` (the length when none). */
  next(from: number, room: number): number {
    let at = from;
    while (at < this.indices.length) {
      const block = Math.floor(at / ClaimRun.BLOCK);
      if ((this.blockLeast[block] as number) > room) {
        at = (block + 1) * ClaimRun.BLOCK;
        continue;
      }
      if ((this.costs[this.indices[at] as number] ?? 0) <= room) return at;
      at++;
    }
    return this.indices.length;
  }
}

export interface PartTokens {
  claims: readonly number[];
  pending: readonly number[];
  unresolvedConflicts: readonly number[];
  summary: number;
}

/** A parsed recall index: the must-preserve claims, and its search, loaded once. */
export class ServedIndex {
  readonly mustPreserveClaims: ReadonlySet<number>;
  /** The inputs that stay cold; undefined for indexes built before they were counted. */
  readonly coldInputs: number | undefined;
  /** The days shown beside claims and pending items (version 2 and 3 indexes). */
  readonly days: RecallDays | undefined;
  private loaded: Promise<RecallSearch> | undefined;

  constructor(private readonly index: RecallIndex) {
    this.mustPreserveClaims = new Set(index.mustPreserveClaims);
    this.coldInputs = index.coldInputs;
    this.days = index.version === 1 ? undefined : index.days;
  }

  /** The index's search, loaded once (a step at a time; recalls arriving meanwhile wait for it). */
  search(pause: Pause): Promise<RecallSearch> {
    this.loaded ??= loadRecallSearch(this.index, pause);
    return this.loaded;
  }
}

/**
 * A stored body parsed as `ConsolidationOutput` parses it, each claim, pending item and conflict on
 * its own with a pause before it (its depth and surrogates checked there too), frozen throughout:
 * the same value, without holding the thread for the whole of a large summary, and its size as
 * JSON text (UTF-16 code units). Anything this reading does not accept is parsed whole, so a
 * damaged body throws exactly the schema's error.
 */
export async function parsedBody(
  raw: unknown,
  pause: Pause,
): Promise<{ body: ConsolidationOutput; size: number }> {
  const whole = () => {
    const body = deepFreeze(ConsolidationOutputSchema.parse(raw));
    return { body, size: JSON.stringify(body).length };
  };
  if (typeof raw !== "object" || raw === null) return whole();
  const { claims, pending, unresolvedConflicts, ...rest } = raw as Record<string, unknown>;
  if (!Array.isArray(claims) || !Array.isArray(pending) || !Array.isArray(unresolvedConflicts))
    return whole();
  if (nestsDeeperThan(rest, MAX_NESTING_DEPTH)) return whole();
  const envelope = ConsolidationOutputSchema.safeParse({
    ...rest,
    claims: [],
    pending: [],
    unresolvedConflicts: [],
  });
  if (!envelope.success || loneSurrogatePath(envelope.data) !== null) return whole();
  let size = JSON.stringify(envelope.data).length;
  // Each part as the whole parse would read it: within the depth bound (the envelope holds it one
  // level down), no lone surrogate, then its schema.
  const part =
    <T>(schema: { parse(input: unknown): T }) =>
    (item: unknown) => {
      if (nestsDeeperThan(item, MAX_NESTING_DEPTH - 2)) throw new RangeError("too deep");
      const parsed = schema.parse(item);
      if (loneSurrogatePath(parsed) !== null) throw new RangeError("lone surrogate");
      size += JSON.stringify(parsed).length + 1; // and the comma after it

      return deepFreeze(parsed);
    };
  try {
    const body = {
      ...envelope.data,
      claims: await mapWithPauses(claims, pause, part(Claim)),
      pending: await mapWithPauses(pending, pause, part(PendingItem)),
      unresolvedConflicts: await mapWithPauses(unresolvedConflicts, pause, part(ConflictRef)),
    };
    // No comma after each array's last part.
    for (const parts of [body.claims, body.pending, body.unresolvedConflicts]) if (parts.length > 0) size--;
    return { body: deepFreeze(body), size };
  } catch {
    return whole();
  }
}
