import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { evaluate } from "#eval/evaluate.ts";
import { parseDataset, parseGold } from "#io/eval-files.ts";
import { InputError } from "#ports/errors.ts";
import type { JudgeItem, JudgePort } from "#ports/judge.ts";
import { modelDeps } from "../models/fixtures.ts";

/**
 * With a judge configured, a gold fact served hot with its words still counts only when the judge
 * does not find it unsupported by the lines that serve it; the judge reads exactly those lines.
 */
const examples = join(import.meta.dirname, "../../examples/eval");
const dataset = parseDataset(readFileSync(join(examples, "realistic.jsonl"), "utf8"), "realistic.jsonl");
const gold = parseGold(readFileSync(join(examples, "realistic-gold.jsonl"), "utf8"), "realistic-gold.jsonl");

describe("gold facts and the judge", () => {
  it("a fact the judge finds unsupported by its served lines is not kept, and says why", async () => {
    const asked: JudgeItem[] = [];
    const judge: JudgePort = {
      name: "test-judge",
      async judge(items) {
        asked.push(...items);
        return {
          verdicts: new Map(
            items.map((item) => [
              item.id,
              item.text.includes("KrisFlyer")
                ? { verdict: "unsupported" as const, reason: "the lines do not say partner programmes" }
                : { verdict: "supported" as const, reason: "stated" },
            ]),
          ),
          calls: [],
        };
      },
    };
    const { deps } = modelDeps("deterministic-v1", {}, { judge });
    const subject = "travel-lin";
    const report = await evaluate(deps, new Map([[subject, dataset.get(subject) ?? []]]), gold);
    const [travel] = report.perSubject;
    const krisflyer = asked.find((item) => item.text.includes("KrisFlyer"));
    expect(krisflyer?.events.map((event) => event.text)).toEqual([
      "### person:lin",
      'loyalty.program: "KrisFlyer" ← lin-5',
    ]);
    expect(travel?.missedFacts).toContainEqual(
      expect.stringContaining("(the judge test-judge: the lines do not say partner programmes)"),
    );
    const withoutJudge = await evaluate(
      modelDeps("deterministic-v1").deps,
      new Map([[subject, dataset.get(subject) ?? []]]),
      gold,
    );
    expect(withoutJudge.perSubject[0]?.keyFactsKept).toBe((travel?.keyFactsKept ?? 0) + 1);
  });

  it("a gold fact in words must name its evidence", () => {
    expect(() =>
      parseGold(`${JSON.stringify({ subject: "s", fact: "x", words: ["y"] })}\n`, "gold.jsonl"),
    ).toThrow(new InputError("gold.jsonl:1: evidence: a gold fact in words names its evidence events"));
  });
});
