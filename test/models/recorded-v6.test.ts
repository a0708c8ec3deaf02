import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadPrompt } from "#app/prompts.ts";
import { CHAT_LOGS, publishedFromRecordings } from "./fixtures.ts";

/**
 * Real answers to consolidate-v6 (the prompt that asks for relative time resolved against each
 * event's date), replayed through the whole pipeline: each was written once by a language model
 * given only the request memgate sent (request-v6.md beside the log's answers), recorded under the
 * hash of the prompt it answered in test/fixtures/recorded-v6. Each passed the gate on the first
 * try. The replay finds an answer only when the renderer gives the log the same bytes, so this
 * also pins consolidate-v6's prompt.
 */
const RECORDED_V6 = join(import.meta.dirname, "../fixtures/recorded-v6");
const V6 = { prompt: loadPrompt("consolidate-v6") };

describe("real answers to consolidate-v6, replayed", () => {
  async function published(subject: string, logs?: string) {
    const { outcome, manifest } = await publishedFromRecordings(RECORDED_V6, subject, logs, V6);
    expect(manifest.promptVersion).toBe("consolidate-v6");
    expect(outcome.gate.reasons).toEqual([]);
    return { outcome, attempts: manifest.generation?.attempts };
  }

  it.each([
    "devops-ana",
    "family-assistant",
    "health-coach-sam",
    "legal-team",
    "research-lab",
    "support-bot",
    "travel-lin",
  ])("%s is published on the first try", async (subject) => {
    const { outcome, attempts } = await published(subject);
    expect(attempts).toBe(1);
    expect(outcome.gate.stats.claims).toBeGreaterThan(20);
  });

  it.each(["demo", "mb-emily", "mb-gary", "mb-leo"])(
    "the chat log %s is published on the first try",
    async (subject) => {
      const { outcome, attempts } = await published(subject, CHAT_LOGS);
      expect(attempts).toBe(1);
      expect(outcome.gate.stats.claims).toBeGreaterThan(5);
    },
  );

  it("pm-wei is published on the repair attempt (its first answer translated a source label)", async () => {
    expect((await published("pm-wei")).attempts).toBe(2);
  });
});
