import { positionKey } from "../conflicts.ts";
import { CUE_CLASS_NAMES, CUE_CLASSES } from "../mentions.ts";
import type { MustPreserveItem } from "../must-preserve.ts";
import { isWholeEvent } from "../must-preserve.ts";
import type { Claim } from "../schemas.ts";
import { isOpenTask } from "../selector.ts";
import { describeValue } from "../values.ts";
import type { CandidateCheck } from "./candidate-check.ts";
import { checkConflictPositions } from "./conflict-check.ts";
import { shorten } from "./report.ts";

/** Must-preserve items (CONTRACT §2, §4b "Whole events") and what may be left cold. */

/** coldRefs names valid inputs only, and never leaves a whole event or an open task cold. */
export function checkColdRefs(check: CandidateCheck): void {
  for (const [index, id] of check.output.coldRefs.entries()) {
    const event = check.context.eventsById.get(id);
    if (!check.context.selection.validIds.has(id))
      check.reportUnknownSource(id, `coldRefs[${index}]`, null, null);
    else if (event && (isWholeEvent(event) || isOpenTask(event)))
      check.add(
        "missing",
        null,
        null,
        id,
        `coldRefs[${index}] leaves ${event.kind === "task" ? "open task" : event.kind} ${id} cold; it must be restated, never left cold`,
      );
  }
}

/**
 * Checked after the claims and pending items recorded what keeps them: each assertion, open task,
 * text-only event, conflict and whole event is kept, or reported once with the code that says how
 * it was lost.
 */
export function checkMustPreserve(check: CandidateCheck): void {
  for (const item of check.context.mustPreserve) {
    switch (item.kind) {
      case "assertion": {
        if (check.keptItems.has(item)) break;
        const claims = check.claimsOn(item.key, item.scope);
        if (claims.length === 0)
          check.add(
            "missing",
            item.key,
            item.scope,
            item.eventId,
            `no claim keeps ${item.key} = ${describeValue(item.value)} (${item.polarity})`,
          );
        else if (
          claims.some(
            (claim) => claim.polarity === item.polarity && check.holdsValue(claim, item.value, item.valueKey),
          )
        )
          check.add(
            "provenance-missing",
            item.key,
            item.scope,
            item.eventId,
            `the claim of ${item.key} = ${describeValue(item.value)} does not name ${item.eventId}`,
          );
        // Otherwise a claim speaks to (key, scope) with another value: its own check reported
        // it, unless that claim matched another assertion of the same event exactly (an event
        // holding both polarities of one value), or it restates an earlier reading (reported as
        // such): then nothing else says the item was lost.
        else if (
          restatesOnlyOtherAssertions(check, claims, item) ||
          restatesOnlyEarlierReadings(check, claims, item)
        )
          check.add(
            "missing",
            item.key,
            item.scope,
            item.eventId,
            `no claim keeps ${item.key} = ${describeValue(item.value)} (${item.polarity}) of ${item.eventId}`,
          );
        break;
      }
      case "pending":
        if (!check.pendingKept.has(item.eventId))
          check.add(
            "pending-missing",
            null,
            null,
            item.eventId,
            `open task ${item.eventId} has no pending item: "${shorten(item.text)}"`,
          );
        break;
      case "text":
        // An open task's text is kept by its pending item; without one it is pending-missing. A
        // whole event nothing derives from is reported once, by its own item.
        if (
          !check.textCovered.has(item.eventId) &&
          !pendingItemExpected(check, item.eventId) &&
          !wholeEventUnkept(check, item.eventId)
        )
          check.add(
            "missing",
            null,
            null,
            item.eventId,
            `no claim restates ${item.eventId}, whose ${describeMentions(item)} must be kept`,
          );
        break;
      case "conflict":
        checkConflictPositions(check, item);
        break;
      case "event":
        // A constraint, permission or decision no claim derives from (and not already reported
        // missing through one of its assertions or mentions).
        if (
          !check.derivedFrom().has(item.eventId) &&
          !check.reasons.some((r) => r.code === "missing" && r.eventId === item.eventId)
        )
          check.add(
            "missing",
            null,
            null,
            item.eventId,
            `no claim derives from ${item.eventKind} ${item.eventId}; a ${item.eventKind} is never left cold`,
          );
        break;
    }
  }
}

/** A constraint, permission or decision no claim derives from (its own item reports it). */
function wholeEventUnkept(check: CandidateCheck, eventId: string): boolean {
  const event = check.context.eventsById.get(eventId);
  return event !== undefined && isWholeEvent(event) && !check.derivedFrom().has(eventId);
}

/** Whether every claim on an item's (key, scope) restates an earlier reading there (selector v3). */
function restatesOnlyEarlierReadings(
  check: CandidateCheck,
  claims: readonly Claim[],
  item: MustPreserveItem & { kind: "assertion" },
): boolean {
  const earlier = check.context.readingsByKeyScope.get(item.key, item.scope)?.earlier;
  return (
    earlier !== undefined &&
    claims.every((claim) => earlier.has(positionKey(claim.polarity, check.valueKeyOf(claim))))
  );
}

/**
 * Whether the claims on an item's (key, scope) that name its event all restate another of that
 * event's assertions exactly (so none of them was reported), leaving the item itself unkept.
 */
function restatesOnlyOtherAssertions(
  check: CandidateCheck,
  claims: readonly Claim[],
  item: MustPreserveItem & { kind: "assertion" },
): boolean {
  const naming = claims.filter((claim) => claim.derivedFrom.includes(item.eventId));
  const entries = (check.context.assertionsByEvent.get(item.eventId) ?? []).filter(
    (entry) => entry.key === item.key && entry.scope === item.scope,
  );
  return (
    naming.length > 0 &&
    naming.every((claim) =>
      entries.some(
        (entry) => entry.polarity === claim.polarity && check.holdsValue(claim, entry.value, entry.valueKey),
      ),
    )
  );
}

function pendingItemExpected(check: CandidateCheck, eventId: string): boolean {
  const event = check.context.eventsById.get(eventId);
  return event !== undefined && isOpenTask(event);
}

function describeMentions(item: MustPreserveItem & { kind: "text" }): string {
  const parts = item.mentions.map((mention) => `"${mention.raw}"`);
  for (const cls of CUE_CLASSES)
    if (item.cues[cls] > 0) parts.push(`${item.cues[cls]} ${CUE_CLASS_NAMES[cls]} cue(s)`);
  return parts.join(", ");
}
