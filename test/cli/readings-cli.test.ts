import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { memgate } from "#harness/cli.ts";
import { bucketReading } from "../support/builders.ts";

/**
 * Selector v3 through the real executable (CONTRACT §5): `policy` and `settings` take `latest`
 * rules and refuse bad ones with exit 2 naming the flag, `recover --selector` takes v3 (v2 kept),
 * `migrate` moves nothing twice.
 */

async function store() {
  const home = mkdtempSync(join(tmpdir(), "memgate-readings-"));
  const cli = (...args: string[]) => memgate([...args, "--home", home]);
  const input = `${JSON.stringify(bucketReading("oct", "4.6", "2026-10-26"))}\n${JSON.stringify(bucketReading("dec", "4.1", "2026-12-03"))}\n`;
  expect((await memgate(["append", "ana", "-", "--home", home], { input })).code).toBe(0);
  return cli;
}

const json = (stdout: string) => JSON.parse(stdout) as Record<string, unknown>;

describe("memgate and latest rules", () => {
  it("refuses a malformed rule with exit 2, naming the flag, and writes nothing", async () => {
    const cli = await store();
    const bad = await cli("policy", "ana", "--latest", '{"key": "x"');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--latest .* is not JSON/);
    const empty = await cli("policy", "ana", "--latest", "");
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/--latest/);
    const settings = await cli("settings", "--latest", '{"key": "x", "scope": "y", "z": 1}');
    expect(settings.code).toBe(2);
    expect(settings.stderr).toMatch(/--latest/);
    expect(json((await cli("policy", "ana", "--json")).stdout).effectiveLatest).toEqual([]);
  });

  it("a subject's rule moves the epoch once; the store default applies where a subject has none", async () => {
    const cli = await store();
    const epoch = async () => json((await cli("clock", "ana", "--json")).stdout).inputEpoch as number;
    const before = await epoch();
    const set = await cli("policy", "ana", "--latest", "backup.bucket_size", "--json");
    expect(set.code).toBe(0);
    expect(json(set.stdout)).toMatchObject({ epochMoved: true, policy: { latest: ["backup.bucket_size"] } });
    expect(await epoch()).toBe(before + 1);
    // A further rule that covers nothing here moves nothing.
    expect(json((await cli("policy", "ana", "--latest", "stock.*", "--json")).stdout).epochMoved).toBe(false);
    // Back to the store default (no rules): the readings conflict again.
    expect(json((await cli("policy", "ana", "--latest-default", "--json")).stdout).epochMoved).toBe(true);
    const settings = await cli("settings", "--latest", "backup.*", "--json");
    expect(settings.code).toBe(0);
    expect(json(settings.stdout).latest).toEqual(["backup.*"]);
    expect(json((await cli("policy", "ana", "--json")).stdout).effectiveLatest).toEqual(["backup.*"]);
    expect(await epoch()).toBe(before + 3);
  });

  it("recover takes --selector v3 (the default) and v2; another name is exit 2; migrate moves nothing twice", async () => {
    const cli = await store();
    expect((await cli("policy", "ana", "--latest", "backup.bucket_size")).code).toBe(0);
    const claims = async () =>
      ((json((await cli("recall", "ana", "--json")).stdout).claims ?? []) as Array<{ status: string }>).map(
        (claim) => claim.status,
      );
    expect((await cli("recover", "ana", "--selector", "v2")).code).toBe(0);
    expect(await claims()).toEqual(["contested", "contested"]);
    expect((await cli("recover", "ana", "--selector", "v3")).code).toBe(0);
    expect(await claims()).toEqual(["settled", "earlier"]);
    const wrong = await cli("recover", "ana", "--selector", "v4");
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/--selector must be one of v1, v2, v3/);
    const migrated = await cli("migrate", "--json");
    expect(migrated.code).toBe(0);
    expect(json(migrated.stdout)).toEqual({ migrated: [] });
  });
});
