import type { Claim, ConflictRef, PendingItem, SequencedEvent, ValueData } from "#domain/schemas.ts";

/**
 * The item lines of recall's text (CONTRACT §5a), in both versions: `memgate-recall-text/1` (one
 * self-contained line per item) and `/2` (what an agent reads does not repeat itself: claims grouped
 * under their scope, a key shared by consecutive claims written once, a claim whose text says what
 * it is about served by its text, event ids in compact runs, every event with its author, and the
 * day of what changes over time). Pure and deterministic; no line holds a line break.
 */
export type TextVersion = 1 | 2;

/** What separates a claim's or event's head from its value, and the value from its sources. */
export const HEAD_END = ": ";
const SOURCES = " ← ";
const CLAIM_TEXT = " — ";
const CONTESTED = " (contested)";
/** A claim restating an earlier reading (selector v3): ` (earlier)` or ` (earlier, ASOF)`. */
const EARLIER = " (earlier";
const ASSERTION_SEPARATOR = "; ";
/** Version 2: a claim whose key is the one of the claim above it in its group. */
export const SAME_KEY = "-";

/** Line breaks and other characters that end a line in some reader; never written raw. */
const LINE_BREAKING = /[\p{Cc}\u2028\u2029]/u;
/** An event id as CONTRACT §1 allows it: written bare, since it holds no separator. */
const BARE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** Where a claim stands in its group, for version 2: its day, and whether the claim above has its key. */
export interface ClaimPlace {
  day?: string | null | undefined;
  sameKeyAbove?: boolean;
}

/**
 * Version 1: `KEY [SCOPE]: [NOT ]VALUE[ (contested)| (earlier[, ASOF])][ — "TEXT"] ← ID, ID`.
 * Version 2 (the scope on its group's heading): `"TEXT"[ (DAY)] ← IDS` when the claim is affirmed
 * and settled and its text holds every word of its value and of its key (but words of its sources'
 * ids, and `memory`); otherwise `KEY|-: [NOT ]VALUE[ (contested)| (earlier[, ASOF])][ (DAY)][ —
 * "TEXT"] ← IDS`.
 */
export function claimLine(claim: Claim, version: TextVersion, place: ClaimPlace = {}): string {
  const value = valueText(claim.value, version);
  const said = claim.text !== undefined && saysMore(claim.text, [value, claim.key, claim.scope]);
  const day = version === 2 && place.day ? ` (${place.day})` : "";
  if (version === 2) {
    const alone = textAlone(claim);
    if (alone !== null) return `${quoted(alone)}${day}${sources(claim.derivedFrom, version)}`;
  }
  const head =
    version === 1
      ? headOf(claim.key, claim.scope)
      : place.sameKeyAbove
        ? SAME_KEY
        : keyText(claim.key, version);
  return [
    head,
    HEAD_END,
    claim.polarity === "negated" ? "NOT " : "",
    value,
    claim.status === "contested" ? CONTESTED : "",
    claim.status === "earlier" ? `${EARLIER}${claim.asOf === undefined ? "" : `, ${claim.asOf}`})` : "",
    day,
    said ? `${CLAIM_TEXT}${quoted(claim.text ?? "")}` : "",
    sources(claim.derivedFrom, version),
  ].join("");
}

/**
 * The text a version 2 claim is served by alone, or null: an affirmed, settled claim whose text
 * (its `text`, or its `{text}` value) holds every word of its value and of its key, so neither says
 * more. Words of its sources' ids and the word `memory` (keys made from an event id) need no saying.
 */
export function textAlone(claim: Claim): string | null {
  if (claim.polarity !== "affirmed" || claim.status !== "settled") return null;
  const text = claim.text ?? ("text" in claim.value ? claim.value.text : undefined);
  if (text === undefined || text.trim() === "") return null;
  const held = new Set(words(text));
  const free = new Set(["memory", ...claim.derivedFrom.flatMap(words)]);
  const value = "text" in claim.value ? claim.value.text : valueText(claim.value, 2);
  return [...words(value), ...words(claim.key)].every((word) => held.has(word) || free.has(word))
    ? text
    : null;
}

/** `KEY [SCOPE] ← MEMBER, MEMBER`: a key whose positions are disputed; no winner is picked. */
export function conflictLine(conflict: ConflictRef, version: TextVersion): string {
  return `${headOf(conflict.key, conflict.scope)}${sources(conflict.members, version)}`;
}

/**
 * Version 1: `task open: "TEXT" ← ID`: a pending item reads as the open task event it restates.
 * Version 2 (every item of the section is an open task): `"TEXT"[ (DAY)] ← IDS`.
 */
export function pendingLine(item: PendingItem, version: TextVersion, day?: string | null): string {
  if (version === 1) return `task open${HEAD_END}${quoted(item.text)}${sources(item.derivedFrom, version)}`;
  return `${quoted(item.text)}${day ? ` (${day})` : ""}${sources(item.derivedFrom, version)}`;
}

/**
 * `KIND[ STATUS][ TRUST][ DAY][ SOURCE]: "TEXT"[ {ASSERTION; ASSERTION}] ← ID`: the task's status,
 * the trust when not "user", the day it occurred, from version 2 who wrote it (its `source`), and
 * its assertions in a claim's shape (`KEY [SCOPE]: [NOT ]VALUE`).
 */
export function eventLine(event: SequencedEvent, version: TextVersion): string {
  const parts: string[] = [event.kind];
  if (event.kind === "task") parts.push(event.taskStatus ?? "open");
  if (event.trust !== "user") parts.push(event.trust);
  if (event.occurredAt !== undefined) parts.push(dayOf(event.occurredAt));
  if (version === 2 && event.source !== undefined) parts.push(sourceText(event.source));
  const assertions = (event.assertions ?? []).map(
    (assertion) =>
      `${headOf(assertion.key, assertion.scope)}${HEAD_END}${assertion.polarity === "negated" ? "NOT " : ""}${valueText(assertion.value, version)}`,
  );
  return [
    parts.join(" "),
    HEAD_END,
    quoted(event.text ?? ""),
    assertions.length > 0 ? ` {${assertions.join(ASSERTION_SEPARATOR)}}` : "",
    sources([event.eventId], version),
  ].join("");
}

/** A version 2 claims group's heading: `### SCOPE`. */
export function scopeHeading(scope: string): string {
  return `### ${bare(scope, [])}`;
}

/** `KEY [SCOPE]` (scope left out when global). */
function headOf(key: string, scope: string): string {
  const name = keyText(key, 1);
  return scope === "global" ? name : `${name} [${bare(scope, ["]"])}]`;
}

function keyText(key: string, version: TextVersion): string {
  // Version 2 reads a key `-` as the key above: such a key is quoted.
  if (version === 2 && (key === SAME_KEY || key.startsWith(`${SAME_KEY} `))) return quoted(key);
  return bare(key, [HEAD_END, " [", SOURCES], ["#"]);
}

const STATUS_OR_TRUST = new Set(["open", "done", "verified", "user", "tool", "untrusted"]);

/** Who wrote an event, bare when it reads as one word that is no status, trust or day; else quoted. */
function sourceText(source: string): string {
  const plain =
    /^[^\s"]+$/u.test(source) &&
    !source.endsWith(":") &&
    !STATUS_OR_TRUST.has(source) &&
    !/^\d{4}-\d{2}-\d{2}/.test(source) &&
    !LINE_BREAKING.test(source);
  return plain ? source : quoted(source);
}

/**
 * ` ← IDS`. Version 1: each id (quoted when it is no event id), joined by ", ". Version 2: the ids
 * in natural order, those sharing everything but their last number written once with their numbers
 * in braces, runs of three or more consecutive numbers as `a..b` (`D1:{3..5,9}`, `ana-{2,7}`,
 * `emily-2023-05-04-{1,3..5}-u`); an id no brace form can hold (quoted, or a last number with
 * leading zeros) stands alone.
 */
export function sources(ids: readonly string[], version: TextVersion): string {
  return `${SOURCES}${version === 1 ? ids.map(sourceId).join(", ") : compactIds(ids)}`;
}

export function sourceId(id: string): string {
  return BARE_ID.test(id) ? id : quoted(id);
}

/** An id's last run of digits (no leading zero), with what comes before and after it. */
const NUMBERED = /^(.*[^0-9])(0|[1-9][0-9]{0,14})([^0-9]*)$/;

function compactIds(ids: readonly string[]): string {
  const parts = [...new Set(ids)].map((id) => {
    const numbered = BARE_ID.test(id) ? NUMBERED.exec(id) : null;
    return numbered
      ? { id, prefix: numbered[1] as string, suffix: numbered[3] as string, number: Number(numbered[2]) }
      : { id, prefix: null, suffix: "", number: 0 };
  });
  const sameRun = (a: (typeof parts)[number], b: (typeof parts)[number] | undefined) =>
    b !== undefined && a.prefix !== null && a.prefix === b.prefix && a.suffix === b.suffix;
  parts.sort((a, b) =>
    sameRun(a, b)
      ? a.number - b.number
      : (a.prefix ?? a.id) !== (b.prefix ?? b.id)
        ? (a.prefix ?? a.id) < (b.prefix ?? b.id)
          ? -1
          : 1
        : a.prefix === null || b.prefix === null
          ? (a.prefix === null ? 1 : 0) - (b.prefix === null ? 1 : 0)
          : a.suffix < b.suffix
            ? -1
            : 1,
  );
  const written: string[] = [];
  for (let i = 0; i < parts.length; ) {
    const part = parts[i] as (typeof parts)[number];
    let end = i + 1;
    while (sameRun(part, parts[end])) end++;
    written.push(
      part.prefix === null || end - i === 1
        ? sourceId(part.id)
        : `${part.prefix}{${numberRuns(parts.slice(i, end).map((p) => p.number))}}${part.suffix}`,
    );
    i = end;
  }
  return written.join(", ");
}

/** Ascending numbers with runs of three or more consecutive ones as `a..b`. */
function numberRuns(numbers: readonly number[]): string {
  const out: string[] = [];
  for (let i = 0; i < numbers.length; ) {
    let end = i;
    while (end + 1 < numbers.length && (numbers[end + 1] as number) === (numbers[end] as number) + 1) end++;
    if (end - i >= 2) out.push(`${numbers[i]}..${numbers[end]}`);
    else for (let k = i; k <= end; k++) out.push(String(numbers[k]));
    i = end + 1;
  }
  return out.join(",");
}

/** A value as an agent reads it: text quoted, the other kinds bare. */
export function valueText(value: ValueData, version: TextVersion): string {
  const separators = [SOURCES, CLAIM_TEXT, CONTESTED, EARLIER, ASSERTION_SEPARATOR, "}"];
  // Version 2 writes a day after a value as ` (DAY)`: a bare value never holds ` (` before a digit.
  const plain = (text: string) =>
    version === 2 && / \(\d/.test(`${text} `) ? quoted(text) : bare(text, separators, ["NOT "]);
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
export function quoted(text: string): string {
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
export function bare(text: string, separators: readonly string[], prefixes: readonly string[] = []): string {
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
export function oneLine(text: string): string {
  return text.replace(/[\p{Cc}\u2028\u2029]+/gu, " ").trim();
}

/** The calendar day of an occurredAt as written (the writer's own day): its schema starts every one with it. */
export function dayOf(occurredAt: string): string {
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
