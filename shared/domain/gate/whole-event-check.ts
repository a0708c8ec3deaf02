import type { Mention } from "../mentions.ts";
import { CUE_CLASS_NAMES, CUE_CLASSES, type CueClass, extractMentions, mentionsToKeep } from "../mentions.ts";
import { eventMentions, isWholeEvent } from "../must-preserve.ts";
import type { SequencedEvent, ValueData } from "../schemas.ts";
import { isOpenTask, isTextOnly } from "../selector.ts";
import { contentWords, supportingWordsOf, supportsWord } from "../text-support.ts";
import type { CandidateCheck } from "./candidate-check.ts";
import { type HeldTokens, holdMentions, holdsMention, holdValue } from "./context.ts";
import { shorten } from "./report.ts";
import { wallTimeHeld } from "./value-holds.ts";

/**
 * Whole events with assertions (CONTRACT §4b "Whole-event text"): a constraint, permission,
 * decision or open task says more in its text than its assertions hold ("Never run VACUUM FULL on
 * ledger_entries during business hours (08:00-20:00 Lisbon)" asserts only the negated rule). What
 * derives from it (the claims naming it, its pending items) must keep the numbers, dates and ids
 * of the sentences stating its assertions, and, where texts restate it, its condition cues; a
 * restatement keeping few of its content words is a `thin-restatement` warning, or `missing` when
 * the policy sets `restatementSupport`.
 */

/** Below this share of the source's content words a restatement is reported to the judge. */
const THIN_RESTATEMENT_WARNING = 0.5;

/**
 * Cue classes compared here: a condition or exception lives in words (or at most in a key, so it
 * is compared only where texts restate the event). The other classes a key and value hold
 * (`deploy.max_services` = 3 is "no more than 3", `negated` a negation): not compared here.
 */
const WORD_ONLY_CLASSES: readonly CueClass[] = ["condition"];

/**
 * The mentions of an event's text that its restatement must keep: those of the sentences that
 * state one of its assertions (the sentence holds the assertion's value, or for a value without
 * one, a bool or plain text, shares the most content words with its key), where its conditions
 * stand ("during business hours (08:00-20:00 Lisbon)"), never a rationale sentence beside them
 * ("800 ms would have paged far too late on the 16th"). Within them, the old value of a change
 * ("from 35 to 30 days": 35) is history, and the assertions' own values are checked as claims. A
 * text no sentence of which states an assertion keeps all its mentions.
 */
function requiredMentions(event: SequencedEvent, oldDates: OldDates = "history"): Mention[] {
  const cache = oldDates === "history" ? requiredCache : requiredAsRecordedCache;
  let required = cache.get(event);
  if (required) return required;
  // Cut at sentence ends by punctuation: ICU keeps "sustained. 800 ms would..." as one sentence.
  const sentences = (event.text ?? "").split(SENTENCE_END).filter((sentence) => sentence.trim() !== "");
  const values: HeldTokens = { unitNumbers: new Set(), numbers: new Set(), dates: new Set(), ids: new Set() };
  const assertionValues = (event.assertions ?? []).map((assertion) => assertion.value);
  const keyWords: Array<readonly string[]> = [];
  for (const assertion of event.assertions ?? []) {
    holdValue(values, assertion.value);
    if (!("quantity" in assertion.value || "date" in assertion.value))
      keyWords.push(contentWords(assertion.key.split(NAME_PARTS).join(" ")));
  }
  const stating = new Set<number>();
  sentences.forEach((sentence, index) => {
    const { mentions } = extractMentions(sentence);
    if (mentions.some((m) => (m.kind === "number" ? values.numbers.has(m.number) : holdsMention(values, m))))
      stating.add(index);
  });
  for (const words of keyWords) {
    const shared = sentences.map(
      (sentence) => contentWords(sentence).filter((w) => words.includes(w)).length,
    );
    const most = Math.max(0, ...shared);
    if (most > 0) for (const [index, count] of shared.entries()) if (count === most) stating.add(index);
  }
  // The assertions' own values are the claims' to keep (value-changed, missing): beyond them only.
  required = (
    stating.size === 0
      ? [...eventMentions(event).mentions]
      : sentences.flatMap((sentence, index) =>
          stating.has(index) ? withoutOldValues(sentence, oldDates === "history" ? values : null) : [],
        )
  ).filter((mention) => !holdsMention(values, mention) && !wallTimeHeld(assertionValues, mention));
  cache.set(event, required);
  return required;
}
const SENTENCE_END = /(?<=[.!?])\s+|(?<=[。！？；;])/u;
const requiredCache = new WeakMap<SequencedEvent, Mention[]>();
const requiredAsRecordedCache = new WeakMap<SequencedEvent, Mention[]>();

/**
 * Whether the old date of a change to an asserted date is history (the gate since issue 38) or
 * kept (as the checklists of the prompts recorded before it name it, so their bytes never change).
 */
export type OldDates = "history" | "kept";

/**
 * A change's old value ("from 35 to 30 days", 从35天改为30天) is history, not a mention to keep; so
 * is the old date of a change to the date an assertion holds ("pushed from Dec 22 to Mon Dec 28",
 * asserting 2026-12-28).
 */
function withoutOldValues(sentence: string, asserted: HeldTokens | null): Mention[] {
  const { mentions } = mentionsToKeep(extractMentions(sentence));
  const old = new Set<string>();
  for (const match of sentence.matchAll(CHANGE_FROM)) if (match[1]) old.add(match[1].replaceAll(",", ""));
  const oldDates = new Set<string>();
  if (asserted !== null)
    for (const [, before = "", after = ""] of sentence.matchAll(DATE_CHANGE))
      if (extractMentions(after).mentions.some((m) => m.kind === "date" && holdsMention(asserted, m)))
        for (const m of extractMentions(before).mentions) if (m.kind === "date") oldDates.add(m.key);
  return mentions.filter(
    (m) =>
      !(m.kind === "number" && old.has(m.raw.replaceAll(",", ""))) &&
      !(m.kind === "date" && oldDates.has(m.key)),
  );
}
/** The words a change's old value follows, and those its new value follows (Chinese: 改为 … 到). */
const CHANGE_FROM_WORDS = String.raw`(?:\bfrom|从|由)`;
const CHANGE_TO_WORDS = "改为|改成|调到|调整为|降到|降为|升到|提高到|减少到|到";
const CHANGE_FROM = new RegExp(
  String.raw`${CHANGE_FROM_WORDS}\s*([\d,.]+)\s*[^\d\s,.;，。；]*\s*(?:to|${CHANGE_TO_WORDS})\s*\d`,
  "giu",
);
/** "from DATE to DATE" (从…改为…), each side at most 40 characters within the sentence. */
const DATE_CHANGE = new RegExp(
  String.raw`${CHANGE_FROM_WORDS}\s*([^,;:，；：]{1,40}?)\s*(?:\bto\b|${CHANGE_TO_WORDS})\s*([^,;:，；：]{1,40})`,
  "giu",
);

/**
 * What what derives from a whole event with assertions must keep beyond its assertions' values,
 * for a prompt's checklist to name: the mentions this check asks for, and its text's condition cues
 * (compared where texts restate it). An id its assertions' keys or scopes hold is left out: the
 * claims restating them keep it. Null for any other event.
 */
export function wholeEventKeeps(
  event: SequencedEvent,
  oldDates: OldDates = "history",
): { mentions: Mention[]; conditions: number } | null {
  if (!(isWholeEvent(event) || isOpenTask(event)) || isTextOnly(event) || !event.text) return null;
  // An id that is part of one of its assertions' keys or scopes is kept by the claims restating them.
  const parts = new Set(
    (event.assertions ?? []).flatMap((a) =>
      [a.key, a.scope].flatMap((name) => name.toLowerCase().split(NAME_PARTS)),
    ),
  );
  return {
    mentions: requiredMentions(event, oldDates).filter(
      (m) => !(m.kind === "id" && parts.has(m.key.toLowerCase())),
    ),
    conditions: eventMentions(event).cues.condition,
  };
}

/** What the candidate says of one event: its claims' values, names and texts, its pending items. */
interface Restating {
  held: HeldTokens;
  /** The structured values of the claims deriving from it (a value is not repeated in text). */
  values: ValueData[];
  /** Claim keys and scopes split into their parts, lower-cased (`oncall.ack_sla.sev2` gives sev2). */
  nameParts: Set<string>;
  texts: string[];
  names: string[];
  where: string[];
}

export function checkWholeEventTexts(check: CandidateCheck): void {
  const restating = restatingByEvent(check);
  const required = check.options.restatementSupport ?? 0;
  for (const event of check.context.selection.validInputs) {
    if (!(isWholeEvent(event) || isOpenTask(event)) || isTextOnly(event) || !event.text) continue;
    const said = restating.get(event.eventId);
    if (said === undefined) continue; // nothing derives from it: reported missing as a whole
    const lost = requiredMentions(event).filter((mention) => !keeps(said, event, mention));
    if (lost.length > 0)
      check.add(
        "missing",
        null,
        null,
        event.eventId,
        `${event.eventId}'s ${lost.map((m) => `${m.kind} "${m.raw}"`).join(", ")} ${lost.length > 1 ? "are" : "is"} kept by nothing that derives from it (${said.where.join(", ")})`,
      );
    const cues = cueCounts(said.texts);
    // Restated by structured claims alone, a condition may live in a key (`over_limit_approver`).
    if (said.texts.length > 0)
      for (const cls of WORD_ONLY_CLASSES) {
        const source = eventMentions(event).cues[cls];
        if (source > cues[cls])
          check.add(
            "value-changed",
            null,
            null,
            event.eventId,
            `${said.where.join(", ")} ${said.where.length > 1 ? "have" : "has"} ${cues[cls]} ${CUE_CLASS_NAMES[cls]} cue(s); ${event.eventId}'s text has ${source}`,
          );
      }
    if (said.texts.length > 0) checkDroppedAdvice(check, event, said);
    const coverage = coverageOf(event.text, said);
    if (coverage.ratio >= Math.max(required, THIN_RESTATEMENT_WARNING)) continue;
    const detail = `${said.where.join(", ")} keep ${coverage.ratio.toFixed(2)} of ${event.eventId}'s content words; not restated: ${coverage.lost.slice(0, 8).join(", ")}`;
    if (coverage.ratio < required) check.add("missing", null, null, event.eventId, detail);
    else check.warnings.push({ code: "thin-restatement", detail });
  }
}

/**
 * A "should" of a whole event that the texts restating it drop (`review.approvals: 2 — "before
 * merge"` for "PRs should get 2 approvals before merge" reads as a hard rule): value-changed
 * (CONTRACT §4b "Whole-event text"). Only advice words count: a permission's "may" is what its
 * scopes say, and a value-only restatement is not a text that could keep it.
 */
function checkDroppedAdvice(check: CandidateCheck, event: SequencedEvent, said: Restating): void {
  if (!ADVICE.test(event.text ?? "") || said.texts.some((text) => ADVICE.test(text))) return;
  check.add(
    "value-changed",
    null,
    null,
    event.eventId,
    `${said.where.join(", ")} restate${said.where.length > 1 ? "" : "s"} ${event.eventId} without its advice ("should"): ${shorten(event.text ?? "")}`,
  );
}
const ADVICE = /\b(?:should|shouldn't|ought to|recommended|preferably|ideally)\b|应该|应当|最好|建议/iu;

/** Everything the candidate derives from each event, gathered in one pass over claims and pending. */
function restatingByEvent(check: CandidateCheck): Map<string, Restating> {
  const byEvent = new Map<string, Restating>();
  const entry = (eventId: string): Restating => {
    let found = byEvent.get(eventId);
    if (!found) {
      found = {
        held: { unitNumbers: new Set(), numbers: new Set(), dates: new Set(), ids: new Set() },
        values: [],
        nameParts: new Set(),
        texts: [],
        names: [],
        where: [],
      };
      byEvent.set(eventId, found);
    }
    return found;
  };
  check.output.claims.forEach((claim, index) => {
    const texts = [
      ...("text" in claim.value ? [claim.value.text] : []),
      ...(claim.text !== undefined && claim.text !== null ? [claim.text] : []),
    ];
    for (const eventId of new Set(claim.derivedFrom)) {
      const said = entry(eventId);
      said.where.push(`claims[${index}]`);
      holdValue(said.held, claim.value);
      said.values.push(claim.value);
      for (const name of [claim.key, claim.scope]) {
        said.held.ids.add(name);
        said.names.push(name);
        holdMentions(said.held, extractMentions(name).mentions);
        for (const part of name.toLowerCase().split(NAME_PARTS)) said.nameParts.add(part);
      }
      for (const text of texts) {
        said.texts.push(text);
        holdMentions(said.held, check.mentionsIn(text).mentions);
      }
    }
  });
  check.output.pending.forEach((item, index) => {
    for (const eventId of new Set(item.derivedFrom)) {
      const said = entry(eventId);
      said.where.push(`pending[${index}]`);
      said.texts.push(item.text);
      holdMentions(said.held, check.mentionsIn(item.text).mentions);
    }
  });
  return byEvent;
}

const NAME_PARTS = /[:/._@-]/u;

/**
 * Whether what derives from an event keeps one mention of its text: held by its claims' values,
 * names or texts, or its pending items; an id also by a part of a claim's key or scope (keys are
 * machine names: SEV2 is kept by `oncall.ack_sla.sev2`); a date also when it is the day the event
 * happened (its provenance says when).
 */
function keeps(said: Restating, event: SequencedEvent, mention: Mention): boolean {
  if (holdsMention(said.held, mention) || wallTimeHeld(said.values, mention)) return true;
  // Or as a bare number: a structured value's unit was compared with the assertion's already
  // (2,800元 is kept by {2800 CNY/person-day}).
  if (mention.kind === "number") return said.held.numbers.has(mention.number);
  if (mention.kind === "id") return said.nameParts.has(mention.key.toLowerCase());
  if (mention.kind === "date" && event.occurredAt !== undefined) {
    const day = `day:${event.occurredAt.slice(0, 10)}`;
    return mention.key === day || mention.key === `monthday:${event.occurredAt.slice(5, 10)}`;
  }
  return false;
}

function cueCounts(texts: readonly string[]): Record<CueClass, number> {
  const counts = Object.fromEntries(CUE_CLASSES.map((cls) => [cls, 0])) as Record<CueClass, number>;
  for (const text of texts) {
    const { cues } = extractMentions(text);
    for (const cls of CUE_CLASSES) counts[cls] += cues[cls];
  }
  return counts;
}

/** Share of the source text's content words found in what restates it (texts, key and scope parts). */
function coverageOf(text: string, said: Restating): { ratio: number; lost: string[] } {
  const source = contentWords(text);
  if (source.length === 0) return { ratio: 1, lost: [] };
  const kept = new Set([
    ...said.texts.flatMap((t) => supportingWordsOf(t)),
    ...contentWords(said.names.map((name) => name.split(NAME_PARTS).join(" ")).join(" ")),
  ]);
  const lost = source.filter((word) => !supportsWord(kept, word));
  return { ratio: (source.length - lost.length) / source.length, lost };
}
