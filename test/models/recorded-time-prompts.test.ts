import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadPrompt } from "#app/prompts.ts";
import { CHAT_LOGS, CHAT_SUBJECTS, LOG_SUBJECTS, publishedFromRecordings } from "./fixtures.ts";

/**
 * Real answers to the prompts that resolve relative time against each event's date, replayed
 * through the whole pipeline: consolidate-v6, and consolidate-v7 (its checklist drawn as the seed
 * draws must-preserve, a chat's small talk left cold). Each was written once by a
 * language model given only the request memgate sent (request-v6.md, request-v7.md beside the log's
 * answers), recorded under the hash of the prompt it answered in test/fixtures/recorded-v6 and
 * recorded-v7. The replay finds an answer only when the renderer gives the log the same bytes, so
 * this also pins each prompt. pm-wei's first answer to v6 and v7 translated its source's name
 * (agent:planner) as 规划助手, which no event holds; its repair was published. consolidate-v8 (the
 * default: v7 asking a chat's claims to gather what each person has done, one list per topic) was
 * answered the same way (request-v8.md); mb-gary's first answer named an event no log holds and its repair was
 * published.
 */
const ON_REPAIR: Record<string, string> = {
  "consolidate-v6": "pm-wei",
  "consolidate-v7": "pm-wei",
  "consolidate-v8": "mb-gary",
};
describe.each(Object.entries(ON_REPAIR))("real answers to %s, replayed", (version, repaired) => {
  const recorded = join(import.meta.dirname, `../fixtures/recorded-${version.slice("consolidate-".length)}`);
  async function published(subject: string, logs?: string) {
    const { outcome, manifest } = await publishedFromRecordings(recorded, subject, logs, {
      prompt: loadPrompt(version),
    });
    expect(manifest.promptVersion).toBe(version);
    expect(outcome.gate.reasons).toEqual([]);
    return { outcome, attempts: manifest.generation?.attempts };
  }

  it.each(LOG_SUBJECTS.filter((subject) => subject !== repaired))(
    "%s is published on the first try",
    async (subject) => {
      const { outcome, attempts } = await published(subject);
      expect(attempts).toBe(1);
      expect(outcome.gate.stats.claims).toBeGreaterThan(20);
    },
  );

  it.each(CHAT_SUBJECTS.filter((subject) => subject !== repaired))(
    "the chat log %s is published on the first try",
    async (subject) => {
      const { outcome, attempts } = await published(subject, CHAT_LOGS);
      expect(attempts).toBe(1);
      expect(outcome.gate.stats.claims).toBeGreaterThan(5);
    },
  );

  it(`${repaired} is published on the repair attempt`, async () => {
    const logs = CHAT_SUBJECTS.includes(repaired) ? CHAT_LOGS : undefined;
    expect((await published(repaired, logs)).attempts).toBe(2);
  });
});
