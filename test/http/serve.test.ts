// The same story as the Lambdas', over HTTP against `memgate serve` started as a child process:
// the worker and the sweep run inside it.
import { mkdtempSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import type { Recall } from "#app/recall.ts";
import { MemgateApiError, MemgateClient } from "#client/client.ts";
import { countTokens } from "#domain/tokens.ts";
import { memgate } from "#harness/cli.ts";
import { type ServeProcess, startServe } from "#harness/serve-process.ts";

const TOKEN = "serve-test-token-1";
const home = mkdtempSync(join(tmpdir(), "memgate-serve-"));
let server: ServeProcess;
let client: MemgateClient;

beforeAll(async () => {
  server = await startServe(["--home", home, "--token", TOKEN]);
  client = new MemgateClient({ baseUrl: server.url, token: TOKEN });
});
afterAll(async () => {
  if (server.child.exitCode === null) await server.stop("SIGKILL");
});

/** Recall until `accept` holds: the in-process worker consolidates in the background. */
async function recallUntil(subject: string, accept: (recall: Recall) => boolean): Promise<Recall> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const answer = await client.recall(subject);
    if (accept(answer) || Date.now() > deadline) return answer;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("memgate serve", () => {
  it("append → the worker in the server consolidates → summary; revoke → raw at once → rebuilt", async () => {
    const subject = "serve/ana";
    await client.append(subject, [
      { eventId: "c-1", kind: "constraint", text: "Backups must be encrypted." },
      {
        eventId: "b-1",
        kind: "fact",
        text: "Budget is 12,500 USD.",
        assertions: [{ key: "budget", value: { quantity: "12500", unit: "USD" }, polarity: "affirmed" }],
      },
    ]);
    const summary = await recallUntil(subject, (r) => r.mode === "summary");
    expect(summary.mode).toBe("summary");
    const revoked = await client.revoke(subject, ["b-1"], "wrong figure");
    expect(revoked.inputEpoch).toBe(summary.inputEpoch + 1);
    const raw = await client.recall(subject);
    expect(raw.mode).toBe("raw");
    expect(raw.events.map((e) => e.eventId)).toEqual(["c-1"]);
    const rebuilt = await recallUntil(subject, (r) => r.mode === "summary");
    expect(rebuilt.mode).toBe("summary");
    expect(rebuilt.artifactId).not.toBe(summary.artifactId);
    expect(JSON.stringify(rebuilt)).not.toContain("12500");
  });

  it("recall as text: format=text or Accept: text/plain; JSON stays the default; the budget counts the text", async () => {
    const subject = "serve/text";
    await client.append(subject, [
      { eventId: "c-1", kind: "constraint", text: "Backups must be encrypted." },
      { eventId: "n-1", kind: "note", text: "Lunch was late today." },
    ]);
    await recallUntil(subject, (r) => r.mode === "summary");
    const url = `${server.url}/v1/subjects/${encodeURIComponent(subject)}/recall`;
    const get = (query: string, accept?: string) =>
      fetch(`${url}${query}`, {
        headers: { authorization: `Bearer ${TOKEN}`, ...(accept ? { accept } : {}) },
      });
    const byParameter = await get("?format=text");
    expect(byParameter.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    const text = await byParameter.text();
    expect(text).toMatch(/^# memgate recall: summary /);
    // Version 2: the constraint's claim says what it is about; its key, made of its event id, is left out.
    expect(text).toContain('"Backups must be encrypted." ← c-1');
    expect(await (await get("?format=text-v1")).text()).toContain("memory:c-1");
    expect(text).toContain(
      "# cold: 1 input not shown; search them with GET /v1/subjects/{subject}/recall?query=WORDS\n",
    );
    const served = Number(/^# served: (\d+) tokens\n$/m.exec(text)?.[1]);
    expect(countTokens(text)).toBe(served);
    expect(await client.recallText(subject)).toBe(text);

    const byAccept = await get("", "text/plain");
    expect(byAccept.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await byAccept.text()).toBe(text);
    for (const accept of [undefined, "*/*", "application/json", "application/json, text/plain;q=0.5"]) {
      const answer = await get("", accept);
      expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
      expect(await answer.json()).toMatchObject({ mode: "summary", coldInputs: 1 });
    }
    // The parameter wins over the header.
    expect((await get("?format=json", "text/plain")).headers.get("content-type")).toMatch(/json/);

    const tight = await (await get(`?format=text&budget=${served - 1}`)).text();
    expect(countTokens(tight)).toBeLessThanOrEqual(served - 1);
    expect(tight).toMatch(/^# left out by the budget: /m);
    const refused = await get("?format=yaml");
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: { field: "format" } });
  });

  it("refuses a request without the token, answers /healthz without it", async () => {
    const anonymous = new MemgateClient({ baseUrl: server.url });
    const refused = await anonymous.settings().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(MemgateApiError);
    expect((refused as MemgateApiError).status).toBe(401);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it("refuses a declared body over 5 MiB over the socket, reads a chunked one that fits, and keeps serving", async () => {
    const subject = "serve/oversized";
    const events = (text: string) => JSON.stringify({ events: [{ eventId: "big", kind: "note", text }] });
    /** The status answered to a POST of `body`, with its length declared or sent in chunks without one. */
    const post = (body: string, declared: boolean) =>
      new Promise<number>((resolve, reject) => {
        const request = httpRequest(`${server.url}/v1/subjects/${encodeURIComponent(subject)}/events`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${TOKEN}`,
            "content-type": "application/json",
            ...(declared ? { "content-length": Buffer.byteLength(body) } : {}),
          },
        });
        request.on("response", (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        });
        // The server may answer and close before the rest is sent: the status is what counts.
        request.on("error", (error) => setTimeout(() => reject(error), 1000));
        for (let at = 0; at < body.length; at += 1024 * 1024) request.write(body.slice(at, at + 1024 * 1024));
        request.end();
      });
    expect(await post(events("x".repeat(5 * 1024 * 1024 + 1)), true)).toBe(413);
    expect(await post(events("fits"), false)).toBe(200);
    expect((await client.recall(subject)).highWater).toBe(1);
  });

  it("logs one line per request and stops cleanly on SIGTERM", async () => {
    await client.settings();
    expect(server.stderr()).toMatch(/GET \/v1\/settings 200 \d+ms/);
    expect(await server.stop("SIGTERM")).toBe(0);
    expect(server.stderr()).toContain("memgate: stopped");
    // What it served is in the store: the CLI reads it.
    const recall = await memgate(["recall", "serve/ana", "--home", home, "--json"]);
    expect(JSON.parse(recall.stdout).mode).toBe("summary");
  });

  it("refuses bad flags before listening", async () => {
    const badPort = await memgate(["serve", "--home", home, "--port", "70000"]);
    expect(badPort.code).toBe(2);
    expect(badPort.stderr).toMatch(/--port/);
    const shortToken = await memgate(["serve", "--home", home, "--token", "abc"]);
    expect(shortToken.code).toBe(2);
  });

  it("a port already taken is bad input, and the process ends (its consolidation thread with it)", async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const taken = String((holder.address() as AddressInfo).port);
    try {
      const second = await memgate(["serve", "--home", home, "--port", taken]);
      expect(second.code).toBe(2);
      expect(second.stderr).toMatch(new RegExp(`--port ${taken}: cannot listen there \\(EADDRINUSE\\)`));
    } finally {
      holder.close();
    }
  });
});

describe("memgate serve's consolidation thread and rebuilds that stop", () => {
  const shadowHome = mkdtempSync(join(tmpdir(), "memgate-serve-shadow-"));
  let shadowServer: ServeProcess;

  beforeAll(async () => {
    shadowServer = await startServe(["--home", shadowHome, "--token", TOKEN]);
  });
  afterAll(async () => {
    if (shadowServer.child.exitCode === null) await shadowServer.stop("SIGKILL");
  });

  it("a SHADOW made by the server's worker is kept on the clock: a sweep of the same store waits for review instead of generating again", async () => {
    const shadowClient = new MemgateClient({ baseUrl: shadowServer.url, token: TOKEN });
    await shadowClient.updateSettings({ publishMode: "shadow" });
    const subject = "serve/shadow";
    await shadowClient.append(subject, [
      { eventId: "c-1", kind: "constraint", text: "Backups must be encrypted." },
      { eventId: "n-1", kind: "note", text: "The restore drill is on Fridays." },
    ]);
    const store = new SqliteStore(shadowHome);
    try {
      const deadline = Date.now() + 20_000;
      let attempt = await store.rebuildAttempt(subject);
      while (attempt === null && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        attempt = await store.rebuildAttempt(subject);
      }
      const [shadow, ...others] = await shadowClient.artifacts(subject);
      expect(others).toEqual([]);
      expect(shadow?.status).toBe("SHADOW");
      expect(attempt).toMatchObject({
        highWater: 2,
        outcome: "SHADOW",
        artifactId: shadow?.artifactId,
        count: 1,
      });
    } finally {
      store.close();
    }
    // The command line's sweep, another process over the same file, reads what the server's worker
    // kept: nothing to generate, the SHADOW waits for a reviewer.
    const swept = JSON.parse((await memgate(["sweep", "--home", shadowHome, "--json"])).stdout) as {
      requested: Array<{ subject: string }>;
      waiting: Array<{ subject: string; reason: string }>;
    };
    expect(swept.requested.map((r) => r.subject)).not.toContain(subject);
    expect(swept.waiting.find((r) => r.subject === subject)?.reason).toMatch(/waits for review/);
    expect(await shadowClient.artifacts(subject)).toHaveLength(1);
  });
});
