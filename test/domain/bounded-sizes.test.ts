// CONTRACT §1 "Sizes": everything an agent can send has a size, refused at parse time with the
// field named. Each case first reproduces what was accepted before the bound.
import { describe, expect, it } from "vitest";
import { parseDecimal } from "#domain/quantity.ts";
import { LIMITS, MemoryEvent, Subject, TrustPolicy } from "#domain/schemas.ts";
import { describeIssues } from "#runtime/issues.ts";

const fact = (extra: Record<string, unknown>) => ({ eventId: "m-1", kind: "fact", text: "x", ...extra });
const asserting = (assertion: Record<string, unknown>) =>
  fact({ assertions: [{ key: "k", value: { text: "v" }, polarity: "affirmed", ...assertion }] });

/** The first issue's field and message, as the 400 and exit 2 name them; null when it parses. */
function refusal(event: unknown): string | null {
  const parsed = MemoryEvent.safeParse(event);
  return parsed.success ? null : describeIssues(parsed.error, { style: "dots" });
}

describe("sizes of an event (CONTRACT §1)", () => {
  it("a quantity written longhand is bounded as its exponent form is: 0.000…0001 with 400,000 zeros is refused", () => {
    const longhand = `0.${"0".repeat(400_000)}1`;
    expect(refusal(asserting({ value: { quantity: longhand } }))).toMatch(
      /assertions\.0\.value\.quantity: quantity must have at most 64 significant digits, a magnitude within 1e±1000/,
    );
    // 1e-1001 was already refused; its longhand (1,000 zeros after the point) now is too.
    expect(refusal(asserting({ value: { quantity: "1e-1001" } }))).not.toBeNull();
    expect(refusal(asserting({ value: { quantity: `0.${"0".repeat(1000)}1` } }))).not.toBeNull();
    // The bound itself still parses, longhand or not, and means the same number.
    const smallest = `0.${"0".repeat(999)}1`;
    expect(refusal(asserting({ value: { quantity: smallest } }))).toBeNull();
    expect(parseDecimal(smallest).equals(parseDecimal("1e-1000"))).toBe(true);
    expect(refusal(asserting({ value: { quantity: `1${"0".repeat(1000)}` } }))).not.toBeNull(); // 1e1000 needs 1,001 digits
    expect(refusal(asserting({ value: { quantity: `${"0".repeat(2000)}1.5` } }))).toMatch(/1100 characters/);
    expect(refusal(asserting({ value: { quantity: "12500.00", unit: "USD" } }))).toBeNull();
  });

  it("keys, scopes, sources, entities, units and dates have a length; the field is named", () => {
    const long = (n: number) => "k".repeat(n);
    expect(refusal(asserting({ key: long(LIMITS.keyCharacters) }))).toBeNull();
    expect(refusal(asserting({ key: long(100_000) }))).toMatch(
      /^assertions\.0\.key: key must be at most 256 characters/,
    );
    expect(refusal(asserting({ scope: long(LIMITS.scopeCharacters + 1) }))).toMatch(
      /^assertions\.0\.scope: /,
    );
    expect(refusal(fact({ source: long(100_000) }))).toMatch(
      /^source: source must be at most 128 characters/,
    );
    expect(refusal(asserting({ value: { entity: long(257) } }))).toMatch(
      /value\.entity: entity must be at most 256/,
    );
    expect(refusal(asserting({ value: { quantity: "1", unit: long(65) } }))).toMatch(
      /value\.unit: unit must be at most 64/,
    );
    expect(refusal(asserting({ value: { date: `2026-11-20${" ".repeat(100)}` } }))).toMatch(
      /value\.date: date must be at most 64/,
    );
    expect(refusal(fact({ occurredAt: "2".repeat(65) }))).toMatch(
      /^occurredAt: occurredAt must be at most 64/,
    );
    // Characters are code points: 256 emoji are 512 UTF-16 units and still within the bound.
    expect(refusal(asserting({ key: "🔑".repeat(256) }))).toBeNull();
  });

  it("a {text} value is bounded as event text is (16 KiB of UTF-8), not 1,000,000 characters", () => {
    expect(refusal(asserting({ value: { text: "a".repeat(1_000_000) } }))).toMatch(
      /^assertions\.0\.value\.text: text must be at most 16384 bytes of UTF-8/,
    );
    expect(refusal(asserting({ value: { text: "é".repeat(8192) } }))).toBeNull(); // exactly 16 KiB
    expect(refusal(asserting({ value: { text: "é".repeat(8193) } }))).not.toBeNull();
  });

  it("a scopes value holds at most 64 scopes (10,000 were accepted); supersedes and revokes are bounded", () => {
    const scopes = Array.from({ length: 10_000 }, (_, i) => `repo:${i}`);
    expect(refusal(asserting({ value: { scopes } }))).toMatch(
      /value\.scopes: scopes holds at most 64 scopes/,
    );
    expect(refusal(asserting({ value: { scopes: scopes.slice(0, 64) } }))).toBeNull();
    expect(refusal(asserting({ value: { scopes: ["x".repeat(129)] } }))).toMatch(
      /scopes\.0: each scope must be at most 128/,
    );
    const ids = Array.from({ length: 1001 }, (_, i) => `e-${i}`);
    expect(refusal(fact({ supersedes: ids.slice(0, 65) }))).toMatch(
      /^supersedes: supersedes names at most 64/,
    );
    expect(refusal({ eventId: "r-1", kind: "revocation", revokes: ids })).toMatch(
      /^revokes: revokes names at most 1000/,
    );
  });
});

describe("sizes of a trust policy", () => {
  it("110,000 blocked sources are refused; 256 are accepted; each is at most 128 characters", () => {
    const many = Array.from({ length: 110_000 }, (_, i) => `agent:${i}`);
    const parsed = TrustPolicy.safeParse({ blockedSources: many });
    expect(parsed.success).toBe(false);
    if (!parsed.success)
      expect(describeIssues(parsed.error, { style: "dots" })).toMatch(
        /^blockedSources: blockedSources holds at most 256/,
      );
    expect(TrustPolicy.safeParse({ blockedSources: many.slice(0, 256) }).success).toBe(true);
    expect(TrustPolicy.safeParse({ blockedSources: ["web:".padEnd(129, "x")] }).success).toBe(false);
  });
});

describe("subjects (CONTRACT §6), one rule for HTTP, the command line and MCP", () => {
  it("refuses bidirectional controls and zero-width characters, which make two subjects look alike", () => {
    for (const invisible of ["\u202E", "\u200B", "\u200D", "\u2066", "\uFEFF", "\u00AD", "\u200F"]) {
      const parsed = Subject.safeParse(`alice${invisible}`);
      expect(parsed.success, JSON.stringify(invisible)).toBe(false);
      if (!parsed.success)
        expect(parsed.error.issues[0]?.message).toMatch(/bidirectional controls or zero-width/);
    }
    expect(Subject.safeParse("客户-7").success).toBe(true);
    expect(Subject.safeParse("team/ops").success).toBe(true);
  });
});
