import type { Claim, ConflictRef, PendingItem, SequencedEvent } from "#domain/schemas.ts";
import { countTokens } from "#domain/tokens.ts";
import type { OversizedEvent, Recall } from "./recall.ts";
import {
  bare,
  claimLine,
  conflictLine,
  eventLine,
  oneLine,
  pendingLine,
  quoted,
  scopeHeading,
  sourceId,
  type TextVersion,
} from "./recall-text-lines.ts";

/**
 * Recall as an agent reads it in a prompt (CONTRACT §5a "Recall as text"): one line per claim,
 * conflict, task and event, the same shape whether recall serves a summary or the raw events, so
 * an agent's prompt looks alike either way. Pure and deterministic: the same recall renders the
 * same bytes, every claim, task, conflict and event is on exactly one line, and no line holds a
 * line break (texts are JSON strings; other parts are quoted when they would break the grammar).
 * The JSON recall stays the lossless form for machines; this one leaves out what an agent does not
 * read (an event's sequence, a value's kind) and keeps what it does: the words, the structure (key,
 * scope, NOT, contested), who wrote an event, when, and the ids that lead back to the events.
 * Version 2 (the default) does not repeat itself; version 1 stays for readers that parse it.
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
  /** `memgate-recall-text/2` (default) or `/1`. */
  version?: TextVersion | undefined;
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

/** The recall as text lines joined by "\n", ending with a line break. */
export function renderRecallText(recall: Recall, options: RecallTextOptions = {}): string {
  return `${[...bodyLines(recall, versionOf(options)), ...footerLines(recall, options)].join("\n")}\n`;
}

/**
 * The text recall serves (§5a): the rendering with its last note `# served: N tokens`, N counting
 * the whole text, that note included (cl100k_base).
 */
export function renderServedRecallText(
  recall: Recall,
  options: RecallTextOptions = {},
): { text: string; tokens: number } {
  const lines = [...bodyLines(recall, versionOf(options)), ...footerLines(recall, options)];
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

const versionOf = (options: RecallTextOptions): TextVersion => options.version ?? 2;

function servedNote(tokens: number): string {
  return `# served: ${tokens} tokens\n`;
}

/**
 * The day shown beside a served claim or pending item (text version 2): the day of its newest
 * source, for what changes over time (see `servedDays` in recall-index.ts). Kept per frozen item
 * of a served artifact, as the item itself is shared by every recall serving it.
 */
const shownDays = new WeakMap<object, string>();

/** Remembers the days of an artifact's claims and pending items (aligned with them), for its text. */
export function showDays(
  body: { claims: readonly Claim[]; pending: readonly PendingItem[] },
  days: { claims: ReadonlyArray<string | null>; pending: ReadonlyArray<string | null> },
): void {
  body.claims.forEach((claim, i) => {
    const day = days.claims[i];
    if (day) shownDays.set(claim, day);
  });
  body.pending.forEach((item, i) => {
    const day = days.pending[i];
    if (day) shownDays.set(item, day);
  });
}

/** The day shown beside a claim or pending item, null when none. */
export function shownDay(item: Claim | PendingItem): string | null {
  return shownDays.get(item) ?? null;
}

/**
 * What one item costs in the text, its line break included. The text's tokens are the sum of its
 * lines' tokens: no line is empty, every line ends with LF and the next starts with no white
 * space, so cl100k_base's pre-tokeniser never joins two lines into one piece. In version 2 a claim
 * costs its line with its key (a claim sharing the key above it costs less when rendered).
 */
export function textItemTokens<S extends RecallSection>(
  section: S,
  item: RecallSectionItems[S],
  version: TextVersion = 2,
): number {
  return countTokens(`${itemLine(section, item, version)}\n`);
}

/** What a section's heading costs, paid once with its first item. */
export function textHeadingTokens(section: RecallSection): number {
  return countTokens(`## ${section}\n`);
}

/**
 * The group a claim is served under in version 2 (its scope, with the heading naming it; the
 * global scope has none), with what that heading costs, paid once with its first claim.
 */
export function textGroup<S extends RecallSection>(
  section: S,
  item: RecallSectionItems[S],
  version: TextVersion,
): { group: string; tokens: number } | null {
  if (version !== 2 || section !== "claims") return null;
  const { scope } = item as Claim;
  if (scope === "global") return null;
  let tokens = headingTokens.get(scope);
  if (tokens === undefined) {
    tokens = countTokens(`${scopeHeading(scope)}\n`);
    if (headingTokens.size > 10_000) headingTokens.clear();
    headingTokens.set(scope, tokens);
  }
  return { group: scope, tokens };
}

/** What each scope's heading costs, counted once (a budget offers many claims of one scope). */
const headingTokens = new Map<string, number>();

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

const ITEM_LINE: { [S in RecallSection]: (item: RecallSectionItems[S], version: TextVersion) => string } = {
  summary: (summary) => quoted(summary),
  claims: (claim, version) => claimLine(claim, version, { day: shownDay(claim) }),
  conflicts: conflictLine,
  tasks: (item, version) => pendingLine(item, version, shownDay(item)),
  tail: eventLine,
  events: eventLine,
  matches: eventLine,
};

function itemLine<S extends RecallSection>(
  section: S,
  item: RecallSectionItems[S],
  version: TextVersion,
): string {
  if (typeof item !== "object" || !Object.isFrozen(item)) return ITEM_LINE[section](item, version);
  // A frozen item (a served artifact's claim, task or conflict, a stored event: every recall
  // serving it shares it) renders to the same line every time: rendered once per version.
  const rendered = renderedLines[version][section];
  let line = rendered.get(item);
  if (line === undefined) {
    line = ITEM_LINE[section](item, version);
    rendered.set(item, line);
  }
  return line;
}
const linesMemo = (): { [S in RecallSection]: WeakMap<object, string> } => ({
  summary: new WeakMap(),
  claims: new WeakMap(),
  conflicts: new WeakMap(),
  tasks: new WeakMap(),
  tail: new WeakMap(),
  events: new WeakMap(),
  matches: new WeakMap(),
});
const renderedLines = { 1: linesMemo(), 2: linesMemo() };

function bodyLines(recall: Recall, version: TextVersion): string[] {
  const lines: string[] = [headerLine(recall)];
  section(
    lines,
    "summary",
    recall.summary === null || recall.summary === "" ? [] : [recall.summary],
    version,
  );
  if (version === 1) section(lines, "claims", recall.claims, version);
  else claimGroups(lines, recall.claims);
  section(lines, "conflicts", recall.unresolvedConflicts, version);
  section(lines, "tasks", recall.pending, version);
  section(lines, "tail", recall.tail, version);
  section(lines, "events", recall.events, version);
  section(lines, "matches", recall.cold, version);
  return lines;
}

function section<S extends RecallSection>(
  lines: string[],
  name: S,
  items: readonly RecallSectionItems[S][],
  version: TextVersion,
): void {
  if (items.length === 0) return;
  lines.push(`## ${name}`, ...items.map((item) => itemLine(name, item, version)));
}

/**
 * Version 2's claims: the global ones first, then each other scope under `### SCOPE`, scopes in
 * the order their first claim comes, claims in the artifact's order within each; a claim whose key
 * is the key of the claim above it (neither served by its text alone) writes `-` for it.
 */
function claimGroups(lines: string[], claims: readonly Claim[]): void {
  if (claims.length === 0) return;
  const groups = new Map<string, Claim[]>([["global", []]]);
  for (const claim of claims) {
    const group = groups.get(claim.scope);
    if (group) group.push(claim);
    else groups.set(claim.scope, [claim]);
  }
  lines.push("## claims");
  for (const [scope, members] of groups) {
    if (members.length === 0) continue;
    if (scope !== "global") lines.push(scopeHeading(scope));
    let keyAbove: string | null = null;
    for (const claim of members) {
      const line = itemLine("claims", claim, 2);
      const keyed = !line.startsWith('"');
      if (keyed && keyAbove === claim.key)
        lines.push(claimLine(claim, 2, { day: shownDay(claim), sameKeyAbove: true }));
      else lines.push(line);
      keyAbove = keyed ? claim.key : null;
    }
  }
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
  const short = recall.budgetBelowFrame;
  if (short !== null)
    lines.push(
      `# the budget of ${short.budget} tokens is below what the header and notes alone need: ${short.needed}`,
    );
  if (recall.mode === "summary" && recall.artifactId !== null) {
    const hint = oneLine(options.searchHint ?? DEFAULT_SEARCH_HINT);
    const layer = "coldInputs" in options ? options.coldInputs : recall.coldInputs;
    // A cold input a query served (## matches) is shown: the note counts the others.
    const shown = recall.cold.length - recall.citedMatches;
    const cold = layer === undefined || layer === null ? null : Math.max(0, layer - shown);
    if (cold === null)
      lines.push(`# cold: inputs the summary left cold are not shown; search them with ${hint}`);
    else if (cold > 0)
      lines.push(`# cold: ${cold} input${cold === 1 ? "" : "s"} not shown; search them with ${hint}`);
  }
  return lines;
}
