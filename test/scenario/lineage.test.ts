import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import { appendEvents } from "#app/append.ts";
import { lineageDot, lineageProv } from "#app/lineage.ts";
import { run } from "#app/run.ts";
import { takeSnapshot } from "#app/snapshot.ts";
import { memgate } from "#harness/cli.ts";
import { depsOverStore, factsBatch } from "#harness/pipeline-builders.ts";

const home = mkdtempSync(join(tmpdir(), "memgate-lineage-"));
const store = new SqliteStore(home);
afterAll(() => store.close());

describe("lineage", () => {
  it("PROV-JSON: events and claims as entities, each claim derived from its events, the consolidation as activity, prompt and model as agents", async () => {
    const deps = depsOverStore(store);
    await appendEvents(deps, "lin", factsBatch(1, 3));
    const outcome = await run(deps, await takeSnapshot(deps, "lin"));
    const artifactId = (outcome as { artifactId: string }).artifactId;
    const manifest = await store.readManifest("lin", artifactId);
    const body = await store.readArtifact("lin", artifactId);
    const prov = lineageProv({ manifest, body, status: "PUBLISHED" }) as Record<
      string,
      Record<string, Record<string, string>>
    >;
    expect(Object.keys(prov.entity ?? {})).toEqual(
      expect.arrayContaining([
        `memgate:${artifactId}`,
        "memgate:event/m-1",
        "memgate:event/m-3",
        `memgate:${artifactId}#claim-0`,
      ]),
    );
    const derivations = Object.values(prov.wasDerivedFrom ?? {});
    expect(derivations).toContainEqual({
      "prov:generatedEntity": `memgate:${artifactId}#claim-0`,
      "prov:usedEntity": "memgate:event/m-1",
    });
    expect(Object.values(prov.wasAssociatedWith ?? {})[0]).toMatchObject({
      "prov:agent": "memgate:model/deterministic-v1",
      "prov:plan": "memgate:prompt/consolidate-v1",
    });
    const dot = lineageDot({ manifest, body, status: "PUBLISHED" });
    expect(dot).toMatch(/^digraph lineage \{/);
    expect(dot).toContain(`"${artifactId}#claim-0" -> "m-1" [label="derived from"];`);

    const cli = await memgate(["lineage", artifactId, "--home", home, "--format", "dot"]);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain("digraph lineage");
    expect((await memgate(["lineage", artifactId, "--home", home, "--format", "svg"])).code).toBe(2);
    expect((await memgate(["lineage", "not-an-artifact", "--home", home])).code).toBe(2);
  });
});
