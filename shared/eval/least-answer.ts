import { citedIds } from "#domain/cold-layer.ts";
import type { GateContext } from "#domain/gate/index.ts";
import { gateCandidateText, wholeEventKeeps } from "#domain/gate/index.ts";
import { CUE_CLASSES, CUE_PHRASES, type CueCounts, type Mention } from "#domain/mentions.ts";
import { eventMentions } from "#domain/must-preserve.ts";
import type { Claim, ConsolidationOutput, PendingItem, SequencedEvent } from "#domain/schemas.ts";
import { keyScope } from "#domain/selector.ts";

/**
 * About the least an answer the gate accepts can serve for a log: every must-preserve assertion as
 * a claim with no text, and every text the gate reads (a free-text event's restatement, a whole
 * event's claim text, an open task's pending item) holding only the numbers, dates, ids and cue
 * words it must keep, "; " between them; no summary. Where such a bare text is refused (a number
 * whose unit sat in a word left out, a cue read another way), that event's text is restated
 * verbatim instead and the gate asked again. Unreadable by design: it measures how much of a
 * log's raw size the gate's rules alone hold hot, the room left for the words that make a summary
 * readable. `verbatim` counts the events restated whole. Null when the answer is still refused after
 * MAX_ROUNDS.
 */
export function leastAcceptedAnswer(
  context: GateContext,
): { answer: ConsolidationOutput; verbatim: number } | null {
  const verbatim = new Set<string>();
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const answer = leastAnswer(context, verbatim);
    const report = gateCandidateText(context, JSON.stringify(answer));
    if (report.verdict === "pass") return { answer, verbatim: verbatim.size };
    const named = report.reasons.flatMap((reason) => (reason.eventId ? [reason.eventId] : []));
    const before = verbatim.size;
    for (const eventId of named) verbatim.add(eventId);
    // A refusal naming no event it could still restate verbatim: nothing left to widen.
    if (verbatim.size === before) return null;
  }
  return null;
}

const MAX_ROUNDS = 8;

function leastAnswer(context: GateContext, verbatim: ReadonlySet<string>): ConsolidationOutput {
  const contested = new Set(context.selection.conflicts.map((c) => keyScope(c.key, c.scope)));
  const claims: Claim[] = [];
  const pending: PendingItem[] = [];
  const textOf = (event: SequencedEvent, mentions: readonly Mention[], cues: CueCounts) =>
    verbatim.has(event.eventId) ? (event.text ?? "") : bareText(event.text ?? "", mentions, cues);
  const withText = new Set<string>();
  for (const item of context.mustPreserve) {
    const event = "eventId" in item ? context.eventsById.get(item.eventId) : undefined;
    if (item.kind === "assertion" && event) {
      const keeps = withText.has(event.eventId) ? null : wholeEventKeeps(event);
      withText.add(event.eventId);
      claims.push({
        key: item.key,
        scope: item.scope,
        value: item.value,
        polarity: item.polarity,
        status: contested.has(keyScope(item.key, item.scope)) ? "contested" : "settled",
        derivedFrom: [event.eventId],
        ...(keeps && (keeps.mentions.length > 0 || keeps.conditions > 0)
          ? { text: textOf(event, keeps.mentions, { ...noCueCounts(), condition: keeps.conditions }) }
          : {}),
      } as Claim);
    } else if (item.kind === "text" && event) {
      claims.push(freeTextClaim(event, textOf(event, item.mentions, item.cues)));
    } else if (item.kind === "pending" && event) {
      const { mentions, cues } = eventMentions(event);
      pending.push({
        text: textOf(event, mentions, cues) || (event.text ?? ""),
        derivedFrom: [event.eventId],
      });
    }
  }
  // A whole event nothing above derives from (a constraint with no assertions and nothing to keep).
  const cited = citedIds({ claims, pending });
  for (const item of context.mustPreserve)
    if (item.kind === "event" && !cited.has(item.eventId)) {
      const event = context.eventsById.get(item.eventId);
      if (event) claims.push(freeTextClaim(event, event.text ?? ""));
    }
  return {
    claims,
    pending,
    unresolvedConflicts: context.selection.conflicts.map((c) => ({
      key: c.key,
      scope: c.scope,
      members: [...c.members],
    })),
    summary: "",
    coldRefs: [],
  } as ConsolidationOutput;
}

function freeTextClaim(event: SequencedEvent, text: string): Claim {
  return {
    key: "note",
    scope: "global",
    value: { text },
    polarity: "affirmed",
    status: "settled",
    derivedFrom: [event.eventId],
  } as Claim;
}

function noCueCounts(): CueCounts {
  return Object.fromEntries(CUE_CLASSES.map((cls) => [cls, 0])) as CueCounts;
}

/** The mentions as written and each cue class's count in one of its own words (Chinese for Chinese text). */
function bareText(text: string, mentions: readonly Mention[], cues: CueCounts): string {
  const chinese = /\p{Script=Han}/u.test(text);
  const words = CUE_CLASSES.flatMap((cls) => {
    const phrase = CUE_PHRASES.find(
      ([candidate, phraseClass]) => phraseClass === cls && /\p{Script=Han}/u.test(candidate) === chinese,
    )?.[0];
    return phrase === undefined ? [] : Array.from({ length: cues[cls] }, () => phrase);
  });
  return [...new Set(mentions.map((mention) => mention.raw))].concat(words).join("; ");
}
