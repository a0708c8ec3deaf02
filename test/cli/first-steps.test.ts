// What a new user meets first, through the real executable (issue 39's list): the README's event
// example and append command, an unknown subject, the clock's JSON, the search hint naming the
// subject, the cold note under a query, a budget below the text's frame, who builds a requested
// rebuild, and the demo's temporary folder.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MemoryEvent } from "#domain/schemas.ts";
import { memgate } from "#harness/cli.ts";
import { cliSearchHint } from "../../shared/cli/recall-command.ts";

const README = readFileSync(join(import.meta.dirname, "../../README.md"), "utf8");

/** The fenced block of `language` that follows `heading` in the README. */
function readmeBlock(heading: string, language: string): string {
  const section = README.slice(README.indexOf(heading));
  const start = section.indexOf(`\`\`\`${language}\n`) + language.length + 4;
  return section.slice(start, section.indexOf("```", start));
}

describe("the README's first events", () => {
  it("shows a fact with an assertion and a note that are MemoryEvents, and an append command that stores them", async () => {
    const lines = readmeBlock("## Your first events", "json").trim().split("\n");
    const events = lines.map((line) => MemoryEvent.parse(JSON.parse(line)));
    expect(events.map((event) => event.kind)).toEqual(["fact", "note"]);
    expect(events[0]?.assertions).toHaveLength(1);

    const script = readmeBlock("## Your first events", "sh");
    const heredoc = /^npx memgate append alex - <<'END'\n([\s\S]*?)\nEND$/m.exec(script);
    expect(heredoc?.[1]?.split("\n")).toEqual(lines);
    const home = mkdtempSync(join(tmpdir(), "memgate-first-"));
    const appended = await memgate(["append", "alex", "-", "--home", home, "--json"], {
      input: `${heredoc?.[1]}\n`,
    });
    expect(appended.code).toBe(0);
    expect(JSON.parse(appended.stdout)).toMatchObject({ appended: ["m-1", "m-2"], highWater: 2 });
    // The clock line of the README is what the command prints.
    const clock = await memgate(["clock", "alex", "--home", home]);
    expect(`npx memgate clock alex                  # ${clock.stdout.trim()}`).toBe(
      script.split("\n").find((line) => line.startsWith("npx memgate clock")),
    );
  });
});

describe("an unknown subject", () => {
  it("is refused by recall, clock, snapshot, consolidate and revoke (exit 2, one line), in every output, and nothing is written", async () => {
    const home = mkdtempSync(join(tmpdir(), "memgate-unknown-"));
    writeFileSync(join(home, "one.jsonl"), '{"eventId":"a","kind":"fact","text":"one"}\n');
    expect((await memgate(["append", "ana", join(home, "one.jsonl"), "--home", home])).code).toBe(0);
    for (const args of [
      ["recall", "bob"],
      ["recall", "bob", "--json"],
      ["recall", "bob", "--format", "text"],
      ["clock", "bob"],
      ["clock", "bob", "--json"],
      ["snapshot", "bob"],
      ["consolidate", "bob"],
      ["revoke", "bob", "a"],
    ]) {
      const result = await memgate([...args, "--home", home]);
      expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code: 2, stdout: "" });
      expect(result.stderr).toBe(`memgate ${args[0]}: subject: no events for "bob"\n`);
    }
    // consolidate made no summary that would make bob appear.
    expect((await memgate(["artifacts", "bob", "--home", home])).stdout).toBe("no artifacts for bob\n");
  });
});

describe("the command line's recall as text", () => {
  it("names the subject in the search hint, quoted for a shell when it needs it", () => {
    expect(cliSearchHint("ana")).toBe("memgate recall ana --query WORDS");
    expect(cliSearchHint("user:ana@proj-a")).toBe("memgate recall user:ana@proj-a --query WORDS");
    expect(cliSearchHint("ana lopez")).toBe("memgate recall 'ana lopez' --query WORDS");
    expect(cliSearchHint("it's $HOME")).toBe("memgate recall 'it'\\''s $HOME' --query WORDS");
    expect(cliSearchHint("-x")).toBe("memgate recall --query WORDS -- -x");
    expect(cliSearchHint("a\u2028b'")).toBe("memgate recall $'a\\u2028b\\'' --query WORDS");
  });

  it("counts a cold input a query served as shown, and says when the budget is below the first line and notes", async () => {
    const home = mkdtempSync(join(tmpdir(), "memgate-cold-"));
    const subject = "ana lopez";
    writeFileSync(
      join(home, "events.jsonl"),
      [
        { eventId: "c-1", kind: "constraint", text: "Backups must be encrypted." },
        { eventId: "n-1", kind: "note", text: "Prefers green tea in the afternoon." },
        { eventId: "n-2", kind: "note", text: "Lunch was late today." },
        { eventId: "n-3", kind: "note", text: "The train was full this morning." },
        { eventId: "n-4", kind: "note", text: "It rained over the harbour." },
      ]
        .map((event) => JSON.stringify(event))
        .join("\n"),
    );
    expect((await memgate(["append", subject, join(home, "events.jsonl"), "--home", home])).code).toBe(0);
    expect((await memgate(["consolidate", subject, "--home", home])).code).toBe(0);
    const text = (...more: string[]) =>
      memgate(["recall", subject, "--home", home, "--format", "text", ...more]);

    const plain = (await text()).stdout;
    expect(plain).toContain(
      "# cold: 4 inputs not shown; search them with memgate recall 'ana lopez' --query WORDS\n",
    );
    const queried = (await text("--query", "green tea")).stdout;
    expect(queried).toMatch(/## matches\nnote: "Prefers green tea in the afternoon\." ← n-1\n/);
    const shown = queried
      .slice(queried.indexOf("## matches\n"))
      .split("\n")
      .filter((line) => line.startsWith("note: ")).length;
    expect(shown).toBeGreaterThan(0);
    expect(shown).toBeLessThan(4);
    expect(queried).toContain(
      `# cold: ${4 - shown} input${4 - shown === 1 ? "" : "s"} not shown; search them with memgate recall 'ana lopez' --query WORDS\n`,
    );

    for (const budget of ["5", "30"]) {
      const short = (await text("--budget", budget)).stdout;
      const needed = Number(
        new RegExp(
          `^# the budget of ${budget} tokens is below what the header and notes alone need: (\\d+)$`,
          "m",
        ).exec(short)?.[1],
      );
      expect(needed).toBeGreaterThan(Number(budget));
      expect(short).not.toContain("## claims");
      const json = JSON.parse(
        (await memgate(["recall", subject, "--home", home, "--json", "--budget", budget])).stdout,
      );
      // The JSON rendering counts its items alone: nothing is set aside, so nothing to say.
      expect(json.budgetBelowFrame).toBeNull();
    }
    const roomy = (await text("--budget", "200")).stdout;
    expect(roomy).toContain("## claims");
    expect(roomy).not.toContain("# the budget of");
  });
});

describe("who builds a requested rebuild", () => {
  it("is said by revoke and append on the embedded store, in text and in JSON, and consolidate builds it", async () => {
    const home = mkdtempSync(join(tmpdir(), "memgate-rebuild-"));
    writeFileSync(
      join(home, "events.jsonl"),
      '{"eventId":"a","kind":"fact","text":"Budget is 10 USD."}\n{"eventId":"b","kind":"fact","text":"Vendor is Acme."}\n',
    );
    const appended = await memgate(["append", "ana", join(home, "events.jsonl"), "--home", home]);
    expect(appended.stdout).toMatch(
      /; rebuild requested: nothing builds it in this process: .*memgate consolidate ana/,
    );
    expect((await memgate(["consolidate", "ana", "--home", home])).code).toBe(0);
    const revoked = await memgate(["revoke", "ana", "a", "--home", home]);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toMatch(
      /^revoked a: epoch 1; STALE: \S+; rebuild requested: nothing builds it in this process: a memgate serve or memgate mcp on this home builds it at its next sweep \(within a minute\), or run memgate consolidate ana \(or memgate sweep\); until then recall answers the raw valid events\n$/,
    );
    const json = JSON.parse((await memgate(["revoke", "ana", "b", "--home", home, "--json"])).stdout);
    expect(json).toMatchObject({
      rebuildRequested: true,
      rebuild: expect.stringMatching(/memgate consolidate ana/),
    });
    expect(JSON.parse((await memgate(["recall", "ana", "--home", home, "--json"])).stdout).mode).toBe("raw");
    expect((await memgate(["consolidate", "ana", "--home", home])).code).toBe(0);
    expect(JSON.parse((await memgate(["recall", "ana", "--home", home, "--json"])).stdout).mode).toBe(
      "summary",
    );
  });
});

describe("memgate demo's temporary folder", () => {
  it("is removed at the end, also when a step fails, unless --keep", async () => {
    const parent = mkdtempSync(join(tmpdir(), "memgate-demo-parent-"));
    const env = { TMPDIR: join(parent, "ok") };
    mkdirSync(env.TMPDIR);
    const ok = await memgate(["demo"], { env });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/removed at the end: --keep keeps it/);
    expect(readdirSync(env.TMPDIR)).toEqual([]);

    const failing = { TMPDIR: join(parent, "failing"), MEMGATE_FAILPOINTS: "after-publish=error" };
    mkdirSync(failing.TMPDIR);
    expect((await memgate(["demo"], { env: failing })).code).toBe(3);
    expect(readdirSync(failing.TMPDIR)).toEqual([]);

    const kept = { TMPDIR: join(parent, "kept") };
    mkdirSync(kept.TMPDIR);
    const facts = JSON.parse((await memgate(["demo", "--keep", "--json"], { env: kept })).stdout);
    expect(facts).toMatchObject({ ok: true, homeKept: true });
    expect(readdirSync(kept.TMPDIR)).toHaveLength(1);
  });
});
