import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_PROMPT_VERSION } from "#app/prompts.ts";
import { sha256 } from "#domain/hashing.ts";
import { memgate } from "#harness/cli.ts";

describe("the command line bundle", () => {
  it("carries every prompt inline: no prompts/ folder is read, and the manifest's hash is the file's", async () => {
    const { ensureBundle } = await import("../../scripts/bundle.mjs");
    const folder = dirname(await ensureBundle());
    const bundle = readdirSync(folder)
      .filter((name) => name.endsWith(".mjs"))
      .map((name) => readFileSync(join(folder, name), "utf8"))
      .join("\n");
    const prompt = readFileSync(
      join(import.meta.dirname, `../../prompts/${DEFAULT_PROMPT_VERSION}.md`),
      "utf8",
    );
    const firstLine = JSON.stringify(prompt.split("\n")[0]).slice(1, -1);
    expect(bundle.includes(firstLine), "the prompt's text is inside the bundle").toBe(true);
    const home = mkdtempSync(join(tmpdir(), "memgate-bundle-"));
    const events = join(home, "events.jsonl");
    writeFileSync(events, `${JSON.stringify({ eventId: "m-1", kind: "fact", text: "Budget is 5 USD." })}\n`);
    expect((await memgate(["append", "alex", events, "--home", home])).code).toBe(0);
    expect((await memgate(["consolidate", "alex", "--home", home])).code).toBe(0);
    const [manifestName] = readdirSync(join(home, "manifests", "alex"));
    const manifest = JSON.parse(
      readFileSync(join(home, "manifests", "alex", manifestName as string), "utf8"),
    );
    const file = readFileSync(
      join(import.meta.dirname, `../../prompts/${DEFAULT_PROMPT_VERSION}.md`),
      "utf8",
    );
    expect(manifest.promptHash).toBe(sha256(file));
  });

  it("lists every prompt file, each with its file's exact text", async () => {
    const { PROMPT_FILES } = await import("#app/prompt-files.ts");
    const folder = join(import.meta.dirname, "../../prompts");
    const files = Object.fromEntries(
      readdirSync(folder)
        .filter((name) => name.endsWith(".md"))
        .map((name) => [name.slice(0, -3), readFileSync(join(folder, name), "utf8")]),
    );
    expect(PROMPT_FILES).toEqual(files);
  });

  it("bundles the tokenizer's rank table: a bundle counts tokens with no node_modules beside it", async () => {
    const { build } = await import("esbuild");
    const folder = mkdtempSync(join(tmpdir(), "memgate-tokens-"));
    await build({
      entryPoints: [join(import.meta.dirname, "../../shared/domain/tokens.ts")],
      bundle: true,
      outfile: join(folder, "tokens.mjs"),
      format: "esm",
      platform: "node",
      logLevel: "error",
    });
    const { countTokens } = (await import(join(folder, "tokens.mjs"))) as {
      countTokens: (text: string) => number;
    };
    expect(countTokens("Budget for alpha is 12,500 USD.")).toBeGreaterThan(5);
  });
});
