import { monthDayOf } from "../dates.ts";
import type { Mention, TextMentions } from "../mentions.ts";
import { CUE_CLASS_NAMES, CUE_CLASSES, mentionKey, mentionKeys, noCues } from "../mentions.ts";
import { contributesMentions, eventMentions } from "../must-preserve.ts";
import type { SequencedEvent, ValueData } from "../schemas.ts";
import type { CandidateCheck } from "./candidate-check.ts";
import { heldByValues, valuesHold } from "./value-holds.ts";

/**
 * Free-text restatements (CONTRACT §4b "Split and merged restatements"): the texts restating
 * text-only sources (claims' `{text}` values and their `text`, pending items' text) are recorded
 * while claims and pending items are checked, then checked per connected part of the graph of
 * sources and texts (a small union-find), so a split or a merge is checked as a whole.
 */

/**
 * A claim's `{text}` value or a pending item's text over the text-only sources it names, or the
 * `text` of a structured claim that also names text-only sources (its value beside it).
 */
export interface Restatement {
  text: string;
  written: TextMentions;
  /**
   * The structured value of the claim it belongs to, when that claim restates an assertion: what
   * the value holds needs no repeating in the text (CONTRACT §4b "A value is not repeated").
   */
  values: readonly ValueData[];
  /** The contributing sources it restates: what they hold must be kept. */
  sources: readonly SequencedEvent[];
  /** Every free-text source it names: the cue words it may hold (a merge keeps the others' too). */
  cited: readonly SequencedEvent[];
  where: string;
  key: string | null;
  scope: string | null;
}

/**
 * Records a text restating text-only sources (a claim's `{text}` value, a pending item's text, a
 * structured claim's `text` with its value): `restated` are the sources it restates (the
 * contributing ones among them must be kept), `cited` every source whose cue words it may hold.
 * Restatements are checked together by `checkRestatementParts`, since honest models split one
 * source into several texts and merge several sources into one.
 */
export function recordRestatement(
  check: CandidateCheck,
  text: string,
  restated: readonly SequencedEvent[],
  cited: readonly SequencedEvent[],
  where: string,
  key: string | null,
  scope: string | null,
  values: readonly ValueData[] = [],
): Restatement | null {
  const contributing = restated.filter(contributesMentions);
  for (const source of contributing)
    if (!check.textCovered.has(source.eventId)) check.textCovered.set(source.eventId, where);
  if (contributing.length === 0) return null;
  const restatement = {
    text,
    written: check.mentionsIn(text),
    values,
    sources: contributing,
    cited,
    where,
    key,
    scope,
  };
  check.restatements.push(restatement);
  return restatement;
}

/**
 * CONTRACT §4b "Split and merged restatements": in each connected part of the graph of text-only
 * sources and the texts restating them, every mention of every source is kept by some text of
 * the part (a text holding another value of its kind changed it: value-changed; none: missing),
 * and for each cue class the texts' counts sum to at least the sources' counts and at most the
 * counts of every free-text event the texts cite (a merge may keep a cited note's "not"; nothing
 * is dropped and nothing added: negation polarity-flipped, the other classes value-changed).
 */
export function checkRestatementParts(check: CandidateCheck): void {
  checkRestatementGraph(check, check.restatements);
  // Claims whose `text` says another sentence than their value: the graph again with those texts
  // in the values' places (each rendering must keep the meaning; they are never summed).
  if (check.alternates.size > 0)
    checkRestatementGraph(
      check,
      check.restatements.map((r) => check.alternates.get(r) ?? r),
    );
}

/** Splits the restatements into the connected parts of the source-text graph (a union-find). */
function checkRestatementGraph(check: CandidateCheck, restatements: readonly Restatement[]): void {
  const parent = new Map<string, string>();
  const find = (node: string): string => {
    let root = node;
    while (parent.get(root) !== root) root = parent.get(root) ?? root;
    parent.set(node, root);
    return root;
  };
  const union = (a: string, b: string) => {
    if (!parent.has(a)) parent.set(a, a);
    if (!parent.has(b)) parent.set(b, b);
    parent.set(find(a), find(b));
  };
  restatements.forEach((restatement, index) => {
    for (const source of restatement.sources) union(`text:${index}`, `event:${source.eventId}`);
  });
  const parts = new Map<string, { texts: Restatement[]; sources: Map<string, SequencedEvent> }>();
  restatements.forEach((restatement, index) => {
    const root = find(`text:${index}`);
    let part = parts.get(root);
    if (!part) {
      part = { texts: [], sources: new Map() };
      parts.set(root, part);
    }
    part.texts.push(restatement);
    for (const source of restatement.sources) part.sources.set(source.eventId, source);
  });
  for (const { texts, sources } of parts.values()) checkPart(check, texts, [...sources.values()]);
}

/**
 * One connected part: every source mention kept by some text (or by the structured value of a
 * claim among them), each cue class summed alike.
 */
function checkPart(
  check: CandidateCheck,
  texts: readonly Restatement[],
  unordered: readonly SequencedEvent[],
): void {
  const sources = [...unordered].sort((a, b) => a.sequence - b.sequence);
  const first = texts[0] as Restatement;
  const writtenKeys = new Set<string>();
  for (const { written } of texts)
    for (const mention of written.mentions) {
      for (const key of mentionKeys(mention)) writtenKeys.add(key);
      // A full date written in the claim also keeps a source's year-less "Dec 3".
      const monthDay = mention.kind === "date" ? monthDayOf(mention.key) : null;
      if (monthDay !== null) writtenKeys.add(`date:${monthDay}`);
      // `10-12` written keeps a source's October 12 or its 10 and 12 (CONTRACT §4b).
      if (mention.kind === "date")
        for (const number of mention.range ?? []) writtenKeys.add(mentionKey(number));
    }
  const values = texts.flatMap((text) => text.values);
  const valueHeld = values.length > 0 ? heldByValues(values) : null;
  const requiredKeys = new Set<string>();
  const required = noCues();
  for (const source of sources) {
    const { mentions, cues } = eventMentions(source);
    for (const mention of mentions) for (const key of mentionKeys(mention)) requiredKeys.add(key);
    for (const cls of CUE_CLASSES) required[cls] += cues[cls];
  }
  for (const source of sources) {
    const restating = texts.find((text) => text.sources.includes(source)) ?? first;
    for (const mention of eventMentions(source).mentions) {
      if (mentionKeys(mention).some((key) => writtenKeys.has(key))) continue;
      if (mention.kind === "date" && mention.range?.every((number) => writtenKeys.has(mentionKey(number))))
        continue;
      if (valueHeld !== null && valuesHold(values, valueHeld, mention)) continue;
      const changed = texts
        .filter((text) => text.sources.includes(source))
        .flatMap((text) => text.written.mentions.map((other) => ({ text, other })))
        .find(({ other }) => other.kind === mention.kind && !requiredKeys.has(mentionKey(other)));
      if (changed)
        check.add(
          "value-changed",
          changed.text.key,
          changed.text.scope,
          source.eventId,
          `${changed.text.where} turns ${source.eventId}'s "${mention.raw}" into "${changed.other.raw}"${unitChange(mention, changed.other)}`,
        );
      else
        check.add(
          "missing",
          restating.key,
          restating.scope,
          source.eventId,
          `${source.eventId}'s ${mention.kind} "${mention.raw}" is kept by no restatement (${texts.map((t) => t.where).join(", ")})`,
        );
    }
  }
  const written = noCues();
  for (const text of texts) for (const cls of CUE_CLASSES) written[cls] += text.written.cues[cls];
  const allowed = { ...required };
  const restated = new Set(sources);
  for (const event of new Set(texts.flatMap((text) => text.cited)))
    if (!restated.has(event)) for (const cls of CUE_CLASSES) allowed[cls] += eventMentions(event).cues[cls];
  const where = texts.map((text) => text.where).join(", ");
  for (const cls of CUE_CLASSES) {
    if (written[cls] >= required[cls] && written[cls] <= allowed[cls]) continue;
    const bound =
      allowed[cls] === required[cls]
        ? `${required[cls]}`
        : `${required[cls]} (with the other texts cited, at most ${allowed[cls]})`;
    check.add(
      cls === "negation" ? "polarity-flipped" : "value-changed",
      first.key,
      first.scope,
      sources[0]?.eventId ?? null,
      `${where} ${texts.length > 1 ? "have" : "has"} ${written[cls]} ${CUE_CLASS_NAMES[cls]} cue(s); ${sources.length > 1 ? "their source texts have" : "its source text has"} ${bound}`,
    );
  }
}

/**
 * What tells two mentions of the same number apart when their unit does ("10,000 h" written
 * "10,000"): said after the refusal, which would otherwise read as turning a number into itself.
 */
function unitChange(source: Mention, written: Mention): string {
  if (source.kind !== "number" || written.kind !== "number" || source.number !== written.number) return "";
  if (source.hasUnit && !written.hasUnit) return " (its unit dropped)";
  if (!source.hasUnit && written.hasUnit) return " (a unit added)";
  return " (in another unit)";
}
