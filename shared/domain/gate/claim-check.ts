import { positionKey } from "../conflicts.ts";
import type { Claim, SequencedEvent } from "../schemas.ts";
import { isTextOnly } from "../selector.ts";
import { describeValue } from "../values.ts";
import type { CandidateCheck } from "./candidate-check.ts";
import { checkClaimStatus } from "./conflict-check.ts";
import type { AssertionEntry } from "./context.ts";
import { checkClaimReading } from "./reading-check.ts";
import { recordRestatement } from "./restatement-check.ts";

/**
 * Claims and their provenance (CONTRACT §4a "Which code"): each claim is compared with the
 * assertions of the sources it names. Same (key, scope), other value: value-changed; same value,
 * other polarity: polarity-flipped. Asserted only by a valid input it does not name:
 * provenance-missing. Asserted by nobody: unsupported-claim, unless it restates free text (its
 * `{text}` value then joins the restatements, checked per connected part). Every claim it keeps
 * exactly marks the must-preserve items it keeps.
 */
export function checkClaim(check: CandidateCheck, claim: Claim, index: number): void {
  const { key, scope, polarity } = claim;

  checkClaimStatus(check, claim, index);
  checkClaimReading(check, claim, index);
  let matched = false;
  let sameKeySeen = false;
  for (let i = 0; i < claim.derivedFrom.length; i++) {
    const source = claim.derivedFrom[i] as string;
    if (!check.context.selection.validIds.has(source)) {
      check.reportUnknownSource(source, `claims[${index}].derivedFrom[${i}]`, key, scope);
      continue;
    }
    const entries = check.context.assertionsByEvent.get(source) ?? [];
    let sawKey = false;
    let exact = false;
    for (const entry of entries) {
      if (entry.key !== key || entry.scope !== scope) continue;
      sawKey = true;
      if (entry.polarity === polarity && check.holdsValue(claim, entry.value, entry.valueKey)) {
        exact = true;
        if (entry.item !== null && !check.keptItems.has(entry.item))
          check.keptItems.set(entry.item, `claims[${index}]`);
      }
    }
    sameKeySeen ||= sawKey;
    matched ||= exact;
    if (sawKey && !exact) reportBentSource(check, claim, index, source, entries);
  }
  if (sameKeySeen && !matched) return;
  const where = `claims[${index}]`;
  // In log order, so the event a reason names never depends on how derivedFrom was ordered.
  const sources = claim.derivedFrom
    .filter((id) => check.context.selection.validIds.has(id))
    .sort((a, b) => check.sequenceOf(a) - check.sequenceOf(b));
  if (matched) {
    restateCitedText(check, claim, where, sources);
    return;
  }

  const holders = check.context.holdersByKeyScope
    .get(key, scope)
    ?.get(positionKey(polarity, check.valueKeyOf(claim)));
  if (holders) {
    check.add(
      "provenance-missing",
      key,
      scope,
      holders[0] ?? null,
      `${where} is asserted by ${holders.join(", ")}, which derivedFrom does not name`,
    );
    return;
  }
  const textSources = sources
    .map((id) => check.context.eventsById.get(id))
    .filter((event) => event !== undefined && isTextOnly(event)) as SequencedEvent[];
  if (textSources.length > 0 && "text" in claim.value) {
    if (polarity !== "affirmed") {
      check.add(
        "polarity-flipped",
        key,
        scope,
        textSources[0]?.eventId ?? null,
        `${where} is negated; a claim over free text carries its negations in the text and is affirmed`,
      );
      return;
    }
    const restatement = recordRestatement(
      check,
      claim.value.text,
      textSources,
      textSources,
      where,
      key,
      scope,
    );
    // Its `text`, when it says another sentence, restates the same sources in the value's place.
    if (restatement && claim.text !== undefined && claim.text.trim() !== claim.value.text.trim())
      check.alternates.set(restatement, {
        ...restatement,
        text: claim.text,
        written: check.mentionsIn(claim.text),
        where: `${where}.text`,
      });
    return;
  }
  const basis =
    textSources.length > 0
      ? "its sources are free text, which a structured claim cannot restate"
      : "no source in derivedFrom asserts it";
  check.add(
    "unsupported-claim",
    key,
    scope,
    sources[0] ?? null,
    `${where} (${key} = ${describeValue(claim.value)}, ${polarity}): ${basis}`,
  );
}

/**
 * A claim that restates an assertion and also names free-text sources restates those too: its
 * `text` and its value together (CONTRACT §4b "A value is not repeated in text": a number, date or
 * id of theirs that the value holds needs no repeating in the text). Its text may hold the cue
 * words of every source it names.
 */
function restateCitedText(
  check: CandidateCheck,
  claim: Claim,
  where: string,
  sources: readonly string[],
): void {
  const events = sources.map((id) => check.context.eventsById.get(id) as SequencedEvent);
  const textSources = events.filter(isTextOnly);
  if (textSources.length === 0) return;
  const text = claim.text ?? "";
  recordRestatement(
    check,
    text,
    textSources,
    events,
    text === "" ? where : `${where}.text`,
    claim.key,
    claim.scope,
    [claim.value],
  );
}

/** The source says something else on the claim's (key, scope): the claim bent it. */
function reportBentSource(
  check: CandidateCheck,
  claim: Claim,
  index: number,
  source: string,
  entries: readonly AssertionEntry[],
): void {
  const { key, scope, polarity } = claim;
  for (const entry of entries) {
    if (entry.key !== key || entry.scope !== scope) continue;
    if (!check.holdsValue(claim, entry.value, entry.valueKey))
      check.add(
        "value-changed",
        key,
        scope,
        source,
        `claims[${index}] says ${describeValue(claim.value)}, ${source} says ${describeValue(entry.value)}`,
      );
    else
      check.add(
        "polarity-flipped",
        key,
        scope,
        source,
        `claims[${index}] is ${polarity}, ${source} is ${entry.polarity}`,
      );
  }
}
