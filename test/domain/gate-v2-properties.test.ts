// Properties of gate v2 over generated texts: verbatim restatements pass, a cue swapped for one of
// another class is refused, the same value written in any supported format is accepted, and
// enough unsupported words are refused.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { candidate, codes, gate, log, settled } from "../support/builders.ts";

const SUBJECTS = ["release", "backup", "deploy", "invoice", "ticket", "report"];
const VERBS = ["reviewed", "encrypted", "approved", "archived", "signed", "tested"];
const CUES: Record<string, string[]> = {
  strong: ["must be", "has to be", "always gets"],
  weak: ["may be", "could be", "sometimes gets"],
  upper: ["at most", "no more than", "up to"],
  lower: ["at least", "no fewer than", "more than"],
};
const claimOf = (text: string) => settled("memory:m-1", { text }, ["m-1"]);

describe("gate v2 properties", () => {
  it("a verbatim restatement always passes", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...SUBJECTS),
        fc.constantFrom(...VERBS),
        fc.integer({ min: 1, max: 99_999 }),
        (s, v, n) => {
          const text = `Every ${s} must be ${v} by ${n} people.`;
          const events = log({ eventId: "m-1", kind: "fact", text });
          expect(gate(events, candidate({ claims: [claimOf(text)] })).reasons).toEqual([]);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("a modality or bound swapped for the other class is refused as value-changed", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...SUBJECTS),
        fc.constantFrom(...VERBS),
        fc.constantFrom(["strong", "weak"], ["weak", "strong"], ["upper", "lower"], ["lower", "upper"]),
        fc.nat(2),
        fc.nat(2),
        fc.integer({ min: 2, max: 50 }),
        (s, v, [from, to], i, j, n) => {
          const source =
            from === "strong" || from === "weak"
              ? `The ${s} ${CUES[from]?.[i]} ${v}.`
              : `The ${s} needs ${CUES[from]?.[i]} ${n} checks.`;
          const bent =
            to === "strong" || to === "weak"
              ? `The ${s} ${CUES[to]?.[j]} ${v}.`
              : `The ${s} needs ${CUES[to]?.[j]} ${n} checks.`;
          const events = log({ eventId: "m-1", kind: "fact", text: source });
          expect(codes(gate(events, candidate({ claims: [claimOf(bent)] })))).toContain("value-changed");
        },
      ),
      { numRuns: 150 },
    );
  });

  it("the same amount in digits, groups, full-width digits, a k suffix or words is accepted", () => {
    const words: Record<number, string> = {
      12500: "twelve thousand five hundred",
      3000: "three thousand",
      250: "two hundred fifty",
    };
    fc.assert(
      fc.property(fc.constantFrom(12_500, 3_000, 250), fc.nat(4), (amount, format) => {
        const grouped = amount.toLocaleString("en-US");
        const written = [
          String(amount),
          grouped,
          grouped.replace(/\d/g, (d) => String.fromCharCode(0xff10 + Number(d))),
          amount % 100 === 0 ? `${amount / 1000}k` : grouped,
          words[amount] as string,
        ][format] as string;
        const events = log({ eventId: "m-1", kind: "fact", text: `The budget is ${grouped} USD.` });
        const report = gate(events, candidate({ claims: [claimOf(`The budget is ${written} USD.`)] }));
        expect(report.reasons).toEqual([]);
      }),
      { numRuns: 100 },
    );
  });

  it("a claim whose content words are mostly not its source's is refused", () => {
    fc.assert(
      fc.property(fc.constantFrom(...SUBJECTS), fc.constantFrom(...VERBS), (s, v) => {
        const events = log({ eventId: "m-1", kind: "fact", text: `The ${s} is ${v} weekly.` });
        const laundered = `Quarterly ${s} budgets fund hiring, marketing, offices and travel.`;
        expect(codes(gate(events, candidate({ claims: [claimOf(laundered)] })))).toEqual([
          "unsupported-claim",
        ]);
      }),
      { numRuns: 60 },
    );
  });
});
