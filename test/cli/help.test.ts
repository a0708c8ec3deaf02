import { describe, expect, it } from "vitest";
import { memgate } from "#harness/cli.ts";

describe("memgate <command> --help", () => {
  it.each([
    [
      "consolidate",
      ["--home DIR", "--store KIND", "--model NAME", "--budget TOKENS", "--timeout-ms MS", "--json"],
    ],
    ["recover", ["--selector VERSION", "--model NAME", "--home DIR"]],
    ["settings", ["--publish-mode MODE", "--bypass on|off", "--rebuild-after EVENTS"]],
    ["gate", ["--events FILE", "--candidate FILE", "--policy FILE", "--budget TOKENS"]],
  ])("%s lists each of its flags on a line of its own", async (command, flags) => {
    const result = await memgate([command, "--help"]);
    expect(result.code).toBe(0);
    const lines = result.stdout.split("\n");
    for (const flag of flags) expect(lines.some((line) => line.trimStart().startsWith(flag))).toBe(true);
  });

  it("names the models where --model is taken", async () => {
    expect((await memgate(["run", "--help"])).stdout).toMatch(
      /Models: deterministic-v1 .*openai:MODEL[\s\S]*Test doubles: .*polarity-flip/,
    );
  });
});
