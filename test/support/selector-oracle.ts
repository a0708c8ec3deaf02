import fc from "fast-check";
import type { MemoryEvent } from "#domain/schemas.ts";
import {
  DEFAULT_TRUST_POLICY,
  type SequencedEvent,
  TRUST_LEVELS,
  type TrustPolicy,
} from "#domain/schemas.ts";
import { canonicalValue } from "#domain/values.ts";
import { PlannedLog } from "./memory-append.ts";

/**
 * The selector's property tests (v2 and v3) check it against an independent reading of CONTRACT
 * §2: this module is that reading (validity and conflicts by the definitions) and the random steps
 * their logs are made of (assertions made, an event superseded, an event revoked).
 */

const rank = (trust: string) => TRUST_LEVELS.indexOf(trust as (typeof TRUST_LEVELS)[number]);

/** CONTRACT §2 read literally, by recursion over the definitions: a test's independent reading. */
export function oracleValidity(events: readonly SequencedEvent[], highWater: number, policy: TrustPolicy) {
  const byId = new Map(events.map((event) => [event.eventId, event]));
  const trusted = (e: SequencedEvent) => e.sequence <= highWater && rank(e.trust) >= rank(policy.minTrust);
  const revokedBy = (e: SequencedEvent) =>
    events.filter((r) => r.kind === "revocation" && r.revokes?.includes(e.eventId));
  const supersededBy = (e: SequencedEvent) => events.filter((s) => s.supersedes?.includes(e.eventId));
  const valid = (e: SequencedEvent): boolean => admissible(e) && !supersededBy(e).some((s) => admissible(s));
  const admissible = (e: SequencedEvent): boolean => trusted(e) && !revokedBy(e).some((r) => valid(r));
  return new Set([...byId.values()].filter((e) => e.kind !== "revocation" && valid(e)).map((e) => e.eventId));
}

/** Pairwise contradictions among valid events' assertions: (key, scope) → contradicting positions and members. */
export function oracleConflicts(events: readonly SequencedEvent[], valid: ReadonlySet<string>) {
  const all = events
    .filter((e) => valid.has(e.eventId))
    .flatMap((e) =>
      (e.assertions ?? []).map((a) => ({ id: e.eventId, ...a, canon: canonicalValue(a.value) })),
    );
  const contradicts = (p: (typeof all)[number], q: (typeof all)[number]) => {
    if (p.canon === q.canon && p.polarity !== q.polarity) return true;
    if (p.polarity === "affirmed" && q.polarity === "affirmed" && p.canon !== q.canon) return true;
    if ("scopes" in p.value && "scopes" in q.value && p.polarity !== q.polarity) {
      const other = q.value.scopes;
      return p.value.scopes.some((scope) => other.includes(scope));
    }
    return false;
  };
  const found = new Map<string, { members: Set<string>; positions: Set<string> }>();
  for (const p of all)
    for (const q of all) {
      if (p.id === q.id || p.key !== q.key || p.scope !== q.scope || !contradicts(p, q)) continue;
      const id = JSON.stringify([p.key, p.scope]);
      const entry = found.get(id) ?? { members: new Set(), positions: new Set() };
      entry.members.add(p.id);
      entry.positions.add(`${p.polarity}|${p.canon}`);
      found.set(id, entry);
    }
  return found;
}

export const oracleMembers = (found: ReturnType<typeof oracleConflicts>) =>
  [...found].map(([id, entry]) => `${id}:${[...entry.members].sort().join(",")}`).sort();
export const oraclePositions = (found: ReturnType<typeof oracleConflicts>) =>
  [...found].map(([id, entry]) => `${id}:${[...entry.positions].sort().join(",")}`).sort();

const assertionArb = fc.record({
  key: fc.constantFrom("k1", "k2"),
  value: fc.oneof(
    fc.record({ text: fc.constantFrom("A", "B") }),
    fc.record({ quantity: fc.constantFrom("5", "5000"), unit: fc.constantFrom("km", "m") }),
    fc.record({ scopes: fc.subarray(["r", "w", "d"], { minLength: 1 }) }),
  ),
  polarity: fc.constantFrom("affirmed", "negated"),
});
export const stepArb = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      type: fc.constant("assert"),
      assertions: fc.array(assertionArb, { minLength: 1, maxLength: 2 }),
      trust: fc.constantFrom("user", "tool", "untrusted"),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant("supersede"),
      target: fc.nat(),
      assertions: fc.array(assertionArb, { maxLength: 1 }),
      trust: fc.constantFrom("user", "untrusted"),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant("revoke"),
      target: fc.nat(),
      trust: fc.constantFrom("user", "untrusted"),
    }),
  },
);

/**
 * A log appended in two batches, cut after `cut` events, as the planner sees it: the second
 * batch's plan, every event as stored, those of the first batch, and what the oracle holds valid
 * before and after the second.
 */
export async function appendedInTwo(
  events: readonly MemoryEvent[],
  cut: number,
  policy: TrustPolicy = DEFAULT_TRUST_POLICY,
) {
  const planned = new PlannedLog(policy);
  const before = events.slice(0, cut);
  if (before.length > 0) await planned.append(before);
  const plan = await planned.append(events.slice(cut));
  const sequenced = planned.sequenced();
  const old = sequenced.filter((event) => event.sequence <= cut);
  return {
    plan,
    sequenced,
    old,
    validBefore: oracleValidity(old, cut, policy),
    validAfter: oracleValidity(sequenced, sequenced.length, policy),
  };
}
