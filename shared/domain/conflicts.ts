import { sha256 } from "./hashing.ts";
import type { Polarity, ValueData } from "./schemas.ts";
import { canonicalValue } from "./values.ts";

/**
 * What an unresolved conflict is (CONTRACT §2), in one place for the selector, the append planner
 * and the gate. Selector v2: the assertions of two different events on one (key, scope)
 * contradict when they hold the same canonical value with opposite polarity, or are both affirmed
 * with different canonical values, or (scopes values) an affirmed set and a negated set share a
 * scope. Two negated positions never contradict, nor "A" and "not B", nor one event with itself.
 * Selector v1 called any two distinct (value, polarity) on a (key, scope) a conflict.
 */

/** One (polarity, canonical value) on a (key, scope), and the events holding it. */
export interface Position {
  polarity: Polarity;
  valueKey: string;
  value: ValueData;
  /**
   * Events holding the position. Contradiction only asks whether holders differ, so callers that
   * cannot afford every holder (the append planner) may pass any two of them.
   */
  holders: readonly string[];
}

/**
 * The one encoding of a (key, scope) pair: the selector's and gate's maps, the append planner's
 * index entries and (hashed) the DynamoDB index keys all use it.
 */
export function keyScope(key: string, scope: string): string {
  return JSON.stringify([key, scope]);
}

/** The one encoding of a position on its (key, scope): polarity and canonical value. */
export function positionKey(polarity: Polarity, valueKey: string): string {
  return `${polarity}\u0000${valueKey}`;
}

/** A position as stored in the conflict index: a short hash of its `positionKey`. */
export function positionId(polarity: Polarity, value: ValueData): string {
  return sha256(positionKey(polarity, canonicalValue(value))).slice(7, 39);
}

/** The positions of one (key, scope) as a list of holders per position. */
export class PositionSet {
  private readonly byKey = new Map<string, Position & { holders: string[] }>();

  add(polarity: Polarity, value: ValueData, eventId: string, valueKey = canonicalValue(value)): void {
    const id = positionKey(polarity, valueKey);
    const position = this.byKey.get(id);
    if (!position) this.byKey.set(id, { polarity, valueKey, value, holders: [eventId] });
    else if (!position.holders.includes(eventId)) position.holders.push(eventId);
  }

  copy(): PositionSet {
    const copy = new PositionSet();
    for (const [id, position] of this.byKey)
      copy.byKey.set(id, { ...position, holders: [...position.holders] });
    return copy;
  }

  get size(): number {
    return this.byKey.size;
  }

  positions(): Position[] {
    return [...this.byKey.values()];
  }
}

export interface Contradictions {
  /** Keys (`positionKey`) of the positions that contradict a position held by another event. */
  positions: Set<string>;
  /** Events holding such a position against another event. */
  members: Set<string>;
}

/** Whether some holder of one list differs from some holder of the other. */
function differentHolders(a: readonly string[], b: readonly string[]): boolean {
  if (a.length === 0 || b.length === 0) return false;
  if (a.length > 1 || b.length > 1) return true;
  return a[0] !== b[0];
}

/** The holders in `of` that some holder in `against` differs from. */
function holdersAgainst(of: readonly string[], against: ReadonlySet<string> | readonly string[]): string[] {
  const others = [...against];
  return of.filter((holder) => others.some((other) => other !== holder));
}

/**
 * The contradictions among one (key, scope)'s positions under selector v2. Linear in positions and
 * holders: affirmed values are compared as a group (two different affirmed values held by two
 * different events make every affirmed holder a member), opposite polarities per value, and scope
 * sets per scope.
 */
export function contradictionsV2(positions: readonly Position[]): Contradictions {
  const found: Contradictions = { positions: new Set(), members: new Set() };
  const mark = (position: Position, holders: readonly string[]) => {
    if (holders.length === 0) return;
    found.positions.add(positionKey(position.polarity, position.valueKey));
    for (const holder of holders) found.members.add(holder);
  };

  const affirmed = positions.filter((position) => position.polarity === "affirmed");
  if (affirmed.length >= 2) {
    const holders = new Set(affirmed.flatMap((position) => position.holders));
    if (holders.size >= 2) for (const position of affirmed) mark(position, position.holders);
  }

  const byValue = new Map<string, { affirmed?: Position; negated?: Position }>();
  for (const position of positions) {
    const pair = byValue.get(position.valueKey) ?? {};
    pair[position.polarity] = position;
    byValue.set(position.valueKey, pair);
  }
  for (const { affirmed: yes, negated: no } of byValue.values()) {
    if (!yes || !no || !differentHolders(yes.holders, no.holders)) continue;
    mark(yes, holdersAgainst(yes.holders, no.holders));
    mark(no, holdersAgainst(no.holders, yes.holders));
  }

  // Scope sets: an affirmed set and a negated set that share a scope, held by different events.
  const byScope = new Map<string, { affirmed: Position[]; negated: Position[] }>();
  for (const position of positions) {
    if (!("scopes" in position.value)) continue;
    for (const scope of new Set(position.value.scopes)) {
      const sides = byScope.get(scope) ?? { affirmed: [], negated: [] };
      sides[position.polarity].push(position);
      byScope.set(scope, sides);
    }
  }
  for (const sides of byScope.values()) {
    if (sides.affirmed.length === 0 || sides.negated.length === 0) continue;
    const affirmedHolders = new Set(sides.affirmed.flatMap((position) => position.holders));
    const negatedHolders = new Set(sides.negated.flatMap((position) => position.holders));
    for (const position of sides.affirmed) mark(position, holdersAgainst(position.holders, negatedHolders));
    for (const position of sides.negated) mark(position, holdersAgainst(position.holders, affirmedHolders));
  }
  return found;
}

/** Selector v1: more than one distinct position on a (key, scope) makes every holder a member. */
export function contradictionsV1(positions: readonly Position[]): Contradictions {
  if (positions.length < 2) return { positions: new Set(), members: new Set() };
  return {
    positions: new Set(positions.map((position) => positionKey(position.polarity, position.valueKey))),
    members: new Set(positions.flatMap((position) => position.holders)),
  };
}
