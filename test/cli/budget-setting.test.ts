// The store's default summary budget (`memgate settings --budget`) through the real executable and
// `memgate serve` over a real socket: set, shown, used by the prompts when no --budget is given,
// beaten by --budget, cleared (segmented generation: test/models/segmented-wire.test.ts).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MemgateApiError, MemgateClient } from "#client/client.ts";
import { memgate } from "#harness/cli.ts";
import { type ServeProcess, startServe } from "#harness/serve-process.ts";

const home = mkdtempSync(join(tmpdir(), "memgate-budget-setting-"));
let server: ServeProcess | undefined;
afterAll(async () => {
  if (server && server.child.exitCode === null) await server.stop("SIGKILL");
});

/** The prompts `memgate prompt` renders for `model`, joined. */
async function prompts(snapshot: string, model: string, extra: string[] = []): Promise<string> {
  const shown = await memgate(["prompt", snapshot, "--home", home, "--model", model, "--json", ...extra]);
  expect(shown.code).toBe(0);
  return (JSON.parse(shown.stdout).prompts as Array<{ system: string; prompt: string }>)
    .map((p) => `${p.system}\n${p.prompt}`)
    .join("\n");
}

describe("memgate settings --budget", () => {
  it("sets the budget the prompt asks for when none is given (v2 and v3), --budget wins, none clears", async () => {
    const events = join(home, "events.jsonl");
    writeFileSync(
      events,
      `${JSON.stringify({ eventId: "c-1", kind: "constraint", text: "Backups must be encrypted." })}\n${JSON.stringify({ eventId: "f-1", kind: "fact", text: "The office moved to Porto on 2026-10-01." })}\n`,
    );
    expect((await memgate(["append", "ana", events, "--home", home])).code).toBe(0);
    const snapshot = join(home, "snapshot.json");
    writeFileSync(snapshot, (await memgate(["snapshot", "ana", "--home", home])).stdout);
    const unset = await prompts(snapshot, "openai:gpt-x");
    expect(unset).toContain("There is no fixed budget");
    expect(await prompts(snapshot, "openai:gpt-x", ["--prompt", "consolidate-v2"])).toContain(
      "There is no token budget",
    );

    const set = await memgate(["settings", "--home", home, "--budget", "777", "--json"]);
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ budget: 777, publishMode: "live" });
    expect((await memgate(["settings", "--home", home])).stdout).toContain("budget 777 tokens");
    expect(await prompts(snapshot, "openai:gpt-x")).toContain("The answer must fit 777 tokens");
    expect(await prompts(snapshot, "openai:gpt-x", ["--prompt", "consolidate-v2"])).toContain(
      "The answer must fit 777 tokens",
    );
    expect(await prompts(snapshot, "openai:gpt-x", ["--budget", "900"])).toContain(
      "The answer must fit 900 tokens",
    );

    const cleared = await memgate(["settings", "--home", home, "--budget", "none", "--json"]);
    expect(JSON.parse(cleared.stdout).budget).toBeNull();
    expect(await prompts(snapshot, "openai:gpt-x")).toBe(unset);
    for (const bad of ["0", "-5", "lots", "100000001"]) {
      const refused = await memgate(["settings", "--home", home, `--budget=${bad}`]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(
        /--budget must be a whole number of tokens from 1 to 100000000, or none/,
      );
    }
  });

  it("PUT /v1/settings sets and clears the budget over a real socket; a bad one is 400 naming it", async () => {
    server = await startServe(["--home", home]);
    const client = new MemgateClient({ baseUrl: server.url });
    expect((await client.settings()).budget).toBeNull();
    expect(await client.updateSettings({ budget: 2500 })).toMatchObject({
      budget: 2500,
      publishMode: "live",
    });
    expect((await client.settings()).budget).toBe(2500);
    const refused = await client.updateSettings({ budget: 0 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(MemgateApiError);
    expect((refused as MemgateApiError).field).toBe("budget");
    expect((await client.updateSettings({ budget: null })).budget).toBeNull();
    expect((await memgate(["settings", "--home", home, "--json"])).stdout).toContain('"budget":null');
  });
});
