import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { itemlessRecall, type Recall } from "#app/recall.ts";
import { renderRecallText, showDays } from "#app/recall-text.ts";
import { sources, textAlone } from "#app/recall-text-lines.ts";
import type { Claim, PendingItem, SequencedEvent, ValueData } from "#domain/schemas.ts";
import { countTokens } from "#domain/tokens.ts";
import { settled } from "../support/builders.ts";

/**
 * Recall as text, version 2 (CONTRACT §5a): what an agent reads does not repeat itself. Claims are
 * grouped under their scope, a key shared with the claim above is written once, a claim whose text
 * says what it is about is served by its text, ids come in compact runs, events name who wrote them,
 * and what changes over time shows its day. A reader written from the contract finds every claim
 * (its scope, key, polarity, status and every source id), task, conflict and event exactly once.
 */

function recallOf(parts: Partial<Recall>): Recall {
  return {
    ...itemlessRecall({
      mode: "summary",
      reason: "summary s covers through 9",
      highWater: 9,
      inputEpoch: 1,
      artifactId: "summary:ana:9:a",
      scope: null,
      coldInputs: null,
    }),
    ...parts,
  };
}

function claim(key: string, value: ValueData, more: Partial<Claim> = {}): Claim {
  return settled(key, value, more.derivedFrom ?? ["e-1"], more);
}

describe("recall as text, version 2: examples", () => {
  it("groups claims by scope, writes a shared key once, serves a claim that says it all by its text, and shows days", () => {
    const claims = [
      claim(
        "oncall.ack_sla.sev1",
        { quantity: "5", unit: "minute" },
        { scope: "rotation:payments-sre", derivedFrom: ["ana-2"] },
      ),
      claim("memory:ana-4", { text: "Don't page Marta directly for SEV2s." }, { derivedFrom: ["ana-4"] }),
      claim(
        "backup.bucket_size",
        { quantity: "4.6", unit: "TB" },
        { scope: "bucket:pay-backups-prod", status: "contested", derivedFrom: ["ana-22"] },
      ),
      claim(
        "backup.bucket_size",
        { quantity: "4.1", unit: "TB" },
        { scope: "bucket:pay-backups-prod", status: "contested", derivedFrom: ["ana-51"] },
      ),
      claim(
        "oncall.ack_sla.sev2",
        { quantity: "15", unit: "minute" },
        { scope: "rotation:payments-sre", derivedFrom: ["ana-3", "ana-5", "ana-6", "ana-7", "ana-12"] },
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
    ];
    const pending: PendingItem[] = [
      { text: "SRE-1452: alert on replication slot growth by Dec 18.", derivedFrom: ["ana-54"] },
    ];
    const body = { claims, pending };
    showDays(body, {
      claims: [null, "2026-11-02", "2026-10-26", "2026-11-30", null, null],
      pending: ["2026-12-01"],
    });
    const tail: SequencedEvent[] = [
      {
        eventId: "ana-57",
        sequence: 57,
        kind: "fact",
        trust: "tool",
        source: "agent:monitor",
        occurredAt: "2026-12-04T08:00:00Z",
        text: "Replica lag on eu-west-1b is ~5 s during the batch.",
        assertions: [
          {
            key: "db.replica_lag",
            scope: "az:eu-west-1b",
            value: { quantity: "5", unit: "s" },
            polarity: "affirmed",
          },
        ],
      },
      { eventId: "ana-58", sequence: 58, kind: "note", trust: "user", source: "Dr Smith", text: "ok" },
    ];
    const text = renderRecallText(recallOf({ claims, pending, tail }), { coldInputs: 9 });
    expect(text).toBe(
      [
        "# memgate recall: summary summary:ana:9:a (clock 9, epoch 1)",
        "## claims",
        '"Don\'t page Marta directly for SEV2s." (2026-11-02) ← ana-4',
        "### rotation:payments-sre",
        "oncall.ack_sla.sev1: 5 minute ← ana-2",
        "oncall.ack_sla.sev2: 15 minute ← ana-{3,5..7,12}",
        "### bucket:pay-backups-prod",
        "backup.bucket_size: 4.6 TB (contested) (2026-10-26) ← ana-22",
        "-: 4.1 TB (contested) (2026-11-30) ← ana-51",
        "### org:payments",
        'bot.deploy-bot.scopes: NOT deploy:prod — "prod still needs a human to approve the sync in Argo" ← ana-7',
        "## tasks",
        '"SRE-1452: alert on replication slot growth by Dec 18." (2026-12-01) ← ana-54',
        "## tail",
        'fact tool 2026-12-04 agent:monitor: "Replica lag on eu-west-1b is ~5 s during the batch." {db.replica_lag [az:eu-west-1b]: 5 s} ← ana-57',
        'note "Dr Smith": "ok" ← ana-58',
        "# cold: 9 inputs not shown; search them with recall with a query (CLI --query WORDS, HTTP ?query=WORDS, MCP query)",
        "",
      ].join("\n"),
    );
    // Without the days, the same recall costs less than version 1, which repeats scopes and ids whole.
    const undated = recallOf({
      claims: claims.map((c) => ({ ...c })),
      pending: pending.map((p) => ({ ...p })),
      tail,
    });
    expect(countTokens(renderRecallText(undated, { coldInputs: 9 }))).toBeLessThan(
      countTokens(renderRecallText(undated, { version: 1, coldInputs: 9 })),
    );
  });

  it("writes ids that differ only in their last number once, whatever follows that number", () => {
    expect(
      sources(
        [
          "emily-2023-05-04-5-u",
          "emily-2023-05-04-3-a",
          "emily-2023-05-04-1-u",
          "emily-2023-05-04-3-u",
          "emily-2023-05-04-4-u",
          "emily-2023-05-05-1-u",
          "D1:9",
          "D1:3",
          "D1:4",
          "ana-07",
          "ana-7",
          "x 1",
        ],
        2,
      ),
    ).toBe(
      ' ← D1:{3,4,9}, ana-7, ana-07, emily-2023-05-04-3-a, emily-2023-05-04-{1,3..5}-u, emily-2023-05-05-1-u, "x 1"',
    );
  });

  it("keeps the key when the text does not say it, and a negated or contested claim's structure", () => {
    expect(textAlone(claim("travel.seat", { text: "window seat" }))).toBeNull();
    expect(
      textAlone(
        claim("travel.seat", { text: "window seat" }, { text: "Prefers a window seat when travelling" }),
      ),
    ).toBeNull();
    expect(textAlone(claim("seat", { text: "window seat" }, { text: "Prefers a window seat" }))).toBe(
      "Prefers a window seat",
    );
    expect(
      textAlone(claim("k", { text: "never vendor X" }, { polarity: "negated", derivedFrom: ["k"] })),
    ).toBeNull();
    expect(
      textAlone(claim("budget", { quantity: "12500", unit: "USD" }, { text: "Budget is 12,500 USD" })),
    ).toBeNull();
  });

  it("quotes a value that would read as a day, and a source that would read as a trust or a day", () => {
    const text = renderRecallText(
      recallOf({
        claims: [claim("k", { entity: "x (2026)" })],
        tail: [
          { eventId: "t-1", sequence: 1, kind: "note", trust: "user", source: "tool", text: "a" },
          { eventId: "t-2", sequence: 2, kind: "note", trust: "user", source: "2026-01-01", text: "b" },
        ],
      }),
    );
    expect(text).toContain('k: "x (2026)" ← e-1');
    expect(text).toContain('note "tool": "a" ← t-1');
    expect(text).toContain('note "2026-01-01": "b" ← t-2');
  });
});

// ---------------------------------------------------------------- a reader written from the contract

function readString(line: string, at: number): [string, number] {
  expect(line[at]).toBe('"');
  let end = at + 1;
  while (line[end] !== '"') end += line[end] === "\\" ? 2 : 1;
  return [JSON.parse(line.slice(at, end + 1)) as string, end + 1];
}

function upTo(line: string, at: number, stops: readonly RegExp[]): number {
  let best = line.length;
  for (const stop of stops) {
    const rest = line.slice(at);
    const found = rest.search(stop);
    if (found >= 0) best = Math.min(best, at + found);
  }
  return best;
}

/** ` ← IDS`, compact runs expanded: `p{1,3..5}` is p1, p3, p4, p5. */
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
      const end = upTo(line, at, [/, /]);
      const part = line.slice(
        at,
        line.indexOf("{", at) >= 0 && line.indexOf("{", at) < end ? line.indexOf("}", at) + 1 : end,
      );
      at += part.length;
      const run = /^(.*)\{([0-9.,]+)\}$/.exec(part);
      if (run) {
        for (const piece of (run[2] as string).split(",")) {
          const [from, to = from] = piece.split("..").map(Number) as [number, number?];
          for (let n = from; n <= (to as number); n++) ids.push(`${run[1]}${n}`);
        }
      } else ids.push(part);
    }
    if (at >= line.length) return ids;
    expect(line.startsWith(", ", at)).toBe(true);
    at += 2;
  }
}

interface ReadClaim {
  scope: string;
  key: string | null;
  alone: string | null;
  negated: boolean;
  contested: boolean;
  ids: string[];
}

function readClaim(line: string, scope: string, keyAbove: string | null): ReadClaim {
  // A quoted key is followed by ": ", a claim served by its text alone by its day or its sources.
  if (line.startsWith('"') && !line.startsWith(": ", readString(line, 0)[1])) {
    const [alone, at] = readString(line, 0);
    const rest = line.slice(at).replace(/^ \(\d{4}-\d{2}-\d{2}\)/, "");
    return { scope, key: null, alone, negated: false, contested: false, ids: readIds(rest, 0) };
  }
  let key: string;
  let at: number;
  if (line.startsWith("-: ")) {
    expect(keyAbove).not.toBeNull();
    key = keyAbove as string;
    at = 1;
  } else if (line[0] === '"') [key, at] = readString(line, 0);
  else {
    at = upTo(line, 0, [/: /]);
    key = line.slice(0, at);
  }
  expect(line.startsWith(": ", at)).toBe(true);
  at += 2;
  const negated = line.startsWith("NOT ", at);
  if (negated) at += 4;
  if (line[at] === '"') at = readString(line, at)[1];
  else at = upTo(line, at, [/ \(contested\)/, / \(earlier/, / \(\d/, / — /, / ← /]);
  const contested = line.startsWith(" (contested)", at);
  if (contested) at += " (contested)".length;
  const day = /^ \(\d{4}-\d{2}-\d{2}\)/.exec(line.slice(at));
  if (day) at += day[0].length;
  if (line.startsWith(" — ", at)) at = readString(line, at + 3)[1];
  return { scope, key, alone: null, negated, contested, ids: readIds(line, at) };
}

const tricky = fc.constantFrom(
  ": ",
  " [",
  "]",
  " ← ",
  " — ",
  " (contested)",
  " (2",
  "; ",
  "{",
  "}",
  "#",
  "NOT ",
  '"',
  "\n",
  "-",
  " ",
  "不",
  "",
);
const piece = fc.oneof(
  fc.string({ maxLength: 5 }),
  tricky,
  fc.constantFrom("ana", "rotation:x", "5 km", "memory"),
);
const textArb = fc.array(piece, { maxLength: 4 }).map((parts) => parts.join(""));
const nonEmpty = textArb.filter((text) => text.length > 0);
const idArb = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      "ana-1",
      "ana-2",
      "ana-3",
      "ana-4",
      "ana-10",
      "D1:3",
      "D1:4",
      "x",
      "7",
      "ana-01",
    ),
  },
  { weight: 2, arbitrary: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,6}$/) },
  { weight: 1, arbitrary: nonEmpty },
);
const valueArb: fc.Arbitrary<ValueData> = fc.oneof(
  textArb.map((text) => ({ text })),
  fc.boolean().map((bool) => ({ bool })),
  fc.record({ quantity: fc.constantFrom("5", "12500.00"), unit: nonEmpty }, { requiredKeys: ["quantity"] }),
  nonEmpty.map((entity) => ({ entity })),
);
const claimArb: fc.Arbitrary<Claim> = fc.record(
  {
    key: fc.oneof(nonEmpty, fc.constantFrom("k", "memory:ana-1", "-", "- x")),
    scope: fc.oneof(fc.constant("global"), fc.constantFrom("s:1", "s:2"), nonEmpty),
    value: valueArb,
    polarity: fc.constantFrom("affirmed", "negated"),
    status: fc.constantFrom("settled", "contested"),
    text: textArb,
    derivedFrom: fc.uniqueArray(idArb, { minLength: 1, maxLength: 4 }),
  },
  { requiredKeys: ["key", "scope", "value", "polarity", "status", "derivedFrom"] },
);

describe("recall as text, version 2: properties", () => {
  it("a reader of the contract finds every claim in its scope with its key, structure and sources, exactly once", () => {
    fc.assert(
      fc.property(fc.array(claimArb, { maxLength: 8 }), (claims) => {
        const text = renderRecallText(recallOf({ claims }), { coldInputs: 0 });
        for (const line of text.slice(0, -1).split("\n")) expect(line).not.toMatch(/[\p{Cc}\u2028\u2029]/u);
        const lines = text.slice(0, -1).split("\n");
        const read: ReadClaim[] = [];
        let scope = "global";
        let keyAbove: string | null = null;
        let inClaims = false;
        for (const line of lines.slice(1)) {
          if (line.startsWith("## ")) {
            inClaims = line === "## claims";
            continue;
          }
          if (!inClaims || line.startsWith("# ")) continue;
          if (line.startsWith("### ")) {
            const rest = line.slice(4);
            scope = rest.startsWith('"') ? readString(rest, 0)[0] : rest;
            keyAbove = null;
            continue;
          }
          const claimRead = readClaim(line, scope, keyAbove);
          read.push(claimRead);
          keyAbove = claimRead.key;
        }
        // Global first, then each scope in the order its first claim comes; artifact order within.
        const order = [...new Set(["global", ...claims.map((c) => c.scope)])];
        const expected = [...claims].sort((a, b) => order.indexOf(a.scope) - order.indexOf(b.scope));
        expect(read).toHaveLength(expected.length);
        read.forEach((r, i) => {
          const original = expected[i] as Claim;
          expect(r.scope).toBe(original.scope);
          expect(new Set(r.ids)).toEqual(new Set(original.derivedFrom));
          expect(r.ids).toHaveLength(new Set(original.derivedFrom).size);
          if (r.alone !== null) {
            expect(textAlone(original)).toBe(r.alone);
            return;
          }
          expect(textAlone(original)).toBeNull();
          expect(r.key).toBe(original.key);
          expect(r.negated).toBe(original.polarity === "negated");
          expect(r.contested).toBe(original.status === "contested");
        });
      }),
      { numRuns: 300, seed: 52 },
    );
  });
});
