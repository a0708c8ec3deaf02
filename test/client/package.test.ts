// The published client as a user gets it: `memgate/client` imported by package name from plain
// Node (no TypeScript loader) and type-checked from a consumer's TypeScript, both from a folder
// outside the repository where memgate is an installed package.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module script without types
import { buildClient } from "../../scripts/build-client.mjs";

const ROOT = join(import.meta.dirname, "..", "..");
let consumer: string;

beforeAll(async () => {
  await buildClient();
  consumer = mkdtempSync(join(tmpdir(), "memgate-consumer-"));
  mkdirSync(join(consumer, "node_modules"));
  symlinkSync(ROOT, join(consumer, "node_modules", "memgate"), "dir");
  writeFileSync(join(consumer, "package.json"), JSON.stringify({ type: "module", private: true }));
}, 120_000);

describe("memgate/client, built", () => {
  it("imports in plain Node and answers through its fetch: a clock, then the contract's error", () => {
    const script = `
      import { MemgateApiError, MemgateClient } from "memgate/client";
      const client = new MemgateClient({
        baseUrl: "http://memgate.test",
        token: "t0ken-for-test",
        fetch: async (request) => request.url.endsWith("/clock")
          ? Response.json({ highWater: 2, inputEpoch: 1, alias: null, auth: request.headers.get("authorization") })
          : Response.json({ error: { code: "not-found", message: "subject: no events", field: "subject" } }, { status: 404 }),
      });
      const clock = await client.clock("ana");
      const refused = await client.recall("nobody").catch((error) => error);
      console.log(JSON.stringify({ clock, refused: refused instanceof MemgateApiError ? [refused.status, refused.field] : String(refused) }));
    `;
    const result = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: consumer,
      encoding: "utf8",
      env: { PATH: process.env.PATH },
    });
    expect(result.stderr).toBe("");
    expect(JSON.parse(result.stdout)).toEqual({
      clock: { highWater: 2, inputEpoch: 1, alias: null, auth: "Bearer t0ken-for-test" },
      refused: [404, "subject"],
    });
  });

  it("type-checks in a consumer's TypeScript (NodeNext) from its declarations", () => {
    writeFileSync(
      join(consumer, "use.ts"),
      [
        'import { type Clock, MemgateClient } from "memgate/client";',
        'const client = new MemgateClient({ baseUrl: "http://127.0.0.1:8787" });',
        'export const clock: Promise<Clock> = client.clock("ana");',
        'export const mode: Promise<"summary" | "raw"> = client.recall("ana").then((r) => r.mode);',
        "",
      ].join("\n"),
    );
    writeFileSync(
      join(consumer, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          module: "NodeNext",
          moduleResolution: "NodeNext",
          target: "ES2022",
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: [],
        },
        files: ["use.ts"],
      }),
    );
    const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
    const result = spawnSync(process.execPath, [tsc, "-p", join(consumer, "tsconfig.json")], {
      cwd: consumer,
      encoding: "utf8",
    });
    expect(result.stdout + result.stderr).toBe("");
    expect(result.status).toBe(0);
  });
});
