import { describe, expect, it } from "vitest";
import { ConsolidationThread } from "#runtime/consolidation-thread.ts";

const ECHO = new URL("../fixtures/threads/echo-consolidation-thread.mjs", import.meta.url);

describe("the consolidation thread of memgate serve", () => {
  it("answers each message with the thread's outcome and passes its progress lines on", async () => {
    const lines: string[] = [];
    const thread = new ConsolidationThread(ECHO, { store: "embedded" }, (line) => lines.push(line));
    const outcomes = await Promise.all([thread.work("ana"), thread.work("bo")]);
    expect(outcomes.map((outcome) => outcome.subject)).toEqual(["ana", "bo"]);
    expect(lines).toEqual(["loaded", "working on ana", "working on bo"]);
    await thread.close();
  });

  it("starts when asked, before any message, and closes without one", async () => {
    const lines: string[] = [];
    const thread = new ConsolidationThread(ECHO, { store: "embedded" }, (line) => lines.push(line));
    thread.start();
    await expect.poll(() => lines).toEqual(["loaded"]);
    await thread.close();
    expect(lines).toEqual(["loaded"]);
  });

  it("fails the message a dying thread held, then starts a fresh thread for the next one", async () => {
    const thread = new ConsolidationThread(ECHO, { store: "embedded" }, () => undefined);
    await expect(thread.work("die")).rejects.toThrow("the consolidation thread ended (exit code 3)");
    expect((await thread.work("after")).subject).toBe("after");
    await thread.close();
  });
});
