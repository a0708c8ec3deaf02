// memgate eval on a small synthetic dataset: the numbers are known from the generator's gold.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { syntheticDataset } from "#eval/synthetic.ts";
import { memgate } from "#harness/cli.ts";

const folder = mkdtempSync(join(tmpdir(), "memgate-eval-test-"));
const { events, gold } = syntheticDataset(6, 99);
const datasetFile = join(folder, "dataset.jsonl");
const goldFile = join(folder, "gold.jsonl");
writeFileSync(datasetFile, `${events.map((e) => JSON.stringify(e)).join("\n")}\n`);
writeFileSync(goldFile, `${gold.map((g) => JSON.stringify(g)).join("\n")}\n`);

/** From the gold alone: the share of facts that are not quantities (what a number-bending model keeps). */
const nonQuantityShare =
  gold.filter((g) => !(g.value && typeof g.value === "object" && "quantity" in g.value)).length / gold.length;

describe("memgate eval", () => {
  it("an honest consolidation keeps every gold fact, invents nothing and keeps every conflict", async () => {
    const result = await memgate(["eval", "--dataset", datasetFile, "--gold", goldFile, "--json"]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      subjects: 6,
      keyFactSource: "gold",
      keyFactRecall: 1,
      falseNewFactRate: 0,
      conflictRetention: 1,
      staleVisible: 0,
      gateRejected: 0,
    });
  });

  it("a model that bends every amount loses exactly the quantity facts and is blocking", async () => {
    const result = await memgate([
      "eval",
      "--dataset",
      datasetFile,
      "--gold",
      goldFile,
      "--model",
      "number-nudge",
      "--json",
    ]);
    const report = JSON.parse(result.stdout);
    expect(result.code).toBe(1);
    expect(report.keyFactRecall).toBeCloseTo(nonQuantityShare, 10);
    expect(report.falseNewFactRate).toBeGreaterThan(0);
    expect(report.gateRejected).toBe(6);
  });

  it("samples deterministically and refuses a bad dataset line naming it", async () => {
    const sampled = JSON.parse(
      (await memgate(["eval", "--dataset", datasetFile, "--sample", "2", "--seed", "5", "--json"])).stdout,
    );
    expect(sampled.subjects).toBe(2);
    expect(sampled.keyFactSource).toBe("must-preserve");
    const bad = join(folder, "bad.jsonl");
    writeFileSync(bad, `${JSON.stringify({ subject: "x", eventId: "a", kind: "fact" })}\n`);
    const refused = await memgate(["eval", "--dataset", bad]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/bad\.jsonl:1: text/);
  });

  it("reads the converted MemoryBank chats (no gold): must-preserve recall and token reduction", async () => {
    const dataset = join(import.meta.dirname, "../../examples/eval/memorybank.jsonl");
    const result = await memgate(["eval", "--dataset", dataset, "--sample", "3", "--seed", "1", "--json"]);
    const report = JSON.parse(result.stdout);
    expect(result.code).toBe(0);
    expect(report).toMatchObject({ subjects: 3, keyFactSource: "must-preserve", falseNewFactRate: 0 });
    expect(report.tokenReduction).toBeGreaterThan(0);
  });

  it("measures the realistic logs against their gold in words: served vs raw tokens as recall text, first-try passes, facts left cold named", async () => {
    const examples = join(import.meta.dirname, "../../examples/eval");
    const result = await memgate([
      "eval",
      "--dataset",
      join(examples, "realistic.jsonl"),
      "--gold",
      join(examples, "realistic-gold.jsonl"),
      "--json",
    ]);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({
      subjects: 8,
      keyFactSource: "gold",
      falseNewFacts: 0,
      firstTryPassRate: 1,
      conflictRetention: 1,
    });
    expect(report.servedToRawTokens).toBeGreaterThan(0);
    expect(report.servedToRawTokens).toBeLessThan(1);
    // The deterministic consolidator leaves notes cold: a note that holds open items is a gold fact
    // it loses. A constraint's window beyond its assertions it keeps (its text on its first claim).
    expect(report.keyFactRecall).toBeLessThan(1);
    const devops = report.perSubject.find((s: { subject: string }) => s.subject === "devops-ana");
    expect(devops.missedFacts).toContainEqual(expect.stringContaining("(cold: ana-28)"));
    expect(devops.missedFacts.filter((fact: string) => fact.includes("VACUUM FULL"))).toEqual([]);
    expect(devops.rawTextTokens).toBeGreaterThan(devops.servedTextTokens);
  });
});
