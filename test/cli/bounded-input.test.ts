import { existsSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { memgate } from "#harness/cli.ts";

/**
 * Every bad input the hardening issue lists: each is refused with its exit code and one clear line,
 * and nothing is written (no home is created by a refused command).
 */
const root = mkdtempSync(join(tmpdir(), "memgate-bounded-"));
let homes = 0;
const freshHome = () => join(root, `home-${++homes}`);

function writeFile(name: string, content: string | Uint8Array): string {
  const path = join(root, name);
  writeFileSync(path, content);
  return path;
}

const event = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ eventId: "m-1", kind: "fact", text: "Budget is 12,500 USD.", ...extra });

/** Exit code, one line on stderr, and the home untouched. */
async function refused(args: string[], home: string, code: number, pattern: RegExp) {
  const result = await memgate([...args, "--home", home]);
  expect(result.code).toBe(code);
  expect(result.stderr.trim().split("\n")[0]).toMatch(pattern);
  expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
  return result;
}

describe("bounded input on the command line", () => {
  it("a quantity with an exponent beyond ±1000 or over 64 digits is exit 2, naming the field, nothing stored", async () => {
    const home = freshHome();
    const huge = writeFile(
      "huge.jsonl",
      `${event({ assertions: [{ key: "k", value: { quantity: "1e999999999", unit: "USD" }, polarity: "affirmed" }] })}\n`,
    );
    await refused(["append", "alex", huge], home, 2, /:1: assertions\.0\.value\.quantity/);
    const digits = writeFile(
      "digits.jsonl",
      `${event({ assertions: [{ key: "k", value: { quantity: "1".repeat(65) }, polarity: "affirmed" }] })}\n`,
    );
    await refused(["append", "alex", digits], home, 2, /at most 64 significant digits/);
    expect(existsSync(home)).toBe(false);
  });

  it("a value nested 10,000 deep is exit 2 (no stack overflow), nothing stored", async () => {
    const home = freshHome();
    const deep = `${"[".repeat(10_000)}${"]".repeat(10_000)}`;
    const file = writeFile(
      "deep.jsonl",
      `{"eventId":"m-1","kind":"fact","text":"x","assertions":[{"key":"k","value":{"text":"x","extra":${deep}},"polarity":"affirmed"}]}\n`,
    );
    await refused(["append", "alex", file], home, 2, /nests deeper than 32 levels/);
    expect(existsSync(home)).toBe(false);
  });

  it("invalid UTF-8 is exit 2 naming the line and byte offset, never stored as U+FFFD", async () => {
    const home = freshHome();
    const good = new TextEncoder().encode(`${event()}\n`);
    const bad = new TextEncoder().encode(`${event({ eventId: "m-2", text: "caf_" })}\n`);
    bad[bad.indexOf(0x5f)] = 0xff;
    const file = writeFile("latin1.jsonl", new Uint8Array([...good, ...bad]));
    await refused(
      ["append", "alex", file],
      home,
      2,
      new RegExp(`line 2 is not valid UTF-8 \\(byte offset ${good.length + bad.indexOf(0xff)}\\)`),
    );
    expect(existsSync(home)).toBe(false);
  });

  it.each([
    ["200 ASCII characters", "a".repeat(200), /SUBJECT: subject must be at most 128 characters/],
    ["a newline", "alex\nbob", /SUBJECT: subject must not hold control characters/],
  ])("a subject of %s is exit 2 before a store is opened", async (_, subject, pattern) => {
    const home = freshHome();
    const file = writeFile("one.jsonl", `${event()}\n`);
    await refused(["append", subject, file], home, 2, pattern);
    await refused(["recall", subject], home, 2, pattern);
    expect(existsSync(home)).toBe(false);
  });

  it("a 128-character CJK subject is accepted and consolidated: file names stay within limits", async () => {
    const home = freshHome();
    const subject = "记".repeat(128);
    const file = writeFile("cjk.jsonl", `${event()}\n`);
    expect((await memgate(["append", subject, file, "--home", home])).code).toBe(0);
    const consolidated = await memgate(["consolidate", subject, "--home", home]);
    expect(consolidated.stderr).toBe(consolidated.stderr); // progress only
    expect(consolidated.code).toBe(0);
    const recall = await memgate(["recall", subject, "--json", "--home", home]);
    expect(JSON.parse(recall.stdout).mode).toBe("summary");
    for (const folder of ["artifacts", "manifests"])
      for (const name of readdirSync(join(home, folder))) expect(Buffer.byteLength(name)).toBeLessThan(255);
  });

  it.each([
    ["--budget 1e20", ["--budget", "1e20"]],
    ["--budget -5", ["--budget=-5"]],
    ["--timeout-ms 1.5", ["--timeout-ms", "1.5"]],
    ["--model unknown", ["--model", "no-such-model"]],
    ["--store s3", ["--store", "s3"]],
  ])("%s is exit 2 before a store is opened", async (_, flags) => {
    const home = freshHome();
    await refused(["consolidate", "alex", ...flags], home, 2, /--budget|--timeout-ms|--model|--store/);
    expect(existsSync(home)).toBe(false);
  });

  it("a --home that is a file, or empty, is exit 2 with one line", async () => {
    const file = writeFile("not-a-folder", "x");
    const events = writeFile("two.jsonl", `${event()}\n`);
    await refused(["append", "alex", events], file, 2, /--home .* is a file, not a folder/);
    const empty = await memgate(["append", "alex", events, "--home", ""]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/--home is empty/);
  });

  it("read-only commands on a missing home say so and create nothing", async () => {
    for (const args of [
      ["clock", "alex"],
      ["recall", "alex"],
      ["artifacts", "alex"],
      ["review", "alex"],
    ]) {
      const home = freshHome();
      await refused(args, home, 2, /no memgate store in .* yet/);
      expect(existsSync(home)).toBe(false);
    }
  });

  it("snapshot --through above the clock is exit 2, not a silent clamp", async () => {
    const home = freshHome();
    expect(
      (await memgate(["append", "alex", writeFile("three.jsonl", `${event()}\n`), "--home", home])).code,
    ).toBe(0);
    await refused(
      ["snapshot", "alex", "--through", "5"],
      home,
      2,
      /--through 5 is beyond the log of alex, which ends at 1/,
    );
  });

  it("a forged snapshot beyond the log is exit 4 (beyond-log), worded as a snapshot refusal, nothing recorded", async () => {
    const home = freshHome();
    expect(
      (await memgate(["append", "alex", writeFile("four.jsonl", `${event()}\n`), "--home", home])).code,
    ).toBe(0);
    const forged = writeFile(
      "forged.json",
      JSON.stringify({ subject: "alex", highWater: 999, inputEpoch: 0, expectedAlias: null }),
    );
    const result = await refused(["run", forged], home, 4, /snapshot refused \(beyond-log\)/);
    expect(result.stderr).not.toMatch(/publish refused/);
    expect(JSON.parse((await memgate(["artifacts", "alex", "--json", "--home", home])).stdout)).toEqual([]);
  });

  it("a bad environment setting is one line and exit 2 for any command, not a stack trace from module load", async () => {
    for (const args of [
      ["clock", "alex"],
      ["gate", "--events", "x.jsonl", "--candidate", "y.json"],
    ]) {
      const result = await memgate(args, { env: { MEMGATE_REPAIR_ATTEMPTS: "0" } });
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
      expect(result.stderr).toMatch(/bad environment setting: MEMGATE_REPAIR_ATTEMPTS/);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it("a subject holding a bidi control is exit 2 on the command line, as over HTTP and MCP", async () => {
    const home = freshHome();
    await refused(
      ["clock", "ali\u202Ece"],
      home,
      2,
      /subject must not hold bidirectional controls or zero-width/,
    );
  });

  it("an unreachable engine is exit 3 with one line (the contract's 1 is the gate's)", async () => {
    const result = await memgate(["clock", "alex", "--store", "aws"], {
      env: {
        MEMGATE_TABLE: "t",
        MEMGATE_BUCKET: "b",
        MEMGATE_QUEUE_URL: "http://127.0.0.1:9/q",
        AWS_ENDPOINT_URL_DYNAMODB: "http://127.0.0.1:9",
        AWS_ACCESS_KEY_ID: "test",
        AWS_SECRET_ACCESS_KEY: "test",
        AWS_REGION: "us-east-1",
        AWS_MAX_ATTEMPTS: "1",
      },
    });
    expect(result.code).toBe(3);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toMatch(/safe to retry; MEMGATE_DEBUG=1 shows the stack/);
  });
});
