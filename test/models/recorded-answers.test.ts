import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { appendEvents } from "#app/append.ts";
import { renderConsolidation } from "#app/prompt-render.ts";
import { loadPrompt } from "#app/prompts.ts";
import { run } from "#app/run.ts";
import { readInputs, takeSnapshot } from "#app/snapshot.ts";
import { modelDeps } from "./fixtures.ts";

/**
 * A real model's answers (test/fixtures/model-answers: eight memory logs, each answered by a real
 * model) replayed through the whole pipeline with `replay:DIR`, as a user debugging a rejection
 * would: each answer is filed under the hash of the prompt this renderer gives its log. Five pass;
 * three hold a real model's mistakes, and since no repair of them was recorded the refusal stands,
 * the manifest saying why.
 */
const FIXTURES = join(import.meta.dirname, "../fixtures/model-answers");
const SUBJECTS = readdirSync(FIXTURES, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

const REFUSED: Record<string, string> = {
  "family-assistant": "conflict-invented",
  "research-lab": "missing",
  "travel-lin": "missing",
};

describe("a real model's recorded answers, replayed", () => {
  it.each(SUBJECTS)("%s", async (subject) => {
    const answers = mkdtempSync(join(tmpdir(), "memgate-recorded-"));
    const { deps } = modelDeps(`replay:${answers}`);
    const events = readFileSync(join(FIXTURES, subject, "events.jsonl"), "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line));
    await appendEvents(deps, subject, events);
    const snapshot = await takeSnapshot(deps, subject);
    const { context } = await readInputs(deps, subject, snapshot.highWater);
    const { hash } = renderConsolidation(loadPrompt(), context);
    mkdirSync(answers, { recursive: true });
    writeFileSync(
      join(answers, `${hash.slice("sha256:".length)}.json`),
      JSON.stringify({
        promptHash: hash,
        kind: "consolidate",
        model: "recorded",
        answer: {
          text: readFileSync(join(FIXTURES, subject, "answer.json"), "utf8"),
          inputTokens: 0,
          outputTokens: 0,
        },
      }),
    );

    const outcome = await run(deps, snapshot);
    if (outcome.status === "dropped") throw new Error("dropped");
    const expected = REFUSED[subject];
    if (expected === undefined) {
      expect(outcome.status).toBe("PUBLISHED");
      return;
    }
    expect(outcome.status).toBe("REJECTED");
    expect(outcome.gate.reasons.map((r) => r.code)).toContain(expected);
    const manifest = await deps.artifacts.readManifest(subject, outcome.artifactId);
    expect(manifest.generation?.attempts).toBe(1);
    expect(manifest.generation?.repairFailure).toMatch(/no recorded answer for the consolidate prompt/);
    expect(await deps.artifacts.readAttempts(subject, outcome.artifactId)).toEqual([]);
  });
});
