import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadPrompt } from "#app/prompts.ts";
import { CHAT_LOGS, publishedFromRecordings } from "./fixtures.ts";

/**
 * Real answers to consolidate-v7 (v6's time rules; the checklist draws must-preserve as the seed
 * does, so a chat turn with only a "can" or "some" may go cold; a chat's small talk left cold),
 * replayed through the whole pipeline: each was written once by a language model given only the
 * request memgate sent (request-v7.md beside the log's answers), recorded under the hash of the
 * prompt it answered in test/fixtures/recorded-v7. The replay finds an answer only when the
 * renderer gives the log the same bytes, so this also pins consolidate-v7's prompt.
 */
const RECORDED_V7 = join(import.meta.dirname, "../fixtures/recorded-v7");
const V7 = { prompt: loadPrompt("consolidate-v7") };

describe("real answers to consolidate-v7, replayed", () => {
  async function published(subject: string, logs?: string) {
    const { outcome, manifest } = await publishedFromRecordings(RECORDED_V7, subject, logs, V7);
    expect(manifest.promptVersion).toBe("consolidate-v7");
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

  it("pm-wei is published on the repair attempt (its first answer translated a source's name: 规划助手 for agent:planner)", async () => {
    expect((await published("pm-wei")).attempts).toBe(2);
  });
});
