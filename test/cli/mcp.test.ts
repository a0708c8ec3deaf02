// `memgate mcp` driven by the official MCP SDK's client over stdio, as an agent's host would.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countTokens } from "#domain/tokens.ts";
import { BIN } from "#harness/cli.ts";
import { depsOverStore, temporaryStore } from "#harness/pipeline-builders.ts";
import { createApi } from "#http/api.ts";

const home = mkdtempSync(join(tmpdir(), "memgate-mcp-"));
let client: Client;

beforeAll(async () => {
  client = new Client({ name: "memgate-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp", "--home", home, "--subject", "mcp/ana"],
      stderr: "ignore",
    }),
  );
});
afterAll(async () => {
  await client?.close();
});

/** The JSON a tool answered, or the error text when it answered an error. */
async function call(name: string, args: Record<string, unknown>) {
  const { isError, text } = await callText(name, args);
  return { isError, text, json: isError ? null : JSON.parse(text) };
}

/** The text a tool answered. */
async function callText(name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  const text = (result.content as Array<{ type: string; text: string }>)[0]?.text ?? "";
  return { isError: result.isError === true, text, structured: result.structuredContent };
}

describe("memgate mcp", () => {
  it("lists the five tools, remember taking the MemoryEvent schema", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "consolidate",
      "explain",
      "forget",
      "recall",
      "remember",
    ]);
    const remember = tools.find((t) => t.name === "remember");
    const properties = (remember?.inputSchema.properties ?? {}) as Record<
      string,
      { items: { properties: Record<string, unknown>; required: string[] } }
    >;
    const events = properties.events;
    expect(events?.items.required).toEqual(["eventId", "kind"]);
    expect(Object.keys(events?.items.properties ?? {})).toEqual(
      expect.arrayContaining(["eventId", "kind", "text", "assertions", "trust", "source"]),
    );
  });

  it("remember → consolidate → recall serves the summary; explain names the sources; forget → the worker rebuilds without it", async () => {
    const remembered = await call("remember", {
      events: [
        { eventId: "c-1", kind: "constraint", text: "Backups must be encrypted." },
        {
          eventId: "b-1",
          kind: "fact",
          text: "The budget is 12,500 USD.",
          assertions: [{ key: "budget", value: { quantity: "12500", unit: "USD" }, polarity: "affirmed" }],
        },
      ],
    });
    expect(remembered.json).toMatchObject({ appended: ["c-1", "b-1"], highWater: 2 });
    const consolidated = await call("consolidate", {});
    expect(consolidated.json.status).toBe("PUBLISHED");
    const summary = await call("recall", { budget: 4000, format: "json" });
    expect(summary.json.mode).toBe("summary");
    expect(summary.json.artifactId).toBe(consolidated.json.artifactId);

    const explained = await call("explain", { key: "budget" });
    expect(explained.json.claims).toHaveLength(1);
    expect(explained.json.claims[0].evidence[0]).toMatchObject({
      eventId: "b-1",
      text: "The budget is 12,500 USD.",
    });

    const forgotten = await call("forget", { eventIds: ["b-1"], reason: "the figure was wrong" });
    expect(forgotten.json).toMatchObject({ staled: [consolidated.json.artifactId], rebuildRequested: true });
    // At once the stale summary is not served; the worker's rebuild then leaves b-1 out.
    const rebuilt = await summaryServed(
      "mcp/ana",
      (answer) => answer.artifactId !== consolidated.json.artifactId,
    );
    expect(JSON.stringify(rebuilt)).not.toContain("b-1");
  });

  it("recall answers as text by default (CONTRACT §5a), the budget counting the text; format json gives the JSON", async () => {
    const subject = "mcp/text";
    await call("remember", {
      subject,
      events: [
        { eventId: "c-1", kind: "constraint", text: "Backups must be encrypted." },
        { eventId: "t-1", kind: "task", text: "Rotate the deploy key by Dec 18." },
        { eventId: "n-1", kind: "note", text: "Prefers green tea in the afternoon." },
      ],
    });
    expect((await call("consolidate", { subject })).json.status).toBe("PUBLISHED");
    const answer = await callText("recall", { subject });
    expect(answer.isError).toBe(false);
    expect(answer.structured).toBeUndefined();
    const lines = answer.text.split("\n");
    expect(lines[0]).toMatch(/^# memgate recall: summary \S+ \(clock 3, epoch 0\)$/);
    expect(lines).toContain('"Rotate the deploy key by Dec 18." ← t-1');
    expect(lines).toContain("# cold: 1 input not shown; search them with the recall tool's query argument");
    const served = Number(/^# served: (\d+) tokens$/m.exec(answer.text)?.[1]);
    expect(countTokens(answer.text)).toBe(served);

    const json = await call("recall", { subject, format: "json" });
    expect(json.json).toMatchObject({ mode: "summary", coldInputs: 1, omitted: { cold: 0 } });
    expect(json.json.servedTokens).toBeGreaterThan(0);

    const tight = await callText("recall", { subject, budget: served - 1 });
    expect(countTokens(tight.text)).toBeLessThanOrEqual(served - 1);
    expect(tight.text).toMatch(/^# left out by the budget: /m);
    const matches = await callText("recall", { subject, query: "green tea" });
    expect(matches.text).toContain('## matches\nnote: "Prefers green tea in the afternoon." ← n-1\n');
    expect((await callText("recall", { subject, format: "xml" })).text).toMatch(/^format: /);
  });

  it("a bad argument is a tool error naming the field", async () => {
    const missingText = await call("remember", { events: [{ eventId: "x-1", kind: "fact" }] });
    expect(missingText.isError).toBe(true);
    expect(missingText.text).toMatch(/^events\[0\]\.text: /);
    const badBudget = await call("recall", { budget: -5 });
    expect(badBudget.isError).toBe(true);
    expect(badBudget.text).toMatch(/^budget: /);
    const unknownEvent = await call("forget", { eventIds: ["nope-1"] });
    expect(unknownEvent.isError).toBe(true);
    expect(unknownEvent.text).toMatch(/nope-1/);
    const stranger = await call("recall", { subject: "x".repeat(200) });
    expect(stranger.text).toMatch(/^subject: /);
    const hidden = await call("remember", {
      subject: "ana\u202E",
      events: [{ eventId: "h-1", kind: "fact", text: "x" }],
    });
    expect(hidden.isError).toBe(true);
    expect(hidden.text).toMatch(/^subject: .*bidirectional controls or zero-width/);
  });

  it("recall of a subject with no events is an error, as HTTP's 404 (it answered an empty raw recall)", async () => {
    const unknown = await call("recall", { subject: "mcp/nobody" });
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toMatch(/^subject: no events for "mcp\/nobody"/);
  });

  it("a rebuild remember requests is built and published by the server's worker: recall serves the summary without consolidate", async () => {
    const subject = "mcp/rebuild";
    const answer = await call("remember", {
      subject,
      events: [
        { eventId: "r-1", kind: "fact", text: "Backups run nightly." },
        { eventId: "r-2", kind: "constraint", text: "Never restore over production." },
      ],
    });
    expect(answer.json.rebuildRequested).toBe(true);
    expect(answer.json.rebuild).toMatch(/^queued: this server's worker builds it/);
    const served = await summaryServed(subject, () => true);
    expect(served).toMatchObject({ mode: "summary", highWater: 2 });
    expect(served.reason).toMatch(/ covers through 2;/);
    // Asked again, consolidate generates nothing: the published summary already covers the subject.
    const again = await call("consolidate", { subject });
    expect(again.json).toMatchObject({
      status: "PUBLISHED",
      artifactId: served.artifactId,
      generated: false,
    });
    expect(again.json.detail).toMatch(/already covers 2 at epoch 0.*; nothing was generated$/);
  });

  it("every tool naming a subject with no events answers HTTP's 404 message, and writes nothing", async () => {
    const subject = "mcp/nobody-here";
    const store = temporaryStore("mcp-http");
    const app = createApi({
      deps: depsOverStore(store),
    });
    const path = `/v1/subjects/${encodeURIComponent(subject)}`;
    const post = { method: "POST", headers: { "content-type": "application/json" } };
    const routes = {
      recall: app.request(`${path}/recall`),
      forget: app.request(`${path}/revocations`, { ...post, body: JSON.stringify({ eventIds: ["x-1"] }) }),
      consolidate: app.request(`${path}/consolidations`, post),
      explain: app.request(`${path}/artifacts`),
    };
    const tools = { recall: {}, forget: { eventIds: ["x-1"] }, consolidate: {}, explain: {} };
    for (const [tool, args] of Object.entries(tools)) {
      const http = await routes[tool as keyof typeof routes];
      expect(http.status).toBe(404);
      const { error } = await http.json();
      const answer = await call(tool, { subject, ...args });
      expect({ tool, isError: answer.isError, text: answer.text }).toEqual({
        tool,
        isError: true,
        text: error.message,
      });
    }
    store.close();
    // Consolidating it published nothing that would make it appear.
    expect((await call("recall", { subject })).text).toBe(`subject: no events for "${subject}"`);
  });
});

/** Polls the JSON recall of `subject` until it serves a summary `accepted` takes (the worker runs in the background). */
async function summaryServed(
  subject: string,
  accepted: (answer: { artifactId: string }) => boolean,
  // biome-ignore lint/suspicious/noExplicitAny: assertions read whatever the answer holds
): Promise<any> {
  const until = Date.now() + 30_000;
  for (;;) {
    const { json } = await call("recall", { subject, format: "json" });
    if (json?.mode === "summary" && accepted(json)) return json;
    if (Date.now() > until)
      throw new Error(`no summary served for ${subject} within 30 s: ${JSON.stringify(json)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
