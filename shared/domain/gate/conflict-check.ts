import { positionKey } from "../conflicts.ts";
import type { MustPreserveItem } from "../must-preserve.ts";
import type { Claim } from "../schemas.ts";
import { compareStrings, keyScope } from "../selector.ts";
import { describeValue } from "../values.ts";
import type { CandidateCheck } from "./candidate-check.ts";
import type { ConflictEntry } from "./context.ts";

/**
 * Conflicts (CONTRACT §2, §4a "Conflicts"): unresolvedConflicts lists exactly the snapshot's
 * conflicts; a claim restating a contradicting position is contested, one restating a position
 * that contradicts nothing is settled, and every contradicting position appears as a contested
 * claim.
 */

/**
 * Status against the conflicts (selector v2): a contradicting position must be contested; a
 * position on a conflicted key that contradicts nothing is a settled fact, and contested where
 * no conflict exists is invented.
 */
export function checkClaimStatus(check: CandidateCheck, claim: Claim, index: number): void {
  const { key, scope } = claim;
  const conflict = check.context.conflictsByKeyScope.get(key, scope);
  if (!conflict) {
    if (claim.status === "contested")
      check.add(
        "conflict-invented",
        key,
        scope,
        null,
        `claims[${index}] marks ${key} contested, but no valid inputs contradict each other on it`,
      );
    return;
  }
  const contradicting = isContradictingPosition(check, claim, conflict);
  if (claim.status === "settled" && contradicting !== false)
    check.add(
      "conflict-settled",
      key,
      scope,
      null,
      `claims[${index}] states ${key} as settled, but ${conflict.members.join(", ")} contradict each other on it; mark it contested`,
    );
  if (claim.status === "contested" && contradicting === false)
    check.add(
      "conflict-invented",
      key,
      scope,
      null,
      `claims[${index}] marks ${describeValue(claim.value)} (${claim.polarity}) on ${key} contested, but that position contradicts no other source; state it as settled`,
    );
}

/**
 * Whether the claim restates one of the conflict's contradicting positions (true), a held
 * position that contradicts nothing (false), or no held position at all (null).
 */
function isContradictingPosition(
  check: CandidateCheck,
  claim: Claim,
  conflict: ConflictEntry,
): boolean | null {
  for (const position of conflict.contradicting.values())
    if (position.polarity === claim.polarity && check.holdsValue(claim, position.value, position.valueKey))
      return true;
  const held = check.context.holdersByKeyScope
    .get(claim.key, claim.scope)
    ?.has(positionKey(claim.polarity, check.valueKeyOf(claim)));
  if (held) return false;
  return null;
}

/** Every contradicting position of a conflict appears as a contested claim. */
export function checkConflictPositions(
  check: CandidateCheck,
  item: MustPreserveItem & { kind: "conflict" },
): void {
  const contested = check.claimsOn(item.key, item.scope).filter((claim) => claim.status === "contested");
  for (const position of check.context.conflictsByKeyScope
    .get(item.key, item.scope)
    ?.contradicting.values() ?? []) {
    if (
      !contested.some(
        (claim) =>
          claim.polarity === position.polarity && check.holdsValue(claim, position.value, position.valueKey),
      )
    )
      check.add(
        "conflict-missing",
        item.key,
        item.scope,
        position.eventId,
        `${position.eventId}'s ${describeValue(position.value)} (${position.polarity}) is not kept as a contested claim`,
      );
  }
}

/** unresolvedConflicts equals the snapshot's conflicts as a set (members order-free). */
export function checkConflictList(check: CandidateCheck): void {
  const conflictId = (key: string, scope: string, members: readonly string[]) =>
    `${keyScope(key, scope)}\u0000${[...new Set(members)].sort(compareStrings).join(",")}`;
  const listed = new Set(check.output.unresolvedConflicts.map((c) => conflictId(c.key, c.scope, c.members)));
  const expected = new Set<string>();
  for (const conflict of check.context.selection.conflicts) {
    const id = conflictId(conflict.key, conflict.scope, conflict.members);
    expected.add(id);
    if (!listed.has(id))
      check.add(
        "conflict-missing",
        conflict.key,
        conflict.scope,
        conflict.members[0] ?? null,
        `unresolvedConflicts lacks ${conflict.key} between ${conflict.members.join(", ")}`,
      );
  }
  for (const conflict of check.output.unresolvedConflicts) {
    if (!expected.has(conflictId(conflict.key, conflict.scope, conflict.members)))
      check.add(
        "conflict-invented",
        conflict.key,
        conflict.scope,
        conflict.members[0] ?? null,
        `unresolvedConflicts names ${conflict.key} between ${conflict.members.join(", ")}, which is not an unresolved conflict of the valid inputs`,
      );
  }
}
