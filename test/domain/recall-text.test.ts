import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { itemlessRecall, type Recall } from "#app/recall.ts";
import { renderRecallText, renderServedRecallText, textSkippedTokens } from "#app/recall-text.ts";
import type { Claim, SequencedEvent, ValueData } from "#domain/schemas.ts";
import { countTokens } from "#domain/tokens.ts";
import { settled } from "../support/builders.ts";

/**
 * Recall as text (CONTRACT §5a): the contract's example renders exactly, each part is written as
 * the grammar says, and over random recalls (keys, scopes and texts full of separators, quotes and
 * line breaks) a reader written from the contract alone finds every claim, task, conflict and event
 * exactly once with its structure, no line holds a line break, and rendering is deterministic.
 */

function recallOf(parts: Partial<Recall>): Recall {
  return {
    ...itemlessRecall({
      mode: "summary",
      reason: "summary s covers through 1",
      highWater: 1,
      inputEpoch: 0,
      artifactId: "summary:s:1:a",
      scope: null,
      coldInputs: null,
    }),
    ...parts,
  };
}

function claim(key: string, value: ValueData, more: Partial<Claim> = {}): Claim {
  return settled(key, value, more.derivedFrom ?? ["e-1"], more);
}

function event(eventId: string, sequence: number, more: Partial<SequencedEvent> = {}): SequencedEvent {
  return {
    eventId,
    sequence,
    kind: "fact",
    trust: "user",
    text: `text of ${eventId}`,
    ...more,
  } as SequencedEvent;
}

describe("recall as text: examples", () => {
  it("renders the contract's example exactly", () => {
    const contract = readFileSync(join(import.meta.dirname, "../../docs/CONTRACT.md"), "utf8");
    const start = contract.indexOf("    # memgate recall: summary summary:ana:56:k3");
    const block = contract.slice(start, contract.indexOf("\n\n", start));
    const expected = `${block
      .split("\n")
      .map((line) => line.slice(4))
      .join("\n")}\n`;
    const recall = recallOf({
      artifactId: "summary:ana:56:k3",
      highWater: 58,
      inputEpoch: 2,
      summary: "Ana's payments-sre on-call rotation, ack SLAs and bot scopes.",
      claims: [
        claim(
          "oncall.ack_sla.sev1",
          { quantity: "5", unit: "minute" },
          {
            scope: "rotation:payments-sre",
            text: "5 minute",
            derivedFrom: ["ana-2"],
          },
        ),
        claim(
          "bot.deploy-bot.scopes",
          { scopes: ["deploy:prod"] },
          {
            scope: "org:payments",
            polarity: "negated",
            text: "prod still needs a human to approve the sync in Argo",
            derivedFrom: ["ana-7"],
          },
        ),
        claim(
          "backup.bucket_size",
          { quantity: "4.6", unit: "TB" },
          {
            scope: "bucket:pay-backups-prod",
            status: "contested",
            derivedFrom: ["ana-22"],
          },
        ),
        claim("memory:ana-4", { text: "Don't page Marta directly for SEV2s." }, { derivedFrom: ["ana-4"] }),
      ],
      unresolvedConflicts: [
        { key: "backup.bucket_size", scope: "bucket:pay-backups-prod", members: ["ana-22", "ana-51"] },
      ],
      pending: [{ text: "SRE-1452: alert on replication slot growth by Dec 18.", derivedFrom: ["ana-54"] }],
      tail: [
        event("ana-57", 57, {
          trust: "tool",
          occurredAt: "2026-12-04T09:10:00+00:00",
          text: "Replica lag on eu-west-1b is ~5 s during the batch.",
          assertions: [
            {
              key: "db.replica_lag",
              scope: "az:eu-west-1b",
              value: { quantity: "5", unit: "s" },
              polarity: "affirmed",
            },
          ],
        }),
      ],
    });
    expect(renderRecallText(recall, { version: 1, coldInputs: 9 })).toBe(expected);
  });

  it("raw mode: the reason on the first line (line breaks folded), the scope asked for, events in one shape", () => {
    const text = renderRecallText(
      recallOf({
        mode: "raw",
        reason: "recall bypass is on:\nraw events only",
        artifactId: null,
        scope: "project:alpha",
        events: [
          event("t-1", 1, { kind: "task", taskStatus: "open", text: "Send INV-20931\nby Friday" }),
          event("n-2", 2, { kind: "note", trust: "verified", occurredAt: "2026-11-20" }),
        ],
        nextCursor: "eyJhZnRlciI6Mn0",
      }),
      { coldInputs: 4, version: 1 },
    );
    expect(text).toBe(
      [
        '# memgate recall: raw (clock 1, epoch 0, scope "project:alpha"): recall bypass is on: raw events only',
        "## events",
        'task open: "Send INV-20931\\nby Friday" ← t-1',
        'note verified 2026-11-20: "text of n-2" ← n-2',
        "# more: cursor eyJhZnRlciI6Mn0",
        "",
      ].join("\n"),
    );
  });

  it("a claim's text is shown only when it says more than its value, key and scope", () => {
    const lines = renderRecallText(
      recallOf({
        claims: [
          claim("handoff", { text: "Monday 10:00 Europe/Lisbon" }, { text: "monday 10:00 Europe/Lisbon" }),
          claim("limit", { quantity: "3" }, { text: "no more than 3 services" }),
          claim("语言", { text: "中文" }, { text: "中文" }),
          claim("语言", { text: "中文" }, { text: "不要英文" }),
        ],
      }),
      { version: 1 },
    ).split("\n");
    expect(lines.slice(1, 6)).toEqual([
      "## claims",
      'handoff: "Monday 10:00 Europe/Lisbon" ← e-1',
      'limit: 3 — "no more than 3 services" ← e-1',
      '语言: "中文" ← e-1',
      '语言: "中文" — "不要英文" ← e-1',
    ]);
  });

  it("marks an earlier reading with its day, never as current", () => {
    const text = renderRecallText(
      recallOf({
        claims: [
          claim(
            "backup.bucket_size",
            { quantity: "4.1", unit: "TB" },
            { scope: "bucket:b", derivedFrom: ["ana-51"] },
          ),
          claim(
            "backup.bucket_size",
            { quantity: "4.6", unit: "TB" },
            { scope: "bucket:b", status: "earlier", asOf: "2026-10-26", derivedFrom: ["ana-22"] },
          ),
          claim("stock.count", { quantity: "3", unit: "item" }, { status: "earlier", derivedFrom: ["s-1"] }),
        ],
      }),
      { version: 1 },
    );
    expect(text.split("\n").slice(2, 5)).toEqual([
      "backup.bucket_size [bucket:b]: 4.1 TB ← ana-51",
      "backup.bucket_size [bucket:b]: 4.6 TB (earlier, 2026-10-26) ← ana-22",
      "stock.count: 3 item (earlier) ← s-1",
    ]);
    // A text value that starts like the marker is quoted, so a reader never mistakes it.
    expect(
      renderRecallText(recallOf({ claims: [claim("k", { entity: "x (earlier" })] }), { version: 1 }),
    ).toContain('k: "x (earlier" ← e-1');
  });

  it("quotes a key, scope, value or id that would break the grammar", () => {
    const text = renderRecallText(
      recallOf({
        claims: [
          claim("# not a heading", { entity: "NOT a negation" }, { scope: "a]b" }),
          claim("a: b", { quantity: "1", unit: "x ← y" }, { derivedFrom: ["not an id"] }),
          claim(" padded", { scopes: [] }),
        ],
      }),
      { version: 1 },
    );
    expect(text.split("\n").slice(2, 5)).toEqual([
      '"# not a heading" ["a]b"]: "NOT a negation" ← e-1',
      '"a: b": "1 x ← y" ← "not an id"',
      '" padded": (none) ← e-1',
    ]);
  });

  it("names an event larger than the whole budget on a line of its own, which its cost counts", () => {
    const skipped = { eventId: "big-1", sequence: 4, tokens: 900 };
    const empty = recallOf({});
    const text = renderRecallText(recallOf({ omitted: { ...empty.omitted, oversized: [skipped] } }), {
      version: 1,
    });
    const line = "# skipped, larger than the budget leaves a page: big-1 (900 tokens)";
    expect(text.split("\n")).toContain(line);
    expect(countTokens(text) - countTokens(renderRecallText(empty, { version: 1 }))).toBe(
      textSkippedTokens(skipped),
    );
  });

  it("counts as not shown only the cold inputs a query did not serve as matches", () => {
    const hint = "memgate recall ana --query WORDS";
    const matched = renderRecallText(recallOf({ coldInputs: 3, cold: [event("n-1", 4)] }), {
      searchHint: hint,
    });
    expect(matched).toContain("## matches\n");
    expect(matched).toContain(`# cold: 2 inputs not shown; search them with ${hint}\n`);
    const all = recallOf({ coldInputs: 2, cold: [event("n-1", 4), event("n-2", 5)] });
    expect(renderRecallText(all, { searchHint: hint })).not.toContain("# cold");
    // A match a claim restates (index version 3) was never cold: it leaves the count as it is.
    const cited = recallOf({ coldInputs: 3, cold: [event("n-1", 4), event("f-9", 5)], citedMatches: 1 });
    expect(renderRecallText(cited, { searchHint: hint })).toContain(
      `# cold: 2 inputs not shown; search them with ${hint}\n`,
    );
  });

  it("says when the budget is below what the first line and notes alone need", () => {
    const short = renderServedRecallText(
      recallOf({
        coldInputs: 0,
        omitted: { claims: 4, pending: 0, unresolvedConflicts: 0, summary: true, cold: 0, oversized: [] },
        budgetBelowFrame: { budget: 5, needed: 46 },
      }),
    ).text;
    expect(short.split("\n").slice(1, 3)).toEqual([
      "# left out by the budget: 4 claims, the summary",
      "# the budget of 5 tokens is below what the header and notes alone need: 46",
    ]);
    expect(renderRecallText(recallOf({ coldInputs: 0 }))).not.toContain("# the budget of");
  });

  it("says what the budget left out and that inputs stay cold, counted or not", () => {
    const omitted = { claims: 2, pending: 1, unresolvedConflicts: 0, summary: true, cold: 3, oversized: [] };
    const counted = renderRecallText(recallOf({ claims: [claim("k", { bool: true })], omitted }), {
      version: 1,
      coldInputs: 1,
      searchHint: "memgate recall SUBJECT --query WORDS",
    });
    expect(counted.split("\n").slice(-3)).toEqual([
      "# left out by the budget: 2 claims, 1 tasks, the summary, 3 matches",
      "# cold: 1 input not shown; search them with memgate recall SUBJECT --query WORDS",
      "",
    ]);
    const uncounted = renderRecallText(recallOf({ claims: [claim("k", { bool: false })] }), { version: 1 });
    expect(uncounted).toContain("# cold: inputs the summary left cold are not shown; search them with");
    expect(renderRecallText(recallOf({}), { version: 1, coldInputs: 0 })).not.toContain("# cold");
  });
});

// ---------------------------------------------------------------- a reader written from the contract

interface ReadClaim {
  key: string;
  scope: string;
  negated: boolean;
  value: string;
  quotedValue: boolean;
  contested: boolean;
  text: string | null;
  ids: string[];
}

/** A JSON string literal starting at `at`: its text and where it ends. */
function readString(line: string, at: number): [string, number] {
  expect(line[at]).toBe('"');
  let end = at + 1;
  while (line[end] !== '"') end += line[end] === "\\" ? 2 : 1;
  return [JSON.parse(line.slice(at, end + 1)) as string, end + 1];
}

function upTo(line: string, at: number, stops: readonly string[]): number {
  const found = stops.map((stop) => line.indexOf(stop, at)).filter((index) => index >= 0);
  return found.length === 0 ? line.length : Math.min(...found);
}

function readHead(line: string, at: number): { key: string; scope: string; at: number } {
  let key: string;
  if (line[at] === '"') [key, at] = readString(line, at);
  else {
    const end = upTo(line, at, [": ", " [", " ← "]);
    key = line.slice(at, end);
    at = end;
  }
  let scope = "global";
  if (line.startsWith(" [", at)) {
    at += 2;
    if (line[at] === '"') [scope, at] = readString(line, at);
    else {
      const end = line.indexOf("]", at);
      scope = line.slice(at, end);
      at = end;
    }
    expect(line[at]).toBe("]");
    at += 1;
  }
  return { key, scope, at };
}

function readValue(
  line: string,
  at: number,
  stops: readonly string[],
): { value: string; quoted: boolean; at: number } {
  if (line[at] === '"') {
    const [value, end] = readString(line, at);
    return { value, quoted: true, at: end };
  }
  const end = upTo(line, at, stops);
  return { value: line.slice(at, end), quoted: false, at: end };
}

function readIds(line: string, at: number): string[] {
  expect(line.startsWith(" ← ", at)).toBe(true);
  at += 3;
  const ids: string[] = [];
  for (;;) {
    if (line[at] === '"') {
      const [id, end] = readString(line, at);
      ids.push(id);
      at = end;
    } else {
      const end = upTo(line, at, [", "]);
      ids.push(line.slice(at, end));
      at = end;
    }
    if (at >= line.length) return ids;
    expect(line.startsWith(", ", at)).toBe(true);
    at += 2;
  }
}

function readClaim(line: string): ReadClaim {
  const head = readHead(line, 0);
  let at = head.at;
  expect(line.startsWith(": ", at)).toBe(true);
  at += 2;
  const negated = line.startsWith("NOT ", at);
  if (negated) at += 4;
  const value = readValue(line, at, [" (contested)", " — ", " ← "]);
  at = value.at;
  const contested = line.startsWith(" (contested)", at);
  if (contested) at += " (contested)".length;
  let text: string | null = null;
  if (line.startsWith(" — ", at)) [text, at] = readString(line, at + 3);
  return {
    key: head.key,
    scope: head.scope,
    negated,
    value: value.value,
    quotedValue: value.quoted,
    contested,
    text,
    ids: readIds(line, at),
  };
}

function readEvent(line: string): { text: string; assertions: number; ids: string[]; head: string } {
  const headEnd = line.indexOf(": ");
  const [text, afterText] = readString(line, headEnd + 2);
  let at = afterText;
  let assertions = 0;
  if (line.startsWith(" {", at)) {
    at += 2;
    for (;;) {
      const head = readHead(line, at);
      at = head.at + 2;
      if (line.startsWith("NOT ", at)) at += 4;
      at = readValue(line, at, ["; ", "}"]).at;
      assertions++;
      if (line[at] === "}") break;
      expect(line.startsWith("; ", at)).toBe(true);
      at += 2;
    }
    at += 1;
  }
  return { head: line.slice(0, headEnd), text, assertions, ids: readIds(line, at) };
}

function readRecall(text: string): { first: string; sections: Map<string, string[]>; notes: string[] } {
  expect(text.endsWith("\n")).toBe(true);
  const lines = text.slice(0, -1).split("\n");
  const sections = new Map<string, string[]>();
  const notes: string[] = [];
  let current: string[] | null = null;
  for (const line of lines.slice(1)) {
    if (line.startsWith("## ")) {
      const name = line.slice(3);
      expect(sections.has(name)).toBe(false);
      current = [];
      sections.set(name, current);
    } else if (line.startsWith("# ")) notes.push(line);
    else {
      expect(notes).toEqual([]);
      current?.push(line);
    }
  }
  return { first: lines[0] ?? "", sections, notes };
}

// ---------------------------------------------------------------- random recalls

const tricky = fc.constantFrom(
  ": ",
  " [",
  "]",
  " ← ",
  " — ",
  " (contested)",
  "; ",
  "}",
  "{",
  "#",
  "NOT ",
  '"',
  "\\",
  "\n",
  "\r\n",
  "\u2028",
  "\u2029",
  "\u0085",
  "\t",
  "\u0000",
  " ",
  "不",
  "",
);
const piece = fc.oneof(fc.string({ maxLength: 6 }), tricky, fc.constantFrom("ana", "rotation:x", "5 km"));
const textArb = fc.array(piece, { maxLength: 5 }).map((parts) => parts.join(""));
const nonEmpty = textArb.filter((text) => text.length > 0);
const idArb = fc.oneof(
  { weight: 5, arbitrary: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,8}$/) },
  { weight: 1, arbitrary: nonEmpty },
);
const ids = fc.array(idArb, { minLength: 1, maxLength: 3 });
const valueArb: fc.Arbitrary<ValueData> = fc.oneof(
  textArb.map((text) => ({ text })),
  fc.boolean().map((bool) => ({ bool })),
  fc.record(
    { quantity: fc.constantFrom("5", "12500.00", "-0.5"), unit: nonEmpty },
    { requiredKeys: ["quantity"] },
  ),
  fc.constantFrom({ date: "2026-12-03" }, { date: "2026-12-03T09:00:00+01:00" }),
  nonEmpty.map((entity) => ({ entity })),
  fc.array(nonEmpty, { maxLength: 3 }).map((scopes) => ({ scopes })),
);
const scopeArb = fc.oneof(fc.constant("global"), nonEmpty);
const claimArb: fc.Arbitrary<Claim> = fc.record(
  {
    key: nonEmpty,
    scope: scopeArb,
    value: valueArb,
    polarity: fc.constantFrom("affirmed", "negated"),
    status: fc.constantFrom("settled", "contested"),
    text: textArb,
    derivedFrom: ids,
  },
  { requiredKeys: ["key", "scope", "value", "polarity", "status", "derivedFrom"] },
);
const eventArb = fc
  .record(
    {
      eventId: idArb,
      kind: fc.constantFrom("fact", "preference", "constraint", "decision", "task", "permission", "note"),
      trust: fc.constantFrom("user", "tool", "verified", "untrusted"),
      text: textArb,
      occurredAt: fc.constantFrom("2026-11-20", "2026-11-20T10:00:00Z"),
      assertions: fc.array(
        fc.record({
          key: nonEmpty,
          scope: scopeArb,
          value: valueArb,
          polarity: fc.constantFrom("affirmed", "negated"),
        }),
        { maxLength: 3 },
      ),
    },
    { requiredKeys: ["eventId", "kind", "trust", "text"] },
  )
  .map(
    (e) => ({ ...e, sequence: 1, ...(e.kind === "task" ? { taskStatus: "open" } : {}) }) as SequencedEvent,
  );

const recallArb: fc.Arbitrary<Recall> = fc
  .record({
    mode: fc.constantFrom("summary", "raw"),
    reason: textArb,
    scope: fc.option(nonEmpty, { nil: null }),
    claims: fc.array(claimArb, { maxLength: 6 }),
    pending: fc.array(fc.record({ text: textArb, derivedFrom: ids }), { maxLength: 3 }),
    unresolvedConflicts: fc.array(fc.record({ key: nonEmpty, scope: scopeArb, members: ids }), {
      maxLength: 2,
    }),
    summary: fc.option(textArb, { nil: null }),
    tail: fc.array(eventArb, { maxLength: 4 }),
    events: fc.array(eventArb, { maxLength: 4 }),
    cold: fc.array(eventArb, { maxLength: 2 }),
    nextCursor: fc.option(fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/), { nil: null }),
  })
  .map((parts) => recallOf({ ...parts, artifactId: parts.mode === "summary" ? "summary:s:1:a" : null }));

describe("recall as text: properties", () => {
  it("a reader of the contract finds every claim, task, conflict and event exactly once, with its structure", () => {
    fc.assert(
      fc.property(recallArb, fc.option(fc.nat(50), { nil: null }), (recall, coldInputs) => {
        const text = renderRecallText(recall, { version: 1, coldInputs });
        // No line break but the line ends, no control character anywhere in a line.
        for (const line of text.slice(0, -1).split("\n")) expect(line).not.toMatch(/[\p{Cc}\u2028\u2029]/u);
        const { first, sections, notes } = readRecall(text);
        expect(first.startsWith(`# memgate recall: ${recall.mode} `)).toBe(true);

        const claims = (sections.get("claims") ?? []).map(readClaim);
        expect(claims).toHaveLength(recall.claims.length);
        claims.forEach((read, i) => {
          const original = recall.claims[i] as Claim;
          expect(read.key).toBe(original.key);
          expect(read.scope).toBe(original.scope);
          expect(read.negated).toBe(original.polarity === "negated");
          expect(read.contested).toBe(original.status === "contested");
          expect(read.ids).toEqual(original.derivedFrom);
          if ("text" in original.value)
            expect([read.quotedValue, read.value]).toEqual([true, original.value.text]);
          if (read.text !== null) expect(read.text).toBe(original.text);
        });

        const conflicts = sections.get("conflicts") ?? [];
        expect(conflicts).toHaveLength(recall.unresolvedConflicts.length);
        conflicts.forEach((line, i) => {
          const head = readHead(line, 0);
          const original = recall.unresolvedConflicts[i];
          expect([head.key, head.scope, readIds(line, head.at)]).toEqual([
            original?.key,
            original?.scope,
            original?.members,
          ]);
        });

        const tasks = sections.get("tasks") ?? [];
        expect(tasks).toHaveLength(recall.pending.length);
        tasks.forEach((line, i) => {
          const read = readEvent(line);
          expect([read.head, read.text, read.ids]).toEqual([
            "task open",
            recall.pending[i]?.text,
            recall.pending[i]?.derivedFrom,
          ]);
        });

        for (const [name, events] of [
          ["tail", recall.tail],
          ["events", recall.events],
          ["matches", recall.cold],
        ] as const) {
          const lines = sections.get(name) ?? [];
          expect(lines).toHaveLength(events.length);
          lines.forEach((line, i) => {
            const read = readEvent(line);
            const original = events[i] as SequencedEvent;
            expect(read.ids).toEqual([original.eventId]);
            expect(read.text).toBe(original.text);
            expect(read.assertions).toBe(original.assertions?.length ?? 0);
            expect(read.head.split(" ")[0]).toBe(original.kind);
          });
        }
        const summary = sections.get("summary");
        if (recall.summary === null || recall.summary === "") expect(summary).toBeUndefined();
        else expect(summary?.map((line) => readString(line, 0)[0])).toEqual([recall.summary]);
        expect(notes.some((note) => note.startsWith("# more: "))).toBe(recall.nextCursor !== null);
      }),
      { numRuns: 300 },
    );
  });

  it("counts the text it serves as cl100k_base counts the whole text, its own note included", () => {
    fc.assert(
      fc.property(recallArb, fc.option(fc.nat(50), { nil: null }), (recall, coldInputs) => {
        const served = renderServedRecallText(recall, { version: 1, coldInputs });
        expect(served.tokens).toBe(countTokens(served.text));
      }),
      { numRuns: 300 },
    );
  });

  it("is deterministic: the same recall, its fields in any order, renders the same bytes", () => {
    const reorder = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(reorder);
      if (value === null || typeof value !== "object") return value;
      return Object.fromEntries(
        Object.entries(value)
          .reverse()
          .map(([k, v]) => [k, reorder(v)]),
      );
    };
    fc.assert(
      fc.property(recallArb, (recall) => {
        const once = renderRecallText(recall, { version: 1, coldInputs: 3 });
        expect(renderRecallText(recall, { version: 1, coldInputs: 3 })).toBe(once);
        expect(renderRecallText(reorder(recall) as Recall, { version: 1, coldInputs: 3 })).toBe(once);
      }),
      { numRuns: 100 },
    );
  });
});
