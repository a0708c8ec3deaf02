// The budget's token count (CONTRACT §4a, cl100k_base): the same count as js-tiktoken's encoder,
// without its quadratic merge on long pieces.
import fc from "fast-check";
import { Tiktoken } from "js-tiktoken/lite";
import cl100k from "js-tiktoken/ranks/cl100k_base";
import { describe, expect, it } from "vitest";
import { countTokens } from "#domain/tokens.ts";

const reference = new Tiktoken(cl100k);
const referenceCount = (text: string) => reference.encode(text, [], []).length;

describe("countTokens", () => {
  it("counts what js-tiktoken's cl100k_base encoder counts, on random text of every script", () => {
    const text = fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 80 }),
      fc.string({
        unit: fc.constantFrom("a", "b", "e", " ", "1", ".", "\n", "é", "記", "🎉"),
        maxLength: 120,
      }),
      fc
        .array(fc.constantFrom("budget", "12,500", "USD", "never", " ", "vendor", "X", "—", "::"), {
          maxLength: 40,
        })
        .map((w) => w.join("")),
    );
    fc.assert(
      fc.property(text, (t) => countTokens(t) === referenceCount(t)),
      { numRuns: 400, seed: 100 },
    );
    for (const t of [
      "",
      "The project budget is 12,500 USD.",
      "预算是一万二千五百美元",
      `{"claims":[]}`,
      "a".repeat(300),
      "ab".repeat(150),
    ])
      expect(countTokens(t), t.slice(0, 20)).toBe(referenceCount(t));
  });

  it("counts special-token text as ordinary text instead of throwing", () => {
    expect(countTokens("quote <|endoftext|> here")).toBe(referenceCount("quote <|endoftext|> here"));
  });

  it("a 16 KiB run of one letter (minutes for the quadratic merge) is counted within a bounded number of merges", () => {
    // Counted, not timed: the heap merge does at most n - 1 merges and offers at most 3n pairs.
    const run = "w".repeat(16 * 1024);
    const count = countTokens(run);
    expect(count).toBeGreaterThan(0);
    expect(count).toBeLessThanOrEqual(run.length);
    expect(countTokens("w".repeat(600))).toBe(referenceCount("w".repeat(600)));
  });
});
