import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { memgate as run } from "#harness/cli.ts";

const EXAMPLES = join(import.meta.dirname, "../../examples/alpha");
const memgate = (...args: string[]) => run(args);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "memgate-cli-"));
});

const file = async (name: string, text: string) => {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
};

describe("memgate gate", () => {
  const events = join(EXAMPLES, "events.jsonl");
  const policy = join(EXAMPLES, "policy.json");

  it("exits 0 and says PASS for an honest candidate", async () => {
    const result = await memgate(
      "gate",
      "--events",
      events,
      "--candidate",
      join(EXAMPLES, "candidate-honest.json"),
      "--policy",
      policy,
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^PASS/);
  });

  it("exits 1 and prints the contract's JSON with every reason for a bent one", async () => {
    const result = await memgate(
      "gate",
      "--events",
      events,
      "--candidate",
      join(EXAMPLES, "candidate-bent.json"),
      "--policy",
      policy,
      "--json",
    );
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout);
    expect(report.verdict).toBe("reject");
    expect(Object.keys(report.reasons[0]).sort()).toEqual(["code", "detail", "eventId", "key", "scope"]);
    const codes = new Set(report.reasons.map((r: { code: string }) => r.code));
    for (const code of [
      "value-changed",
      "polarity-flipped",
      "unsupported-claim",
      "unknown-source",
      "conflict-settled",
      "conflict-missing",
      "pending-missing",
      "summary-foreign-token",
    ]) {
      expect(codes).toContain(code);
    }
    expect(report.stats.validInputs).toBe(13);
  });

  it("reads files that start with a byte order mark", async () => {
    const honest = await readFile(join(EXAMPLES, "candidate-honest.json"), "utf8");
    const withBom = await file("bom.json", `\uFEFF${honest}`);
    const result = await memgate("gate", "--events", events, "--candidate", withBom, "--policy", policy);
    expect(result.code).toBe(0);
  });

  it("exits 1 with schema-invalid for a truncated model answer", async () => {
    const candidate = await file("truncated.json", '{"claims":[{"key":"a","value":{"text":"b"');
    const result = await memgate("gate", "--events", events, "--candidate", candidate, "--json");
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).reasons.map((r: { code: string }) => r.code)).toEqual([
      "schema-invalid",
    ]);
  });

  it("exits 1 with over-budget when the candidate exceeds --budget", async () => {
    const result = await memgate(
      "gate",
      "--events",
      events,
      "--candidate",
      join(EXAMPLES, "candidate-honest.json"),
      "--policy",
      policy,
      "--budget",
      "100",
      "--json",
    );
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout);
    expect(report.reasons.map((r: { code: string }) => r.code)).toEqual(["over-budget"]);
    expect(report.stats.tokens).toBeGreaterThan(100);
  });

  it("exits 2 with one clear line for an unreadable file", async () => {
    const result = await memgate(
      "gate",
      "--events",
      join(dir, "nope.jsonl"),
      "--candidate",
      join(EXAMPLES, "candidate-honest.json"),
    );
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toContain("cannot read events file");
    expect(result.stdout).toBe("");
  });

  it("exits 2 naming the line and field of an invalid event", async () => {
    const bad = await file(
      "bad.jsonl",
      '{"eventId":"m-1","kind":"fact","text":"ok"}\n{"eventId":"m-2","kind":"fakt","text":"x"}\n',
    );
    const result = await memgate(
      "gate",
      "--events",
      bad,
      "--candidate",
      join(EXAMPLES, "candidate-honest.json"),
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/bad\.jsonl:2: kind: kind must be one of/);
  });

  it("exits 2 when links point forward or ids repeat", async () => {
    const bad = await file(
      "forward.jsonl",
      '{"eventId":"m-1","kind":"fact","text":"a","supersedes":["m-2"]}\n{"eventId":"m-2","kind":"fact","text":"b"}\n',
    );
    const result = await memgate(
      "gate",
      "--events",
      bad,
      "--candidate",
      join(EXAMPLES, "candidate-honest.json"),
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("may only point at earlier events");
  });

  it("exits 2 for an invalid policy and for bad usage", async () => {
    const badPolicy = await file("policy.json", '{"minTrust":"admin"}');
    expect(
      (
        await memgate(
          "gate",
          "--events",
          events,
          "--candidate",
          join(EXAMPLES, "candidate-honest.json"),
          "--policy",
          badPolicy,
        )
      ).code,
    ).toBe(2);
    expect((await memgate("gate", "--events", events)).stderr).toContain("--candidate FILE.json is required");
    expect((await memgate("gate", "--events", events, "--candidate", events, "--budget", "lots")).code).toBe(
      2,
    );
    expect((await memgate("gate", "--bogus")).code).toBe(2);
    expect((await memgate("frobnicate")).code).toBe(2);
  });

  it("prints help with the command list", async () => {
    const result = await memgate("--help");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("gate");
    expect((await memgate("gate", "--help")).stdout).toContain("--candidate FILE.json");
  });
});

describe("memgate demo", () => {
  it("ingests, consolidates, recalls, revokes, falls back, rebuilds and reports the token reduction", async () => {
    const result = await memgate("demo", "--home", join(dir, "demo-home"));
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("recall: raw");
    expect(result.stdout).toContain("STALE");
    expect(result.stdout).toContain("demo: every step behaved as it must");
    const json = await memgate("demo", "--home", join(dir, "demo-json"), "--json");
    const facts = JSON.parse(json.stdout.trim().split("\n").pop() as string);
    expect(facts.ok).toBe(true);
    expect(facts.mustPreserve).toBeGreaterThan(10);
    expect(facts.tokens.summary).toBeLessThan(facts.tokens.raw);
  });
});

describe("memgate append", () => {
  it("reads events from standard input with -, and refuses a bad line with exit 2, writing nothing", async () => {
    const home = join(dir, "append-home");
    const ok = await run(["append", "s", "-", "--home", home, "--json"], {
      input: '{"eventId":"a","kind":"fact","text":"one"}\n',
    });
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ appended: ["a"], highWater: 1 });
    const bad = await run(["append", "s", "-", "--home", home], {
      input: '{"eventId":"b","kind":"fact","text":"two"}\n{"eventId":"c"}\n',
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("-:2: kind");
    const clock = await run(["clock", "s", "--home", home, "--json"]);
    expect(JSON.parse(clock.stdout)).toEqual({ highWater: 1, inputEpoch: 0, alias: null });
  });
});
