import type { MustPreserveItem } from "../must-preserve.ts";
import { keyScope } from "../selector.ts";
import type { CandidateCheck } from "./candidate-check.ts";

/** A must-preserve item and the part of a candidate that keeps it (null: not kept). */
export interface ChecklistEntry {
  item: MustPreserveItem;
  keptBy: string | null;
}

/**
 * After a check has run: each must-preserve item with the part of the candidate that keeps it,
 * exactly as that check checked it (null when the item is not kept). Reviewers, recall's budget
 * order and the evaluation see the gate's own verdict, never a second notion of "kept".
 */
export function checklistOf(check: CandidateCheck): ChecklistEntry[] {
  const conflictMissing = new Set(
    check.reasons
      .filter((r) => r.code === "conflict-missing")
      .map((r) => keyScope(r.key ?? "", r.scope ?? "")),
  );
  const keptBy = (item: MustPreserveItem): string | null => {
    if (item.kind === "assertion") return check.keptItems.get(item) ?? null;
    if (item.kind === "pending") return check.pendingKept.get(item.eventId) ?? null;
    if (item.kind === "text")
      return check.textCovered.get(item.eventId) ?? check.pendingKept.get(item.eventId) ?? null;
    if (item.kind === "event") return check.derivedFrom().get(item.eventId) ?? null;
    const index = check.output.unresolvedConflicts.findIndex(
      (c) => c.key === item.key && c.scope === item.scope,
    );
    return index >= 0 && !conflictMissing.has(keyScope(item.key, item.scope))
      ? `unresolvedConflicts[${index}]`
      : null;
  };
  return check.context.mustPreserve.map((item) => ({ item, keptBy: keptBy(item) }));
}
