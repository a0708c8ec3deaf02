import type { Claim, ConflictRef, PendingItem, SequencedEvent, ValueData } from "#domain/schemas.ts";
import { countTokens } from "#domain/tokens.ts";
import type { OversizedEvent, Recall } from "./recall.ts";

/**
 * Recall as an agent reads it in a prompt (CONTRACT §5a "Recall as text"): one line per claim,
 * conflict, task and event, the same shape whether recall serves a summary or the raw events, so
 * an agent's prompt looks alike either way. Pure and deterministic: the same recall renders the
 * same bytes, every claim, task, conflict and event is on exactly one line, and no line holds a
 * line break (texts are JSON strings; other parts are quoted when they would break the grammar).
 * The JSON recall stays the lossless form for machines; this one leaves out what an agent does not
 * read (an event's source and sequence, a value's kind) and keeps what it does: the words, the
 * structure (key, scope, NOT, contested) and the ids that lead back to the events.
 */

export interface RecallTextOptions {
  /**
   * How many valid inputs of the served summary no claim or task derives from (its cold layer);
   * null when the caller could not count them. Only read in summary mode. Default: the recall's
   * own `coldInputs`.
   */
  coldInputs?: number | null;
  /** How the reader searches the cold layer, in its interface's words (default: all three named). */
  searchHint?: string | undefined;
}

/** The sections of the text, in their order, with what each one's items are. */
export interface RecallSectionItems {
  summary: string;
  claims: Claim;
  conflicts: ConflictRef;
  tasks: PendingItem;
  tail: SequencedEvent;
  events: SequencedEvent;
  matches: SequencedEvent;
}
export type RecallSection = keyof RecallSectionItems;

export const DEFAULT_SEARCH_HINT = "recall with a query (CLI --query WORDS, HTTP ?query=WORDS, MCP query)";

/** What separates a claim's or event's head from its value, and the value from its sources. */
const HEAD_END = ": ";
const SOURCES = " ← ";
const CLAIM_TEXT = " — ";
const CONTESTED = " (contested)";
/** A claim restating an earlier reading (selector v3): ` (earlier)` or ` (earlier, ASOF)`. */
const EARLIER = " (earlier";
const ASSERTION_SEPARATOR = "; ";

/** Line breaks and other characters that end a line in some reader; never written raw. */
const LINE_BREAKING = /[\p{Cc}\u2028\u2029]/u;
/** An event id as CONTRACT §1 allows it: written bare, since it holds no separator. */
const BARE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** The recall as text lines joined by "\n", ending with a line break. */
export function renderRecallText(recall: Recall, options: RecallTextOptions = {}): string {
  return `${[...bodyLines(recall), ...footerLines(recall, options)].join("\n")}\n`;
}

/**
 * The text recall serves (§5a): the rendering with its last note `# served: N tokens`, N counting
 * the whole text, that note included (cl100k_base).
 */
export function renderServedRecallText(
  recall: Recall,
  options: RecallTextOptions = {},
): { text: string; tokens: number } {
  const lines = [...bodyLines(recall), ...footerLines(recall, options)];
  const text = `${lines.join("\n")}\n`;
  // The sum of its lines' (see textItemTokens): each line counted once by the memo, not the whole
  // text on every recall that serves it.
  let base = 0;
  for (const line of lines) base += countTokens(`${line}\n`);
  // The note's own tokens depend on its number's digits: grow N until it counts itself.
  let tokens = base + countTokens(servedNote(base));
  for (let next = base + countTokens(servedNote(tokens)); next !== tokens; ) {
    tokens = next;
    next = base + countTokens(servedNote(tokens));
  }
  return { text: `${text}${servedNote(tokens)}`, tokens };
}

function servedNote(tokens: number): string {
  return `# served: ${tokens} tokens\n`;
}

/**
 * What one item costs in the text, its line break included. The text's tokens are the sum of its
 * lines' tokens: no line is empty, every line ends with LF and the next starts with no white
 * space, so cl100k_base's pre-tokeniser never joins two lines into one piece.
 */
export function textItemTokens<S extends RecallSection>(section: S, item: RecallSectionItems[S]): number {
  return countTokens(`${itemLine(section, item)}\n`);
}

/** What a section's heading costs, paid once with its first item. */
export function textHeadingTokens(section: RecallSection): number {
  return countTokens(`## ${section}\n`);
}

/**
 * The most the lines that are neither items nor headings can cost in the text of `frame` (a
 * recall with no items yet): its first line and each note at its longest, with `worst`'s cursor,
 * `worst`'s omitted counts and a served count of `limit`. A budget spent on items after this
 * cannot be exceeded by the text.
 */
export function textFrameTokens(
  frame: Recall,
  worst: { cursor: string | null; omitted: Recall["omitted"]; limit: number },
  options: RecallTextOptions = {},
): number {
  const longest = { ...frame, nextCursor: worst.cursor, omitted: worst.omitted };
  return countTokens(renderRecallText(longest, options)) + countTokens(servedNote(worst.limit));
}

/** What the note naming an event skipped as too large for the budget costs, its line break included. */
export function textSkippedTokens(event: OversizedEvent): number {
  return countTokens(`${skippedLine([event])}\n`);
}

/**
 * `# skipped, larger than the budget leaves a page: ID (N tokens)`: events no page can serve
 * within the budget, which the cursor moves past (recall with a larger budget, or none, to read
 * them).
 */
function skippedLine(events: readonly OversizedEvent[]): string {
  const named = events.map((event) => `${sourceId(event.eventId)} (${event.tokens} tokens)`);
  return `# skipped, larger than the budget leaves a page: ${named.join(", ")}`;
}

const ITEM_LINE: { [S in RecallSection]: (item: RecallSectionItems[S]) => string } = {
  summary: (summary) => quoted(summary),
  claims: claimLine,
  conflicts: conflictLine,
  tasks: pendingLine,
  tail: eventLine,
  events: eventLine,
  matches: eventLine,
};

function itemLine<S extends RecallSection>(section: S, item: RecallSectionItems[S]): string {
  if (typeof item !== "object" || !Object.isFrozen(item)) return ITEM_LINE[section](item);
  // A frozen item (a served artifact's claim, task or conflict: every recall serving it shares
  // it) renders to the same line every time: rendered once.
  const rendered = renderedLines[section];
  let line = rendered.get(item);
  if (line === undefined) {
    line = ITEM_LINE[section](item);
    rendered.set(item, line);
  }
  return line;
}
const renderedLines: { [S in RecallSection]: WeakMap<object, string> } = {
  summary: new WeakMap(),
  claims: new WeakMap(),
  conflicts: new WeakMap(),
  tasks: new WeakMap(),
  tail: new WeakMap(),
  events: new WeakMap(),
  matches: new WeakMap(),
};

function bodyLines(recall: Recall): string[] {
  const lines: string[] = [headerLine(recall)];
  section(lines, "summary", recall.summary === null || recall.summary === "" ? [] : [recall.summary]);
  section(lines, "claims", recall.claims);
  section(lines, "conflicts", recall.unresolvedConflicts);
  section(lines, "tasks", recall.pending);
  section(lines, "tail", recall.tail);
  section(lines, "events", recall.events);
  section(lines, "matches", recall.cold);
  return lines;
}

function section<S extends RecallSection>(
  lines: string[],
  name: S,
  items: readonly RecallSectionItems[S][],
): void {
  if (items.length === 0) return;
  lines.push(`## ${name}`, ...items.map((item) => itemLine(name, item)));
}

function headerLine(recall: Recall): string {
  const clock = [
    `clock ${recall.highWater}`,
    `epoch ${recall.inputEpoch}`,
    ...(recall.scope === null ? [] : [`scope ${quoted(recall.scope)}`]),
  ].join(", ");
  if (recall.mode === "summary")
    return `# memgate recall: summary ${bare(recall.artifactId ?? "", [" ("])} (${clock})`;
  return `# memgate recall: raw (${clock}): ${oneLine(recall.reason)}`;
}

/** `KEY [SCOPE]: [NOT ]VALUE[ (contested)| (earlier[, ASOF])][ — "TEXT"] ← ID, ID` (scope left out when global). */
function claimLine(claim: Claim): string {
  const value = valueText(claim.value);
  const said = claim.text !== undefined && saysMore(claim.text, [value, claim.key, claim.scope]);
  return [
    head(claim.key, claim.scope),
    HEAD_END,
    claim.polarity === "negated" ? "NOT " : "",
    value,
    claim.status === "contested" ? CONTESTED : "",
    claim.status === "earlier" ? `${EARLIER}${claim.asOf === undefined ? "" : `, ${claim.asOf}`})` : "",
    said ? `${CLAIM_TEXT}${quoted(claim.text ?? "")}` : "",
    sources(claim.derivedFrom),
  ].join("");
}

/** `KEY [SCOPE] ← MEMBER, MEMBER`: a key whose positions are disputed; no winner is picked. */
function conflictLine(conflict: ConflictRef): string {
  return `${head(conflict.key, conflict.scope)}${sources(conflict.members)}`;
}

/** `task open: "TEXT" ← ID`: a pending item reads as the open task event it restates. */
function pendingLine(item: PendingItem): string {
  return `task open${HEAD_END}${quoted(item.text)}${sources(item.derivedFrom)}`;
}

/**
 * `KIND[ STATUS][ TRUST][ DATE]: "TEXT"[ {ASSERTION; ASSERTION}] ← ID`: the task's status, the trust
 * when not "user", the day it occurred, and its assertions in a claim's shape (`KEY [SCOPE]: [NOT
 * ]VALUE`): the exact statements the agent wrote, which a summary restates as claims.
 */
function eventLine(event: SequencedEvent): string {
  const parts: string[] = [event.kind];
  if (event.kind === "task") parts.push(event.taskStatus ?? "open");
  if (event.trust !== "user") parts.push(event.trust);
  if (event.occurredAt !== undefined) parts.push(dayOf(event.occurredAt));
  const assertions = (event.assertions ?? []).map(
    (assertion) =>
      `${head(assertion.key, assertion.scope)}${HEAD_END}${assertion.polarity === "negated" ? "NOT " : ""}${valueText(assertion.value)}`,
  );
  return [
    parts.join(" "),
    HEAD_END,
    quoted(event.text ?? ""),
    assertions.length > 0 ? ` {${assertions.join(ASSERTION_SEPARATOR)}}` : "",
    sources([event.eventId]),
  ].join("");
}

function footerLines(recall: Recall, options: RecallTextOptions): string[] {
  const lines: string[] = [];
  if (recall.nextCursor !== null) lines.push(`# more: cursor ${recall.nextCursor}`);
  const { omitted } = recall;
  if (omitted.oversized.length > 0) lines.push(skippedLine(omitted.oversized));
  const left = [
    omitted.claims > 0 ? `${omitted.claims} claims` : "",
    omitted.pending > 0 ? `${omitted.pending} tasks` : "",
    omitted.unresolvedConflicts > 0 ? `${omitted.unresolvedConflicts} conflicts` : "",
    omitted.summary ? "the summary" : "",
    omitted.cold > 0 ? `${omitted.cold} matches` : "",
  ].filter(Boolean);
  if (left.length > 0) lines.push(`# left out by the budget: ${left.join(", ")}`);
  if (recall.mode === "summary" && recall.artifactId !== null) {
    const hint = oneLine(options.searchHint ?? DEFAULT_SEARCH_HINT);
    const cold = "coldInputs" in options ? options.coldInputs : recall.coldInputs;
    if (cold === undefined || cold === null)
      lines.push(`# cold: inputs the summary left cold are not shown; search them with ${hint}`);
    else if (cold > 0)
      lines.push(`# cold: ${cold} input${cold === 1 ? "" : "s"} not shown; search them with ${hint}`);
  }
  return lines;
}

function head(key: string, scope: string): string {
  const name = bare(key, [HEAD_END, " [", SOURCES], ["#"]);
  return scope === "global" ? name : `${name} [${bare(scope, ["]"])}]`;
}

function sources(ids: readonly string[]): string {
  return `${SOURCES}${ids.map(sourceId).join(", ")}`;
}

function sourceId(id: string): string {
  return BARE_ID.test(id) ? id : quoted(id);
}

/** A value as an agent reads it: text quoted, the other kinds bare. */
function valueText(value: ValueData): string {
  const plain = (text: string) =>
    bare(text, [SOURCES, CLAIM_TEXT, CONTESTED, EARLIER, ASSERTION_SEPARATOR, "}"], ["NOT "]);
  if ("text" in value) return quoted(value.text);
  if ("bool" in value) return String(value.bool);
  if ("quantity" in value)
    return plain(value.unit === undefined ? value.quantity : `${value.quantity} ${value.unit}`);
  if ("date" in value) return plain(value.date);
  if ("entity" in value) return plain(value.entity);
  return plain(value.scopes.length === 0 ? "(none)" : value.scopes.join(", "));
}

/**
 * A JSON string literal that also escapes U+0085, U+2028 and U+2029 (JSON.stringify leaves them
 * raw, and some readers end a line there): still valid JSON, parsing to the same text.
 */
function quoted(text: string): string {
  return JSON.stringify(text).replace(
    /[\u0085\u2028\u2029]/gu,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/**
 * Written as is, or quoted (a JSON string) when it is empty, has white space at either end, starts
 * with a quote, breaks a line, holds one of the separators of its place (also with a space appended:
 * what follows a part starts with one, and "k:" before " [" would read as "k" and ": "), or starts
 * with one of the prefixes its place reads (a key "# …" would read as a heading, a value "NOT …" as
 * negated).
 */
function bare(text: string, separators: readonly string[], prefixes: readonly string[] = []): string {
  const unsafe =
    text === "" ||
    text !== text.trim() ||
    text.startsWith('"') ||
    LINE_BREAKING.test(text) ||
    separators.some((separator) => `${text} `.includes(separator)) ||
    prefixes.some((prefix) => text.startsWith(prefix));
  return unsafe ? quoted(text) : text;
}

/** Prose that is not a quoted part (a reason, a hint): line breaks folded to spaces. */
function oneLine(text: string): string {
  return text.replace(/[\p{Cc}\u2028\u2029]+/gu, " ").trim();
}

/** The calendar day of an occurredAt as written (the writer's own day): its schema starts every one with it. */
function dayOf(occurredAt: string): string {
  return occurredAt.slice(0, 10);
}

const WORD = /[\p{L}\p{N}]+/gu;
const HAN = /\p{Script=Han}/u;

/** The words of a text, NFKC and lower-cased; each Han character is a word of its own. */
function words(text: string): string[] {
  return (text.normalize("NFKC").toLowerCase().match(WORD) ?? []).flatMap((word) =>
    HAN.test(word) ? [...word] : [word],
  );
}

/**
 * Whether a claim's text says more than its value, key and scope already do: it holds a word
 * (letters or digits; a Han character alone) none of them holds. A text that only repeats the
 * value is left out of the line.
 */
function saysMore(text: string, alreadySaid: readonly string[]): boolean {
  const said = new Set(alreadySaid.flatMap(words));
  return words(text).some((word) => !said.has(word));
}
