import { afterAll, describe, expect, it } from "vitest";
import { MemoryQueue } from "#adapters/embedded/memory-queue.ts";
import { workOnMessage } from "#app/worker.ts";
import { MemgateApiError, MemgateClient } from "#client/client.ts";
import { depsOverStore, temporaryStore } from "#harness/pipeline-builders.ts";
import { createApi } from "#http/api.ts";
import { bucketReading } from "../support/builders.ts";

const store = temporaryStore("api");
afterAll(() => store.close());
const queue = new MemoryQueue();
const deps = depsOverStore(store, { queue });
const app = createApi({ deps });
const client = new MemgateClient({ baseUrl: "http://memgate.test", fetch: (request) => app.fetch(request) });
let subjects = 0;
const freshSubject = () => `api/${process.pid}/${++subjects}`;

/** Runs what the API queued, as the worker would; the outcomes of `subject`'s messages. */
async function drain(subject: string): Promise<string[]> {
  const statuses: string[] = [];
  for (let messages = await queue.receive(10); messages.length > 0; messages = await queue.receive(10))
    for (const message of messages) {
      const outcome = await workOnMessage(deps, message.body);
      if (message.body.subject === subject) statuses.push(outcome.status);
      await (outcome.action === "ack" ? queue.ack(message.receipt) : queue.release(message.receipt));
    }
  return statuses;
}

const budgetFact = {
  eventId: "b-1",
  kind: "fact",
  text: "The project budget is 12,500 USD.",
  assertions: [{ key: "budget", value: { quantity: "12500", unit: "USD" }, polarity: "affirmed" }],
};
const constraint = { eventId: "c-1", kind: "constraint", text: "Backups must be encrypted." };
const teaNote = { eventId: "n-1", kind: "note", text: "Prefers green tea in the afternoon." };
const scoped = {
  eventId: "s-1",
  kind: "fact",
  text: "On-call rotation for payments is weekly.",
  assertions: [{ key: "rotation", value: { text: "weekly" }, polarity: "affirmed", scope: "payments" }],
};

async function raw(path: string, init: RequestInit = {}) {
  const response = await app.request(path, init);
  // biome-ignore lint/suspicious/noExplicitAny: assertions read whatever the answer holds
  const body: any = await response.json();
  return { status: response.status, headers: response.headers, body };
}

describe("HTTP API over the embedded store (CONTRACT §6)", () => {
  it("append → consolidation queued → summary recalled; revoke → raw at once → rebuilt summary", async () => {
    const subject = freshSubject();
    const appended = await client.append(subject, [budgetFact, constraint, teaNote, scoped]);
    expect(appended).toMatchObject({
      appended: ["b-1", "c-1", "n-1", "s-1"],
      highWater: 4,
      rebuildRequested: true,
    });
    expect(await drain(subject)).toEqual(["PUBLISHED"]);
    const summary = await client.recall(subject);
    expect(summary.mode).toBe("summary");
    expect(summary.claims.flatMap((c) => c.derivedFrom)).toContain("b-1");

    const revoked = await client.revoke(subject, ["b-1"], "the budget figure was wrong");
    expect(revoked.inputEpoch).toBe(summary.inputEpoch + 1);
    expect(revoked.staled).toEqual([summary.artifactId]);
    const fallback = await client.recall(subject);
    expect(fallback.mode).toBe("raw");
    expect(fallback.events.map((e) => e.eventId)).toEqual(["c-1", "n-1", "s-1"]);

    expect(await drain(subject)).toEqual(["PUBLISHED"]);
    const rebuilt = await client.recall(subject);
    expect(rebuilt.mode).toBe("summary");
    expect(rebuilt.artifactId).not.toBe(summary.artifactId);
    expect(JSON.stringify(rebuilt)).not.toContain("12,500");
    const listed = await client.artifacts(subject);
    expect(listed.map((a) => a.status)).toEqual(["STALE", "PUBLISHED"]);
    const lineage = await client.lineage(rebuilt.artifactId as string, "dot");
    expect(lineage).toContain("digraph");
  });

  it("recall by scope, within a budget (must-preserve first) and with a query over the cold layer", async () => {
    const subject = freshSubject();
    await client.append(subject, [budgetFact, constraint, teaNote, scoped]);
    await drain(subject);
    const payments = await client.recall(subject, { scope: "payments" });
    expect(payments.claims.map((c) => c.scope).sort()).toEqual(expect.arrayContaining(["payments"]));
    const other = await client.recall(subject, { scope: "search" });
    expect(other.claims.some((c) => c.scope === "payments")).toBe(false);

    const searched = await client.recall(subject, { query: "green tea" });
    expect(searched.cold[0]?.eventId).toBe("n-1");
    // The other events it reaches (by the words around them) are ones the claims restate.
    expect(searched.cold.length - searched.citedMatches).toBe(1);
    expect((await client.recall(subject, { query: "kubernetes" })).cold).toEqual([]);

    const all = (await client.recall(subject)).claims;
    const tight = await client.recall(subject, { budget: 60 });
    expect(tight.claims.length).toBeGreaterThan(0);
    expect(tight.omitted.claims).toBeGreaterThan(0);
    expect(tight.claims.length + tight.omitted.claims).toBe(all.length);
    // What is served is in the artifact's order, a subsequence of the whole answer.
    const order = all.map((c) => JSON.stringify(c));
    const positions = tight.claims.map((c) => order.indexOf(JSON.stringify(c)));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(positions.every((p) => p >= 0)).toBe(true);
    const nothing = await client.recall(subject, { budget: 0 });
    expect(nothing).toMatchObject({ claims: [], pending: [], summary: null, tail: [], cold: [] });
    expect(nothing.omitted.claims).toBe(all.length);
  });

  it("pages the tail with the cursor", async () => {
    const subject = freshSubject();
    await client.append(subject, [constraint]);
    await drain(subject);
    const tail = Array.from({ length: 12 }, (_, i) => ({
      eventId: `t-${i}`,
      kind: "note",
      text: `note ${i}`,
    }));
    await client.append(subject, tail);
    const first = await client.recall(subject, { budget: 200 });
    expect(first.mode).toBe("summary");
    expect(first.nextCursor).not.toBeNull();
    const seen = first.tail.map((e) => e.eventId);
    let cursor = first.nextCursor;
    while (cursor) {
      const page = await client.recall(subject, { cursor, budget: 200 });
      seen.push(...page.tail.map((e) => e.eventId));
      cursor = page.nextCursor;
    }
    expect(seen).toEqual(tail.map((e) => e.eventId));
  });

  it("refuses bad input with the field named and writes nothing", async () => {
    const subject = freshSubject();
    await client.append(subject, [constraint]);
    const before = await client.clock(subject);
    const post = (body: string, type = "application/json") =>
      raw(`/v1/subjects/${encodeURIComponent(subject)}/events`, {
        method: "POST",
        headers: { "content-type": type },
        body,
      });
    const missingText = await post(JSON.stringify({ events: [{ eventId: "x-1", kind: "fact" }] }));
    expect(missingText).toMatchObject({ status: 400, body: { error: { field: "events[0].text" } } });
    const secondBad = await post(
      JSON.stringify({ events: [teaNote, { eventId: "x-2", kind: "fact", text: "t", trust: "root" }] }),
    );
    expect(secondBad).toMatchObject({ status: 400, body: { error: { field: "events[1].trust" } } });
    expect((await post("{not json")).body.error.field).toBe("body");
    expect((await post('{"eventId":"x"}\nnope', "application/x-ndjson")).body.error.field).toBe("line 2");
    expect((await post("hello", "text/plain")).status).toBe(415);
    const many = JSON.stringify({
      events: Array.from({ length: 1001 }, (_, i) => ({ eventId: `m-${i}`, kind: "note", text: "x" })),
    });
    expect(await post(many)).toMatchObject({ status: 413, body: { error: { field: "events" } } });
    const huge = JSON.stringify({
      events: [{ eventId: "h-1", kind: "note", text: "x".repeat(6 * 1024 * 1024) }],
    });
    const tooBig = await post(huge);
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.error.message).toContain("5 MiB");
    const conflict = await post(
      JSON.stringify({ events: [{ ...constraint, text: "Backups may be plain." }] }),
    );
    expect(conflict).toMatchObject({ status: 409, body: { error: { code: "write-once-conflict" } } });
    const unknownRevoke = await raw(`/v1/subjects/${encodeURIComponent(subject)}/revocations`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ eventIds: ["nope-1"] }),
    });
    expect(unknownRevoke.status).toBe(400);
    expect(await client.clock(subject)).toEqual(before);
  });

  it("answers 404 for unknown subjects, artifacts and routes, and 400 for a bad subject or query", async () => {
    await expect(client.clock("nobody-here")).rejects.toMatchObject({ status: 404, field: "subject" });
    await expect(client.artifact("summary:nobody:000001:x")).rejects.toMatchObject({ status: 404 });
    await expect(client.artifact("not-an-artifact-id")).rejects.toMatchObject({ status: 404 });
    expect((await raw("/v2/anything")).status).toBe(404);
    expect((await raw(`/v1/subjects/${"x".repeat(129)}/clock`)).body.error.field).toBe("subject");
    expect((await raw("/v1/subjects/a%07b/clock")).body.error.field).toBe("subject");
    const subject = freshSubject();
    await client.append(subject, [constraint]);
    await expect(client.recall(subject, { budget: -1 })).rejects.toMatchObject({
      status: 400,
      field: "budget",
    });
    const badCursor = await raw(`/v1/subjects/${encodeURIComponent(subject)}/recall?cursor=zzz`);
    expect(badCursor).toMatchObject({ status: 400, body: { error: { field: "cursor" } } });
    const badFormat = await raw(
      `/v1/artifacts/${encodeURIComponent("summary:x:000001:y")}/lineage?format=png`,
    );
    expect(badFormat).toMatchObject({ status: 400, body: { error: { field: "format" } } });
  });

  it("review and approve in shadow mode; a refused approve is 409", async () => {
    await client.updateSettings({ publishMode: "shadow" });
    try {
      const subject = freshSubject();
      await client.append(subject, [budgetFact, constraint]);
      expect(await drain(subject)).toEqual(["SHADOW"]);
      const { shadows, current } = await client.review(subject);
      expect(current.mode).toBe("raw");
      expect(shadows).toHaveLength(1);
      const shadow = shadows[0]?.artifactId as string;
      expect(shadows[0]?.checklist.find((line) => line.evidence === "b-1")?.evidenceEvents[0]).toMatchObject({
        eventId: "b-1",
        text: budgetFact.text,
        trust: "user",
      });
      const listed = (await raw(`/v1/subjects?limit=100`)).body.subjects.find(
        (s: { subject: string }) => s.subject === subject,
      );
      expect(listed).toMatchObject({ serving: "raw", shadows: [shadow] });
      await client.append(subject, [teaNote]);
      await client.revoke(subject, ["b-1"]);
      await expect(client.approve(shadow)).rejects.toMatchObject({ status: 409 });
      // A reviewer's no: the candidate is kept, REJECTED, and cannot be rejected twice.
      await drain(subject);
      const next = (await client.review(subject)).shadows[0]?.artifactId as string;
      const reject = (id: string) =>
        raw(`/v1/artifacts/${encodeURIComponent(id)}/reject`, { method: "POST" });
      expect((await reject(next)).status).toBe(200);
      expect((await client.artifacts(subject)).find((a) => a.artifactId === next)?.status).toBe("REJECTED");
      expect((await reject(next)).status).toBe(409);
      await expect(client.updateSettings({ publishMode: "sometimes" as "live" })).rejects.toMatchObject({
        status: 400,
        field: "publishMode",
      });
    } finally {
      await client.updateSettings({ publishMode: "live" });
    }
  });

  it("policy: GET and PUT through the same use case as the CLI", async () => {
    const subject = freshSubject();
    await client.append(subject, [{ ...teaNote, trust: "tool", source: "crawler" }]);
    expect(await client.policy(subject)).toEqual({ minTrust: "tool", blockedSources: [] });
    await client.setPolicy(subject, { minTrust: "tool", blockedSources: ["crawler"] });
    expect((await client.recall(subject)).events).toEqual([]);
  });

  it("policy and settings take latest rules: readings are no dispute, recall lists the earlier one, a bad rule is 400", async () => {
    const subject = freshSubject();
    await client.append(subject, [
      bucketReading("oct", "4.6", "2026-10-26"),
      bucketReading("dec", "4.1", "2026-12-03"),
    ]);
    const rule = { minTrust: "tool" as const, blockedSources: [], latest: ["backup.bucket_size"] };
    await client.setPolicy(subject, rule);
    expect(await client.policy(subject)).toEqual(rule);
    const recalled = await client.recall(subject);
    expect(recalled.earlierReadings.map((r) => [r.eventId, r.occurredAt, r.latest])).toEqual([
      ["oct", "2026-10-26", "dec"],
    ]);
    await expect(
      client.setPolicy(subject, { ...rule, latest: [{ key: "*.lag" } as unknown as string] }),
    ).rejects.toMatchObject({ status: 400, field: expect.stringMatching(/^latest/) });
    await expect(client.updateSettings({ latest: ["x".repeat(257)] })).rejects.toMatchObject({
      status: 400,
      field: expect.stringMatching(/^latest/),
    });
    expect(await client.policy(subject)).toEqual(rule);
  });

  it("requires the bearer token when one is set, except on /healthz", async () => {
    const guarded = createApi({ deps, token: "s3cret-token" });
    expect((await guarded.request("/healthz")).status).toBe(200);
    const refused = await guarded.request("/v1/settings");
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toContain("Bearer");
    const wrong = await guarded.request("/v1/settings", {
      headers: { authorization: "Bearer s3cret-tokeN" },
    });
    expect(wrong.status).toBe(401);
    const right = new MemgateClient({
      baseUrl: "http://memgate.test",
      token: "s3cret-token",
      fetch: (request) => guarded.fetch(request),
    });
    expect((await right.settings()).publishMode).toBe("live");
  });

  it("serves an OpenAPI document generated from the schemas, naming every route", async () => {
    const { status, body } = await raw("/v1/openapi.json");
    expect(status).toBe(200);
    expect(Object.keys(body.paths).sort()).toEqual(
      [
        "/v1/artifacts/{artifactId}",
        "/v1/artifacts/{artifactId}/approve",
        "/v1/artifacts/{artifactId}/claims",
        "/v1/artifacts/{artifactId}/reject",
        "/v1/artifacts/{artifactId}/lineage",
        "/v1/settings",
        "/v1/subjects",
        "/v1/subjects/{subject}/artifacts",
        "/v1/subjects/{subject}/clock",
        "/v1/subjects/{subject}/consolidations",
        "/v1/subjects/{subject}/events",
        "/v1/subjects/{subject}/policy",
        "/v1/subjects/{subject}/recall",
        "/v1/subjects/{subject}/review",
        "/v1/subjects/{subject}/revocations",
      ].sort(),
    );
    expect(body.components.schemas.MemoryEvent.properties.kind.enum).toContain("constraint");
    expect(body.components.schemas.MemoryEvent.required).toEqual(["eventId", "kind"]);
  });

  it("the client surfaces the contract's error", async () => {
    const error = await client.clock("nobody-at-all").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MemgateApiError);
    expect((error as MemgateApiError).code).toBe("not-found");
  });
});
