// `memgate snapshot --through H` through the real executable, as issue 39 reproduced it: a
// revocation at 16 of m-15, then a snapshot through 15, generated and published, served m-15.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { memgate } from "#harness/cli.ts";

describe("memgate snapshot --through below where the epoch began", () => {
  it("is refused (exit 4) naming the lowest coverage; the snapshot at the clock serves no revoked event", async () => {
    const home = mkdtempSync(join(tmpdir(), "memgate-through-"));
    const facts = join(home, "facts.jsonl");
    const revocation = join(home, "revocation.jsonl");
    writeFileSync(
      facts,
      Array.from({ length: 15 }, (_, i) =>
        JSON.stringify({
          eventId: `m-${i + 1}`,
          kind: "fact",
          text: `Fact number ${i + 1} about alpha.`,
          assertions: [{ key: `alpha.f${i + 1}`, value: { quantity: String(i + 1) }, polarity: "affirmed" }],
        }),
      ).join("\n"),
    );
    writeFileSync(revocation, JSON.stringify({ eventId: "r-16", kind: "revocation", revokes: ["m-15"] }));
    expect((await memgate(["append", "alex", facts, "--home", home])).code).toBe(0);
    expect((await memgate(["append", "alex", revocation, "--home", home])).code).toBe(0);

    const below = await memgate(["snapshot", "alex", "--through", "15", "--home", home]);
    expect(below.code).toBe(4);
    expect(below.stdout).toBe("");
    expect(below.stderr).toMatch(
      /snapshot refused \(epoch-moved\): --through 15 is below 16, where epoch 1 of alex began/,
    );

    const snapshot = join(home, "snapshot.json");
    const taken = await memgate(["snapshot", "alex", "--home", home]);
    expect(JSON.parse(taken.stdout)).toEqual({
      subject: "alex",
      highWater: 16,
      inputEpoch: 1,
      epochMovedAt: 16,
      expectedAlias: null,
    });
    // The message the snapshot printed before (coverage 15 at the clock's epoch) is refused too.
    writeFileSync(snapshot, JSON.stringify({ ...JSON.parse(taken.stdout), highWater: 15 }));
    expect((await memgate(["generate", snapshot, "--home", home])).code).toBe(4);
    writeFileSync(snapshot, taken.stdout);
    expect((await memgate(["run", snapshot, "--home", home])).code).toBe(0);
    const recall = JSON.parse((await memgate(["recall", "alex", "--home", home, "--json"])).stdout);
    expect(recall.mode).toBe("summary");
    expect(recall.claims.flatMap((claim: { derivedFrom: string[] }) => claim.derivedFrom)).not.toContain(
      "m-15",
    );
    expect((await memgate(["audit", "--home", home])).code).toBe(0);
  });
});
