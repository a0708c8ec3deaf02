import { positionKey } from "../conflicts.ts";
import { canonicalDate } from "../dates.ts";
import type { Claim, SequencedEvent } from "../schemas.ts";
import { describeValue } from "../values.ts";
import type { CandidateCheck } from "./candidate-check.ts";

/**
 * Readings (CONTRACT §4a "Readings", selector v3). On a (key, scope) a `latest` rule covers, the
 * latest reading's positions are current and the others are earlier readings, superseded by time.
 * A claim restating an earlier reading as current (settled or contested) is `outdated-reading`;
 * restating it as an earlier reading is allowed: status "earlier" with `asOf`, the reading's date
 * (the calendar day or the instant of the `occurredAt` of a cited event holding the position;
 * absent only when no such event has one, else `outdated-reading`). Status "earlier" on a position
 * no later reading superseded is `unsupported-claim`; an `asOf` no cited event's occurredAt has is
 * `value-changed`.
 */
export function checkClaimReading(check: CandidateCheck, claim: Claim, index: number): void {
  const { key, scope } = claim;
  const where = `claims[${index}]`;
  const cited = claim.derivedFrom
    .filter((id) => check.context.selection.validIds.has(id))
    .map((id) => check.context.eventsById.get(id) as SequencedEvent);
  if (
    claim.asOf !== undefined &&
    cited.length > 0 &&
    !cited.some((event) => readOn(event, claim.asOf as string))
  )
    check.add(
      "value-changed",
      key,
      scope,
      cited[0]?.eventId ?? null,
      `${where} has asOf ${claim.asOf}, but no event it derives from (${cited.map((e) => e.eventId).join(", ")}) occurred then`,
    );

  const readings = check.context.readingsByKeyScope.get(key, scope);
  const position = positionKey(claim.polarity, check.valueKeyOf(claim));
  const earlier = readings?.earlier.get(position);
  const latest = readings ? check.context.eventsById.get(readings.latest) : undefined;
  const holdsNow = latest
    ? `${latest.eventId}${latest.occurredAt ? ` (read ${latest.occurredAt})` : ""} is the latest reading`
    : "";
  if (claim.status !== "earlier") {
    if (earlier)
      check.add(
        "outdated-reading",
        key,
        scope,
        readings?.latest ?? null,
        `${where} states ${key} = ${describeValue(claim.value)} (${claim.polarity}) as ${claim.status}, but it is an earlier reading: ${holdsNow}; leave it out or give it status "earlier" with its asOf date`,
      );
    return;
  }
  if (!earlier) {
    check.add(
      "unsupported-claim",
      key,
      scope,
      cited[0]?.eventId ?? null,
      `${where} marks ${key} = ${describeValue(claim.value)} (${claim.polarity}) as an earlier reading, but no later reading supersedes it${readings ? ` (${holdsNow} and holds it)` : ` (no latest rule covers ${key} @ ${scope})`}`,
    );
    return;
  }
  const dated = cited.filter(
    (event) => earlier.holders.includes(event.eventId) && event.occurredAt !== undefined,
  );
  if (claim.asOf === undefined && dated.length > 0)
    check.add(
      "outdated-reading",
      key,
      scope,
      dated[0]?.eventId ?? null,
      `${where} restates an earlier reading without its date: give it asOf ${dated[0]?.occurredAt?.slice(0, 10)} (${holdsNow})`,
    );
}

/** Whether `asOf` is the event's occurredAt: its calendar day, or the same instant. */
function readOn(event: SequencedEvent, asOf: string): boolean {
  if (event.occurredAt === undefined) return false;
  const wanted = canonicalDate(asOf);
  return (
    wanted === canonicalDate(event.occurredAt) || wanted === canonicalDate(event.occurredAt.slice(0, 10))
  );
}
