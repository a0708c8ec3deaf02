import type { PendingItem, SequencedEvent } from "../schemas.ts";
import { isOpenTask, isTextOnly } from "../selector.ts";
import type { CandidateCheck } from "./candidate-check.ts";
import { recordRestatement } from "./restatement-check.ts";

/**
 * Pending items (CONTRACT §3): each derives from open tasks, which it keeps; the text of a
 * text-only task joins the restatements, checked per connected part.
 */
export function checkPending(check: CandidateCheck, item: PendingItem, index: number): void {
  const where = `pending[${index}]`;
  const sources = check
    .validSources(item.derivedFrom, where, null, null)
    .map((id) => check.context.eventsById.get(id) as SequencedEvent)
    .sort((a, b) => a.sequence - b.sequence);
  const tasks = sources.filter(isOpenTask);
  if (tasks.length === 0) {
    if (sources.length > 0)
      check.add(
        "unsupported-claim",
        null,
        null,
        sources[0]?.eventId ?? null,
        `${where} is pending, but none of its sources is an open task`,
      );
    return;
  }
  for (const task of tasks)
    if (!check.pendingKept.has(task.eventId)) check.pendingKept.set(task.eventId, where);
  const textTasks = tasks.filter(isTextOnly);
  if (textTasks.length > 0)
    recordRestatement(check, item.text, textTasks, sources.filter(isTextOnly), where, null, null);
}
