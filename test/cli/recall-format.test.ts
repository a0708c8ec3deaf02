// `memgate recall --format` through the real executable: text as an agent reads it, JSON the default.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { countTokens } from "#domain/tokens.ts";
import { memgate } from "#harness/cli.ts";

const home = mkdtempSync(join(tmpdir(), "memgate-recall-format-"));
const events = join(home, "events.jsonl");

beforeAll(async () => {
  writeFileSync(
    events,
    [
      { eventId: "c-1", kind: "constraint", text: "Backups must be encrypted." },
      { eventId: "t-1", kind: "task", text: "Renew the TLS cert by Dec 18." },
      { eventId: "n-1", kind: "note", text: "Prefers green tea in the afternoon." },
      { eventId: "n-2", kind: "note", text: "Lunch was late today." },
    ]
      .map((event) => JSON.stringify(event))
      .join("\n"),
  );
  expect((await memgate(["append", "ana", events, "--home", home])).code).toBe(0);
});

describe("memgate recall --format", () => {
  it("prints the raw events as text, then the summary as text with the cold count and the tokens served", async () => {
    const raw = await memgate(["recall", "ana", "--home", home, "--format", "text"]);
    expect(raw.code).toBe(0);
    expect(raw.stdout).toMatch(/^# memgate recall: raw \(clock 4, epoch 0\): /);
    expect(raw.stdout).toContain('task open: "Renew the TLS cert by Dec 18." ← t-1\n');
    expect((await memgate(["consolidate", "ana", "--home", home])).code).toBe(0);

    const text = (await memgate(["recall", "ana", "--home", home, "--format", "text"])).stdout;
    expect(text.split("\n")[0]).toMatch(/^# memgate recall: summary \S+ \(clock 4, epoch 0\)$/);
    expect(text).toContain("# cold: 2 inputs not shown; search them with memgate recall ana --query WORDS\n");
    const served = Number(/^# served: (\d+) tokens\n$/m.exec(text)?.[1]);
    expect(countTokens(text)).toBe(served);

    const json = JSON.parse((await memgate(["recall", "ana", "--home", home, "--format", "json"])).stdout);
    expect(json).toMatchObject({ mode: "summary", coldInputs: 2, omitted: { cold: 0 } });
    expect(JSON.parse((await memgate(["recall", "ana", "--home", home, "--json"])).stdout)).toEqual(json);

    const tight = (
      await memgate(["recall", "ana", "--home", home, "--format", "text", "--budget", String(served - 1)])
    ).stdout;
    expect(countTokens(tight)).toBeLessThanOrEqual(served - 1);
    expect(tight).toMatch(/^# left out by the budget: /m);
  });

  it("refuses an unknown format and --json beside --format text, naming the flag", async () => {
    const unknown = await memgate(["recall", "ana", "--home", home, "--format", "yaml"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--format: must be "json", "text" or "text-v1"/);
    const both = await memgate(["recall", "ana", "--home", home, "--format", "text", "--json"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--json and --format text/);
  });
});
