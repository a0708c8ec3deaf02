// Each Lambda bundled as it is deployed, then loaded in a plain Node process from a folder with
// nothing of the repository beside it: it must start and export its handler.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module script without types
import { buildLambdas, LAMBDA_NAMES } from "../../scripts/bundle-lambdas.mjs";

type Built = Record<string, { outfile: string; inputs: string[] }>;
let built: Built;

beforeAll(async () => {
  built = await buildLambdas(mkdtempSync(join(tmpdir(), "memgate-lambdas-")));
}, 120_000);

describe("the Lambda bundles", () => {
  it("bundles api, worker, outbox, sweep and audit", () => {
    expect([...LAMBDA_NAMES].sort()).toEqual(["api", "audit", "outbox", "sweep", "worker"]);
  });

  it.each(["api", "worker", "outbox", "sweep", "audit"])("%s loads alone in a plain Node process", (name) => {
    const folder = mkdtempSync(join(tmpdir(), `memgate-${name}-`));
    mkdirSync(folder, { recursive: true });
    const entry = join(folder, "index.mjs");
    copyFileSync(built[name]?.outfile as string, entry);
    const result = spawnSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const m = await import(${JSON.stringify(entry)}); console.log(typeof m.handler);`,
      ],
      {
        cwd: folder,
        encoding: "utf8",
        env: {
          PATH: process.env.PATH,
          MEMGATE_TENANT: "acme",
          MEMGATE_TABLE: "memgate-acme",
          MEMGATE_BUCKET: "memgate-acme",
          MEMGATE_QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/123456789012/memgate.fifo",
          AWS_REGION: "us-east-1",
        },
      },
    );
    expect(result.stderr.replace(/\(node:\d+\) Warning: NodeVersionSupportWarning[\s\S]*$/, "")).toBe("");
    expect(result.stdout.trim()).toBe("function");
  });

  it.each(["api", "worker", "outbox", "sweep", "audit"])(
    "%s holds no SQLite, no file-reading code of ours, no process.exit",
    (name) => {
      const inputs = built[name]?.inputs ?? [];
      expect(
        inputs.filter((path) =>
          /better-sqlite3|adapters\/embedded|shared\/io\/read-text|shared\/cli\//.test(path),
        ),
      ).toEqual([]);
      const text = readFileSync(built[name]?.outfile as string, "utf8");
      expect(text).not.toMatch(/process\.exit\(/);
    },
  );

  it.each(["outbox", "sweep"])(
    "%s runs no gate and no model: no lemmatiser lexicon, tokenizer or model client in its bundle",
    (name) => {
      const inputs = built[name]?.inputs ?? [];
      expect(
        inputs.filter((path) =>
          // The gate's report schema (records and reports are parsed) is all of the gate they hold.
          /wink-|stopwords-iso|js-tiktoken|node_modules\/openai\/|client-bedrock-runtime|shared\/domain\/gate\/(?!report\.ts$)/.test(
            path,
          ),
        ),
      ).toEqual([]);
    },
  );

  it.each(["api", "worker", "audit"])("%s, which gates, carries the lexicon its gate reads", (name) => {
    expect((built[name]?.inputs ?? []).some((path) => path.includes("wink-lexicon"))).toBe(true);
  });

  it("a bad configuration fails the cold start with one line naming the setting", () => {
    const folder = mkdtempSync(join(tmpdir(), "memgate-bad-"));
    const entry = join(folder, "index.mjs");
    copyFileSync(built.worker?.outfile as string, entry);
    const result = spawnSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        // What the Lambda runtime reports of a failed init: the error's name and message.
        `try { await import(${JSON.stringify(entry)}); } catch (e) { console.error(e.name + ": " + e.message); process.exitCode = 1; }`,
      ],
      {
        cwd: folder,
        encoding: "utf8",
        env: { PATH: process.env.PATH, MEMGATE_TENANT: "acme", AWS_REGION: "us-east-1" },
      },
    );
    expect(result.status).not.toBe(0);
    const line = result.stderr.split("\n").find((l) => l.startsWith("LambdaConfigError")) ?? "";
    expect(line).toMatch(/set MEMGATE_TABLE \(.*\), MEMGATE_BUCKET \(.*\), MEMGATE_QUEUE_URL/);
  });
});
