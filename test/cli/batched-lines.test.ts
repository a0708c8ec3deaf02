// `memgate serve`'s request log (batchedLines): one write per pass of the microtask queue, and each
// line out before the code that logged it goes past its next await.
import { describe, expect, it } from "vitest";
import { batchedLines } from "#cli/output.ts";

describe("batchedLines", () => {
  it("writes the lines of one pass together, in order, each ending in a newline", async () => {
    const writes: string[] = [];
    const log = batchedLines((text) => writes.push(text));
    log("GET /a 200 1ms");
    log("GET /b 404 0ms");
    log("POST /c 200 2ms");
    expect(writes).toEqual([]);
    await Promise.resolve();
    expect(writes).toEqual(["GET /a 200 1ms\nGET /b 404 0ms\nPOST /c 200 2ms\n"]);
    log("GET /d 200 1ms");
    await Promise.resolve();
    expect(writes).toEqual(["GET /a 200 1ms\nGET /b 404 0ms\nPOST /c 200 2ms\n", "GET /d 200 1ms\n"]);
  });

  it("a request's line is out before its answer, when answers settle in the same turn", async () => {
    const writes: string[] = [];
    const log = batchedLines((text) => writes.push(text));
    // What a request's answer finds already written when it is sent.
    const seenAtAnswer: string[] = [];
    const request = async (name: string, committed: Promise<void>) => {
      await committed;
      log(`${name} 200`);
      await Promise.resolve();
      seenAtAnswer.push(`${name}: ${writes.join("")}`);
    };
    // One commit settles three writes, as a group commit does; a fourth waits for the next one.
    let settle = () => {};
    const commit = new Promise<void>((resolve) => {
      settle = resolve;
    });
    let settleNext = () => {};
    const nextCommit = new Promise<void>((resolve) => {
      settleNext = resolve;
    });
    const all = Promise.all([
      request("a", commit),
      request("b", commit),
      request("c", commit),
      request("d", nextCommit),
    ]);
    settle();
    await new Promise((resolve) => setImmediate(resolve));
    settleNext();
    await all;
    expect(writes).toEqual(["a 200\nb 200\nc 200\n", "d 200\n"]);
    expect(seenAtAnswer).toEqual([
      "a: a 200\nb 200\nc 200\n",
      "b: a 200\nb 200\nc 200\n",
      "c: a 200\nb 200\nc 200\n",
      "d: a 200\nb 200\nc 200\nd 200\n",
    ]);
  });
});
