// Relative time on LoCoMo (CONTRACT §4b "Relative time"): of the relative time expressions in the
// conversations, how many the gate resolves against each turn's session date, which it leaves
// unresolved (vague by design, or missed), what chrono-node reads that the contract does not take
// (and why), and how many temporal questions' gold dates, months and years the evidence turns hold,
// with their own day alone (before) and with what their relative time resolves to (now). Also the
// cost: microseconds per turn.
//
//   npx tsx --import ./scripts/text-imports.mjs bench/relative-time.ts [LOCOMO_JSON]
//
// LOCOMO_JSON defaults to ../shared/data/locomo/locomo5.json beside the repository (five of
// LoCoMo's ten conversations, CC BY-NC 4.0, kept outside it; the other five are held out). Without
// it the bench says so and records nothing.
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { canonicalDate, monthDayOf, monthOf } from "#domain/dates.ts";
import {
  buildGateContext,
  eventHeldTokens,
  type HeldTokens,
  holdMentions,
  holdsMention,
} from "#domain/gate/context.ts";
import { extractMentions, type Mention } from "#domain/mentions.ts";
import { readRelativeTime } from "#domain/relative-time.ts";
import { DEFAULT_TRUST_POLICY, type SequencedEvent } from "#domain/schemas.ts";
import { selectInputs } from "#domain/selector.ts";
import { parseLocomo } from "#io/locomo-file.ts";
import { record } from "./results.ts";

const path = resolve(
  process.argv[2] ?? join(import.meta.dirname, "..", "..", "shared", "data", "locomo", "locomo5.json"),
);
if (!existsSync(path)) {
  console.log(`relative time bench: no LoCoMo file at ${path}; pass its path (nothing measured)`);
  process.exit(0);
}

const conversations = parseLocomo(readFileSync(path, "utf8"), path);
/** Each turn as the evaluation appends it (a note: its dia_id, its session's date-time, its speaker). */
const events = new Map<string, SequencedEvent>();
let sequence = 0;
for (const conversation of conversations)
  for (const event of conversation.events)
    events.set(`${conversation.id}/${event.eventId}`, { ...event, sequence: ++sequence });

// What a person reading the turns counts as relative time (measurement only; the gate reads with
// chrono-node and its table). Vague ones have no day, month or year to resolve to, by design.
const COUNT = "(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\\d+)";
const VAGUE_COUNT = "(?:a few|a couple(?: of)?|few|several|some|many)";
const UNIT = "(?:days?|weeks?|months?|years?|decades?)";
/** Full names in any case; abbreviations capitalised ("the sun" and "I sat" are no days). */
const WEEKDAY =
  "(?:(?:[Mm]on|[Tt]ues|[Ww]ednes|[Tt]hurs|[Ff]ri|[Ss]atur|[Ss]un)day|MONDAY|TUESDAY|WEDNESDAY|THURSDAY|FRIDAY|SATURDAY|SUNDAY|Mon|Tues?|Weds?|Thu(?:rs?)?|Fri|Sat|Sun)";
const EXPRESSIONS: Array<[category: string, pattern: RegExp]> = [
  [
    "vague",
    new RegExp(
      `\\b(?:recently|lately|the other day|a while (?:ago|back)|(?:the )?(?:coming|next|past|last) few ${UNIT}|${VAGUE_COUNT} ${UNIT} (?:ago|back|earlier))\\b`,
      "giu",
    ),
  ],
  [
    "day",
    /\b(?:(?:the )?day (?:before yesterday|after tomorrow)|yesterday|today|tonight|tomorrow|last night|this (?:morning|afternoon|evening))\b/giu,
  ],
  [
    "counted",
    new RegExp(
      `\\b(?:(?:about|around|almost|nearly|over) )?${COUNT} ${UNIT} (?:ago|back|earlier|later|from now)\\b|\\bin ${COUNT} ${UNIT}\\b`,
      "giu",
    ),
  ],
  ["weekday", new RegExp(`\\b(?:(?:[Ll]ast|[Tt]his|[Nn]ext|[Pp]ast|[Cc]oming) )?${WEEKDAY}\\b(?!s)`, "gu")],
  [
    "period",
    /\b(?:(?:earlier|later) )?(?:last|this|next|past|coming) (?:week|weekend|month|year|summer|winter|spring|fall|autumn)\b|\bthe week before(?: last)?\b/giu,
  ],
  ["day of month", /\b(?:on|by|until|since) the \d{1,2}(?:st|nd|rd|th)\b/giu],
];

const found = new Map<string, { count: number; resolved: number; missed: Map<string, number> }>();
const dropped = new Map<string, Map<string, number>>();
let chronoTaken = 0;
let tableTaken = 0;
let turnsWithReadings = 0;
const started = performance.now();
const readingsByEvent = new Map<SequencedEvent, ReturnType<typeof readRelativeTime>>();
for (const event of events.values())
  readingsByEvent.set(event, readRelativeTime(event.text ?? "", event.occurredAt ?? ""));
const coldMicros = ((performance.now() - started) * 1000) / events.size;
// Steady state: the median of three more passes (the gate reads each event once per context).
const passes = [0, 1, 2].map(() => {
  const pass = performance.now();
  for (const event of events.values()) readRelativeTime(event.text ?? "", event.occurredAt ?? "");
  return ((performance.now() - pass) * 1000) / events.size;
});
const micros = passes.sort((a, b) => a - b)[1] as number;

for (const [event, readings] of readingsByEvent) {
  const text = event.text ?? "";
  const taken = readings.filter((reading) => reading.dropped === undefined);
  if (taken.length > 0) turnsWithReadings++;
  for (const reading of taken) {
    if (reading.by === "chrono") chronoTaken++;
    else tableTaken++;
  }
  for (const reading of readings)
    if (reading.dropped !== undefined) {
      const byReason = dropped.get(reading.dropped) ?? new Map<string, number>();
      const written = reading.text.toLowerCase();
      byReason.set(written, (byReason.get(written) ?? 0) + 1);
      dropped.set(reading.dropped, byReason);
    }
  const claimed: Array<[number, number]> = [];
  for (const [category, pattern] of EXPRESSIONS)
    for (const match of text.matchAll(pattern)) {
      const start = match.index ?? 0;
      const end = start + match[0].length;
      if (claimed.some(([s, e]) => s < end && start < e)) continue;
      claimed.push([start, end]);
      // A weekday that labels a written date, or recurs, is no relative expression.
      if (
        category === "weekday" &&
        /^\s*,?\s*\d|every\s+$|each\s+$/iu.test(
          text.slice(end, end + 4) + text.slice(Math.max(0, start - 6), start),
        )
      )
        continue;
      const tally = found.get(category) ?? { count: 0, resolved: 0, missed: new Map<string, number>() };
      tally.count++;
      const hit = taken.some(
        (reading) =>
          reading.start < end &&
          start < reading.end &&
          reading.resolved.days.length +
            reading.resolved.bounds.length +
            reading.resolved.months.length +
            reading.resolved.years.length >
            0,
      );
      if (hit) tally.resolved++;
      else {
        const written = match[0].toLowerCase();
        tally.missed.set(written, (tally.missed.get(written) ?? 0) + 1);
      }
      found.set(category, tally);
    }
}

const top = (counts: Map<string, number>, n = 8) =>
  [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([text, count]) => `"${text}" ${count}`)
    .join(", ");

console.log(
  `relative time bench: ${events.size} turns of ${conversations.length} LoCoMo conversations (${path})`,
);
let total = 0;
let resolvedTotal = 0;
let vague = 0;
for (const [category, tally] of found) {
  total += tally.count;
  resolvedTotal += tally.resolved;
  if (category === "vague") vague += tally.count;
  console.log(
    `  ${category.padEnd(12)} ${String(tally.count).padStart(4)} expressions, ${tally.resolved} resolved${tally.missed.size > 0 ? `; unresolved: ${top(tally.missed)}` : ""}`,
  );
}
const precise = total - vague;
const preciseResolved = resolvedTotal - (found.get("vague")?.resolved ?? 0);
console.log(
  `  resolved: ${preciseResolved} of ${precise} expressions that name a day, week, month or year (${((100 * preciseResolved) / precise).toFixed(1)} %); ${vague} vague ones ("recently", "a few years ago") left unresolved by design`,
);
console.log(
  `  readings taken: ${chronoTaken} chrono-node's, ${tableTaken} the table's, in ${turnsWithReadings} turns`,
);
for (const [reason, counts] of dropped)
  console.log(`  chrono readings dropped (${reason}): ${top(counts, 6)}`);

// Temporal questions (category 2): the dates, months and years of the gold answer that the
// evidence turns hold, with their own day alone (before) and with their relative time (now).
function ownDayOnly(event: SequencedEvent): HeldTokens {
  const held: HeldTokens = { unitNumbers: new Set(), numbers: new Set(), dates: new Set(), ids: new Set() };
  holdMentions(held, extractMentions(event.text ?? "").mentions);
  const day = canonicalDate((event.occurredAt ?? "").slice(0, 10));
  if (day !== null)
    for (const key of [day, monthDayOf(day), monthOf(day)]) if (key !== null) held.dates.add(key);
  return held;
}
const isTimeToken = (mention: Mention) =>
  mention.kind === "date" || (mention.kind === "number" && /^(?:19|20)\d\d$/u.test(mention.number));
let questions = 0;
let heldBefore = 0;
let heldNow = 0;
const notHeld: string[] = [];
for (const conversation of conversations)
  for (const question of conversation.questions) {
    if (question.category !== 2) continue;
    const gold = extractMentions(question.gold).mentions.filter(isTimeToken);
    const evidence = question.evidence
      .map((id) => events.get(`${conversation.id}/${id}`))
      .filter((event): event is SequencedEvent => event !== undefined);
    if (gold.length === 0 || evidence.length === 0) continue;
    questions++;
    const holds = (held: (event: SequencedEvent) => HeldTokens) =>
      gold.every((mention) => evidence.some((event) => holdsMention(held(event), mention)));
    if (holds(ownDayOnly)) heldBefore++;
    if (holds(eventHeldTokens)) heldNow++;
    else notHeld.push(`${conversation.id} "${question.question}" gold "${question.gold}"`);
  }
console.log(
  `  temporal questions with a gold date, month or year: ${questions}; the evidence turns hold it: ${heldBefore} with their own day alone, ${heldNow} with their relative time resolved`,
);
for (const line of notHeld.slice(0, 12)) console.log(`    not held: ${line}`);
console.log(
  `  cost: ${micros.toFixed(1)} µs per turn read, steady state (${coldMicros.toFixed(0)} µs in the first pass; chrono-node only on turns naming a time word)`,
);
// The gate's context over the same turns as fresh event objects, with their occurredAt and without
// it (nothing to resolve), alternating: the first of each, then the median of five more. The first
// dated one resolves every turn; later ones find what a text and its day resolve to remembered.
const all = [...events.values()];
const contextMs = (dated: boolean) => {
  const copies = all.map((event) => {
    const { occurredAt, ...rest } = event;
    return dated ? { ...event } : rest;
  });
  const begin = performance.now();
  buildGateContext(selectInputs(copies, copies.length, DEFAULT_TRUST_POLICY), copies.length);
  return performance.now() - begin;
};
const firstUndated = contextMs(false);
const firstDated = contextMs(true);
const dated: number[] = [];
const undated: number[] = [];
for (let round = 0; round < 5; round++) {
  dated.push(contextMs(true));
  undated.push(contextMs(false));
}
const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
console.log(
  `  the gate's context over all ${all.length} turns: first ${firstDated.toFixed(0)} ms dated, ${firstUndated.toFixed(0)} ms without occurredAt; then ${median(dated).toFixed(0)} ms and ${median(undated).toFixed(0)} ms (${(median(dated) / median(undated)).toFixed(2)}x)`,
);
record({
  bench: "relative-time",
  measures:
    "LoCoMo (5 conversations): relative time expressions resolved against each turn's day, and temporal gold held by its evidence turns",
  figure: `${preciseResolved}/${precise} expressions resolved (${vague} vague left); gold held ${heldNow}/${questions} (own day alone ${heldBefore}); ${micros.toFixed(1)} µs per turn; context ${(median(dated) / median(undated)).toFixed(2)}x undated`,
  goal: "",
  met: null,
});
