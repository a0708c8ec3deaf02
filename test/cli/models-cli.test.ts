import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import { readInputs } from "#app/snapshot.ts";
import { consolidate } from "#domain/consolidator.ts";
import type { ConsolidationOutput } from "#domain/schemas.ts";
import { memgate } from "#harness/cli.ts";
import { type ModelServer, startModelServer } from "#harness/model-servers.ts";
import { SUBJECT_EVENTS } from "../models/fixtures.ts";

/**
 * The model names of CONTRACT §5 through the real executable: `memgate prompt` shows what would be
 * sent; `openai:MODEL` reads OPENAI_BASE_URL and OPENAI_API_KEY from the environment; a failing
 * model is exit 5 with nothing recorded; `record:DIR:INNER` keeps answers that `replay:DIR` serves.
 */
describe("memgate with a language model", () => {
  let server: ModelServer;
  let honest: ConsolidationOutput | undefined;
  beforeAll(async () => {
    server = await startModelServer("openai", () => ({ answer: honest }));
  });
  afterAll(() => server.close());

  async function subject(): Promise<{ home: string; snapshot: string }> {
    const home = mkdtempSync(join(tmpdir(), "memgate-cli-models-"));
    const events = join(home, "events.jsonl");
    writeFileSync(events, SUBJECT_EVENTS.map((e) => JSON.stringify(e)).join("\n"));
    expect((await memgate(["append", "alex", events, "--home", home])).code).toBe(0);
    const snapshot = join(home, "snapshot.json");
    writeFileSync(snapshot, (await memgate(["snapshot", "alex", "--home", home])).stdout);
    const store = SqliteStore.open(home);
    try {
      const { context } = await readInputs({ events: store }, "alex", SUBJECT_EVENTS.length);
      honest = consolidate(context);
    } finally {
      store.close();
    }
    return { home, snapshot };
  }

  const modelEnv = () => ({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-cli-test" });

  it("memgate prompt prints the rendered prompt, sends nothing, and needs no key", async () => {
    const { home, snapshot } = await subject();
    const before = server.requests.length;
    const text = await memgate(["prompt", snapshot, "--home", home, "--model", "openai:gpt-test"], {
      env: { OPENAI_API_KEY: "", OPENAI_BASE_URL: "" },
    });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^=== consolidate prompt 1 of 1 · sha256:[0-9a-f]{64} · \d+ tokens/);
    expect(text.stdout).toContain(
      '{"id":"e-2","kind":"constraint","text":"Backups must be encrypted and never leave eu-west-1.","trust":"user"}',
    );
    const json = JSON.parse(
      (await memgate(["prompt", snapshot, "--home", home, "--model", "segmented:openai:gpt-test", "--json"]))
        .stdout,
    );
    expect(json.model).toBe("segmented:openai:gpt-test");
    expect(json.prompts.length).toBeGreaterThan(0);
    expect(json.prompts.every((p: { kind: string }) => p.kind === "segment")).toBe(true);
    expect(server.requests.length).toBe(before);
  });

  it("openai:MODEL from the environment: PUBLISHED (exit 0); a 500 that persists is exit 5 with nothing recorded", async () => {
    const { home } = await subject();
    const ok = await memgate(["consolidate", "alex", "--home", home, "--model", "openai:gpt-test"], {
      env: modelEnv(),
    });
    expect(ok.code, ok.stderr).toBe(0);
    expect(server.requests.at(-1)?.headers.authorization).toBe("Bearer sk-cli-test");
    expect(ok.stderr).not.toContain("sk-cli-test");

    const failing = await subject();
    server.script = () => ({ error: 503, type: "server_error", message: "overloaded" });
    const failed = await memgate(
      ["consolidate", "alex", "--home", failing.home, "--model", "openai:gpt-test", "--timeout-ms", "3000"],
      {
        env: modelEnv(),
      },
    );
    server.script = () => ({ answer: honest });
    expect(failed.code).toBe(5);
    expect(failed.stderr).toMatch(/503/);
    const artifacts = await memgate(["artifacts", "alex", "--home", failing.home, "--json"]);
    expect(JSON.parse(artifacts.stdout)).toEqual([]);
  });

  it("openai:MODEL without a key or a base URL is refused before anything is opened", async () => {
    const { home } = await subject();
    const refused = await memgate(["consolidate", "alex", "--home", home, "--model", "openai:gpt-test"], {
      env: { OPENAI_API_KEY: "", OPENAI_BASE_URL: "" },
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/needs OPENAI_API_KEY/);
  });

  it("record:DIR:openai:MODEL keeps every answer; replay:DIR serves them with no server; an unrecorded prompt is exit 5", async () => {
    const { home, snapshot } = await subject();
    const answers = mkdtempSync(join(tmpdir(), "memgate-answers-"));
    const recorded = await memgate(
      ["generate", snapshot, "--home", home, "--model", `record:${answers}:openai:gpt-test`],
      {
        env: modelEnv(),
      },
    );
    expect(recorded.code, recorded.stderr).toBe(0);
    const files = readdirSync(answers);
    expect(files).toHaveLength(1);
    const recording = JSON.parse(readFileSync(join(answers, files[0] as string), "utf8"));
    expect(recording).toMatchObject({ kind: "consolidate", model: "openai:gpt-test" });
    expect(`${files[0]}`).toBe(`${recording.promptHash.slice("sha256:".length)}.json`);

    const before = server.requests.length;
    const replayed = await memgate([
      "run",
      snapshot,
      "--home",
      home,
      "--model",
      `replay:${answers}`,
      "--json",
    ]);
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(JSON.parse(replayed.stdout).status).toBe("PUBLISHED");
    expect(server.requests.length).toBe(before);

    const other = await subject();
    const missing = await memgate([
      "generate",
      other.snapshot,
      "--home",
      other.home,
      "--model",
      `replay:${mkdtempSync(join(tmpdir(), "memgate-empty-"))}`,
    ]);
    expect(missing.code).toBe(5);
    expect(missing.stderr).toMatch(/no recorded answer for the consolidate prompt sha256:[0-9a-f]{64}/);
  });
});
