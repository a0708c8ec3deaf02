// Safe to expose: each attack of the issue reproduced against the HTTP API in process, then refused
// (or made harmless) as CONTRACT §6 now says.
import { afterAll, describe, expect, it } from "vitest";
import { MemoryQueue } from "#adapters/embedded/memory-queue.ts";
import { workOnMessage } from "#app/worker.ts";
import { depsOverStore, temporaryStore } from "#harness/pipeline-builders.ts";
import { createApi } from "#http/api.ts";

const store = temporaryStore("expose");
afterAll(() => store.close());
const queue = new MemoryQueue();
const deps = depsOverStore(store, { queue });
const app = createApi({ deps });
let subjects = 0;
const freshSubject = () => `expose/${process.pid}/${++subjects}`;
const eventsPath = (subject: string) => `/v1/subjects/${encodeURIComponent(subject)}/events`;

async function call(path: string, init: RequestInit = {}, api = app) {
  const response = await api.request(path, init);
  const text = await response.text();
  // biome-ignore lint/suspicious/noExplicitAny: assertions read whatever the answer holds
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: response.status, headers: response.headers, body };
}

const postJson = (
  body: string | Uint8Array<ArrayBuffer>,
  headers: Record<string, string> = {},
): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  body,
});

async function append(subject: string, events: unknown[]) {
  const answer = await call(eventsPath(subject), postJson(JSON.stringify({ events })));
  expect(answer.status).toBe(200);
  return answer.body;
}

/** Runs what the API queued, as the worker would. */
async function drain(): Promise<string[]> {
  const statuses: string[] = [];
  for (let messages = await queue.receive(10); messages.length > 0; messages = await queue.receive(10))
    for (const message of messages) {
      const outcome = await workOnMessage(deps, message.body);
      statuses.push(outcome.status);
      await (outcome.action === "ack" ? queue.ack(message.receipt) : queue.release(message.receipt));
    }
  return statuses;
}

const note = (id: string, text: string) => ({ eventId: id, kind: "fact", text });

describe("bodies are strict UTF-8 and strict JSON", () => {
  it("invalid UTF-8 is a 400 naming the byte offset, and nothing is stored (it was kept as U+FFFD)", async () => {
    const subject = freshSubject();
    const prefix = new TextEncoder().encode('{"events":[{"eventId":"u-1","kind":"fact","text":"bad ');
    const body = new Uint8Array([...prefix, 0xff, 0xfe, ...new TextEncoder().encode('"}]}')]);
    const answer = await call(eventsPath(subject), postJson(body));
    expect(answer.status).toBe(400);
    expect(answer.body.error.field).toBe("body");
    expect(answer.body.error.message).toContain(`byte offset ${prefix.length}`);
    expect((await deps.events.snapshot(subject)).highWater).toBe(0);
    const ndjson = await call(eventsPath(subject), {
      method: "POST",
      headers: { "content-type": "application/x-ndjson" },
      body: new Uint8Array([
        ...new TextEncoder().encode('{"eventId":"u-2","kind":"fact","text":"ok"}\n"'),
        0xc0,
        0xaf,
      ]),
    });
    expect(ndjson.status).toBe(400);
    expect(ndjson.body.error.message).toMatch(/line 2 is not valid UTF-8/);
  });

  it("an event object holding a key twice is a 400 naming it, as a candidate's (the last one was kept)", async () => {
    const subject = freshSubject();
    const answer = await call(
      eventsPath(subject),
      postJson('{"events":[{"eventId":"a1","eventId":"a2","kind":"fact","text":"x"}]}'),
    );
    expect(answer.status).toBe(400);
    expect(answer.body.error.field).toBe("events[0].eventId");
    const ndjson = await call(eventsPath(subject), {
      method: "POST",
      headers: { "content-type": "application/x-ndjson" },
      body: '{"eventId":"a1","kind":"fact","text":"x","text":"y"}\n',
    });
    expect(ndjson.status).toBe(400);
    expect(ndjson.body.error.field).toBe("line 1 text");
    expect((await deps.events.snapshot(subject)).highWater).toBe(0);
  });
});

describe("bodies that are not JSON", () => {
  it("a JSON body holding a string left open is a 400 naming body at once (the duplicate-key search ran past its end)", async () => {
    const subject = freshSubject();
    for (const body of ['"mS#', '{"events":[{"eventId":"o-1","kind":"fact","text":"open', '"\\'])
      for (const [path, method] of [
        [eventsPath(subject), "POST"],
        ["/v1/settings", "PUT"],
      ] as const) {
        const answer = await call(path, { ...postJson(body), method });
        expect(answer.status, `${method} ${body}`).toBe(400);
        expect(answer.body.error.field, `${method} ${body}`).toBe("body");
      }
    expect((await deps.events.snapshot(subject)).highWater).toBe(0);
  });
});

describe("subjects are checked after percent-decoding", () => {
  it("/v1/subjects/%FF/events is a 400 (the subject %FF was stored literally)", async () => {
    for (const segment of ["%FF", "%E0%A4%A", "%zz", "%C0%AF"]) {
      const answer = await call(
        `/v1/subjects/${segment}/events`,
        postJson(JSON.stringify({ events: [note("p-1", "x")] })),
      );
      expect(answer.status, segment).toBe(400);
      expect(answer.body.error.field).toBe("subject");
    }
    expect(await deps.events.listSubjects()).not.toContain("%FF");
    // A percent sign that is encoded is a subject like any other.
    expect((await call(`/v1/subjects/${encodeURIComponent("50%FF")}/clock`)).status).toBe(404);
  });

  it("a subject with a bidi control or a zero-width character is a 400 on every route", async () => {
    for (const subject of ["alice\u202Eecila", "al\u200Bice"]) {
      const segment = encodeURIComponent(subject);
      expect(
        (
          await call(
            `/v1/subjects/${segment}/events`,
            postJson(JSON.stringify({ events: [note("b-1", "x")] })),
          )
        ).status,
      ).toBe(400);
      expect((await call(`/v1/subjects/${segment}/recall`)).status).toBe(400);
      expect(
        (
          await call(`/v1/subjects/${segment}/policy`, {
            method: "PUT",
            headers: { "content-type": "application/json" },
            body: "{}",
          })
        ).status,
      ).toBe(400);
    }
  });
});

describe("recall always makes progress", () => {
  it("with a budget smaller than the first event, the event is named in omitted.oversized and the cursor moves past it", async () => {
    const subject = freshSubject();
    await append(subject, [
      note("big-1", "A long explanation of the rollout plan ".repeat(20)),
      note("s-1", "Short."),
      note("big-2", "Another long note about the database migration ".repeat(20)),
      note("s-2", "Tiny."),
    ]);
    const served: string[] = [];
    const skipped: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const query: string = `budget=40${cursor ? `&cursor=${cursor}` : ""}`;
      const answer = await call(`/v1/subjects/${encodeURIComponent(subject)}/recall?${query}`);
      expect(answer.status).toBe(200);
      served.push(...answer.body.events.map((e: { eventId: string }) => e.eventId));
      for (const o of answer.body.omitted.oversized) {
        expect(o.tokens).toBeGreaterThan(40);
        skipped.push(o.eventId);
      }
      // Before: events [] and nextCursor equal to the cursor sent, forever.
      expect(answer.body.nextCursor === null || answer.body.nextCursor !== cursor).toBe(true);
      cursor = answer.body.nextCursor;
      if (cursor === null) break;
    }
    expect(cursor).toBeNull();
    expect(served).toEqual(["s-1", "s-2"]);
    expect(skipped).toEqual(["big-1", "big-2"]);
  });

  it("the tail after a summary pages past an oversized event too", async () => {
    const subject = freshSubject();
    await append(subject, [note("f-1", "Backups run nightly.")]);
    await call(`/v1/subjects/${encodeURIComponent(subject)}/consolidations`, { method: "POST" });
    await drain();
    await append(subject, [note("big-t", "A very long tail note ".repeat(40)), note("t-2", "Later.")]);
    const first = await call(`/v1/subjects/${encodeURIComponent(subject)}/recall?budget=60`);
    expect(first.body.mode).toBe("summary");
    let cursor: string | null = first.body.nextCursor;
    const tail: string[] = first.body.tail.map((e: { eventId: string }) => e.eventId);
    const skipped: string[] = first.body.omitted.oversized.map((o: { eventId: string }) => o.eventId);
    for (let page = 0; cursor !== null && page < 5; page++) {
      const next = await call(
        `/v1/subjects/${encodeURIComponent(subject)}/recall?budget=60&cursor=${cursor}`,
      );
      tail.push(...next.body.tail.map((e: { eventId: string }) => e.eventId));
      skipped.push(...next.body.omitted.oversized.map((o: { eventId: string }) => o.eventId));
      cursor = next.body.nextCursor;
    }
    expect(cursor).toBeNull();
    expect(tail).toEqual(["t-2"]);
    expect(skipped).toEqual(["big-t"]);
  });
});

describe("recall as text always makes progress within its budget", () => {
  it("format=text names a skipped event on its own note, moves the cursor past it and stays within the budget", async () => {
    const subject = freshSubject();
    await append(subject, [
      note("s-1", "Short."),
      note("big-1", "A long explanation of the rollout plan ".repeat(30)),
      note("s-2", "Tiny."),
    ]);
    const budget = 150;
    const served: string[] = [];
    const skipped: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const query: string = `format=text&budget=${budget}${cursor ? `&cursor=${cursor}` : ""}`;
      const answer = await call(`/v1/subjects/${encodeURIComponent(subject)}/recall?${query}`);
      expect(answer.status).toBe(200);
      const text: string = answer.body;
      expect(Number(/# served: (\d+) tokens/.exec(text)?.[1])).toBeLessThanOrEqual(budget);
      served.push(...[...text.matchAll(/ ← (s-\d)$/gm)].map((m) => m[1] ?? ""));
      skipped.push(
        ...[
          ...text.matchAll(/^# skipped, larger than the budget leaves a page: (\S+) \(\d+ tokens\)$/gm),
        ].map((m) => m[1] ?? ""),
      );
      const next: string | null = /^# more: cursor (\S+)$/m.exec(text)?.[1] ?? null;
      expect(next === null || next !== cursor).toBe(true);
      cursor = next;
      if (cursor === null) break;
    }
    expect(cursor).toBeNull();
    expect(served).toEqual(["s-1", "s-2"]);
    expect(skipped).toEqual(["big-1"]);
  });
});

describe("settings and latest rules have sizes too", () => {
  const putJson = (body: string | Uint8Array<ArrayBuffer>): RequestInit => ({
    method: "PUT",
    headers: { "content-type": "application/json" },
    body,
  });

  it("PUT /v1/settings is strict JSON: a key twice, or invalid UTF-8, is a 400 naming it, nothing written", async () => {
    const before = await deps.settings.settings();
    const twice = await call("/v1/settings", putJson('{"budget":500,"budget":900}'));
    expect(twice.status).toBe(400);
    expect(twice.body.error.field).toBe("budget");
    const bytes = new Uint8Array([
      ...new TextEncoder().encode('{"latest":["a'),
      0xff,
      ...new TextEncoder().encode('"]}'),
    ]);
    const bad = await call("/v1/settings", putJson(bytes));
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe("body");
    expect(await deps.settings.settings()).toEqual(before);
  });

  it("a settings budget outside 1–100000000 tokens is a 400 naming budget", async () => {
    for (const budget of ["0", "100000001", "1.5", "1e9", '"500"']) {
      const answer = await call("/v1/settings", putJson(`{"budget":${budget}}`));
      expect(answer.status, budget).toBe(400);
      expect(answer.body.error.field, budget).toBe("budget");
    }
  });

  it("at most 64 latest rules of at most 256 characters each, in a policy and in the settings", async () => {
    const subject = freshSubject();
    await append(subject, [note("l-1", "Stock.")]);
    const policyPath = `/v1/subjects/${encodeURIComponent(subject)}/policy`;
    const many = JSON.stringify({ latest: Array.from({ length: 65 }, (_, i) => `stock.${i}.*`) });
    const long = JSON.stringify({ latest: [`${"k".repeat(257)}*`] });
    for (const path of [policyPath, "/v1/settings"]) {
      const tooMany = await call(path, putJson(many));
      expect(tooMany.status, path).toBe(400);
      expect(tooMany.body.error.field, path).toBe("latest");
      expect(tooMany.body.error.message).toContain("at most 64 rules");
      const tooLong = await call(path, putJson(long));
      expect(tooLong.status, path).toBe(400);
      expect(tooLong.body.error.field, path).toMatch(/^latest/);
      expect(tooLong.body.error.message).toContain("at most 256 characters");
    }
    const fits = JSON.stringify({ latest: Array.from({ length: 64 }, (_, i) => `${"k".repeat(250)}.${i}*`) });
    expect((await call(policyPath, putJson(fits))).status).toBe(200);
  });

  it("a recall format other than json or text is a 400 naming format", async () => {
    const subject = freshSubject();
    await append(subject, [note("f-1", "Fact.")]);
    const answer = await call(`/v1/subjects/${encodeURIComponent(subject)}/recall?format=xml`);
    expect(answer.status).toBe(400);
    expect(answer.body.error.field).toBe("format");
  });
});

describe("retries change nothing", () => {
  it("30 consolidations of an unchanged subject publish one summary, not one per request", async () => {
    const subject = freshSubject();
    await append(subject, [
      note("f-1", "Backups run nightly."),
      { eventId: "c-1", kind: "constraint", text: "Never share keys." },
    ]);
    const first = await call(`/v1/subjects/${encodeURIComponent(subject)}/consolidations`, {
      method: "POST",
    });
    expect(first.body.queued).toBe(true);
    await drain();
    const published = (await deps.events.snapshot(subject)).expectedAlias?.parentArtifactId;
    expect(published).toBeDefined();
    for (let i = 0; i < 30; i++) {
      const again = await call(`/v1/subjects/${encodeURIComponent(subject)}/consolidations`, {
        method: "POST",
      });
      expect(again.status).toBe(202);
      expect(again.body).toMatchObject({ queued: false, artifactId: published });
    }
    await drain();
    const records = await deps.artifacts.listRecords(subject);
    expect(records.filter((r) => r.status === "PUBLISHED" || r.status === "SUPERSEDED")).toHaveLength(1);
    // A snapshot queued earlier and delivered late (a retry) generates nothing either.
    const snapshot = await deps.events.snapshot(subject);
    expect((await workOnMessage(deps, snapshot)).status).toBe("dropped");
    expect(await deps.artifacts.listRecords(subject)).toHaveLength(records.length);
  });

  it("revoking an already revoked event appends nothing and leaves highWater where it was", async () => {
    const subject = freshSubject();
    await append(subject, [note("w-1", "The vendor is Acme."), note("w-2", "Budget reviewed.")]);
    const revoke = () =>
      call(
        `/v1/subjects/${encodeURIComponent(subject)}/revocations`,
        postJson(JSON.stringify({ eventIds: ["w-1"] })),
      );
    const first = await revoke();
    expect(first.status).toBe(200);
    expect(first.body.alreadyRevoked).toEqual([]);
    const clock = await deps.events.snapshot(subject);
    for (let i = 0; i < 5; i++) {
      const again = await revoke();
      expect(again.status).toBe(200);
      expect(again.body.alreadyRevoked).toEqual(["w-1"]);
      expect(again.body.highWater).toBe(clock.highWater);
    }
    const after = await deps.events.snapshot(subject);
    expect([after.highWater, after.inputEpoch]).toEqual([clock.highWater, clock.inputEpoch]);
  });

  it("an Idempotency-Key replays the first answer; the same key for another body is a 422", async () => {
    const subject = freshSubject();
    const headers = { "Idempotency-Key": `k-${subject}` };
    const body = JSON.stringify({ events: [note("i-1", "First.")] });
    const first = await call(eventsPath(subject), postJson(body, headers));
    expect(first.status).toBe(200);
    expect(first.body.appended).toEqual(["i-1"]);
    const replay = await call(eventsPath(subject), postJson(body, headers));
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body); // not {appended: [], duplicates: ["i-1"]}
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    const other = await call(
      eventsPath(subject),
      postJson(JSON.stringify({ events: [note("i-2", "Other.")] }), headers),
    );
    expect(other.status).toBe(422);
    expect(other.body.error.field).toBe("Idempotency-Key");
    expect((await deps.events.snapshot(subject)).highWater).toBe(1);
    const revocations = `/v1/subjects/${encodeURIComponent(subject)}/revocations`;
    const revokeOnce = postJson(JSON.stringify({ eventIds: ["i-1"] }), { "Idempotency-Key": `r-${subject}` });
    const revoked = await call(revocations, revokeOnce);
    expect(await call(revocations, revokeOnce)).toMatchObject({ status: 200, body: revoked.body });
    expect((await call(eventsPath(subject), postJson(body, { "Idempotency-Key": "bad key" }))).status).toBe(
      400,
    );
  });

  it("a policy on a subject that does not exist is a 404 and does not make it appear", async () => {
    const subject = freshSubject();
    const put = await call(`/v1/subjects/${encodeURIComponent(subject)}/policy`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ minTrust: "user" }),
    });
    expect(put.status).toBe(404);
    expect(put.body.error.field).toBe("subject");
    expect(await deps.events.listSubjects()).not.toContain(subject);
  });
});

describe("authentication details", () => {
  const guarded = createApi({ deps, token: "s3cret-token" });

  it("the bearer scheme is case-insensitive", async () => {
    for (const scheme of ["Bearer", "bearer", "BEARER"])
      expect(
        (await guarded.request("/v1/settings", { headers: { authorization: `${scheme} s3cret-token` } }))
          .status,
      ).toBe(200);
    for (const header of ["Basic s3cret-token", "bearer", "bearer s3cret-token extra", "Bearer s3cret-toke"])
      expect((await guarded.request("/v1/settings", { headers: { authorization: header } })).status).toBe(
        401,
      );
  });

  it("the review page's static files are public (no memory in them), the API behind them is not", async () => {
    for (const path of ["/review", "/review/app.js", "/review/app.css"])
      expect((await guarded.request(path)).status).toBe(200);
    expect((await guarded.request("/v1/subjects")).status).toBe(401);
  });
});

describe("other origins (memgate serve's guard)", () => {
  const served = createApi({ deps, allowedHosts: ["memgate.internal"] });
  const at = (host: string, init: RequestInit = {}) =>
    served.request(`http://${host}/v1/settings`, { ...init, headers: { host, ...(init.headers ?? {}) } });

  it("a Host that is not an address, localhost or a configured name is a 403 (DNS rebinding)", async () => {
    for (const host of [
      "127.0.0.1:8787",
      "localhost:8787",
      "[::1]:8787",
      "memgate.internal:8787",
      "10.0.0.5",
    ])
      expect((await at(host)).status, host).toBe(200);
    const rebound = await at("attacker.example:8787");
    expect(rebound.status).toBe(403);
    expect(((await rebound.json()) as { error: { field: string } }).error.field).toBe("Host");
  });

  it("a write sent from another origin is a 403, without a token too; the same origin and no origin pass", async () => {
    const subject = freshSubject();
    await append(subject, [note("o-1", "Backups run nightly.")]);
    const consolidate = (headers: Record<string, string>) =>
      served.request(`http://127.0.0.1:8787/v1/subjects/${encodeURIComponent(subject)}/consolidations`, {
        method: "POST",
        headers: { host: "127.0.0.1:8787", ...headers },
      });
    expect((await consolidate({ origin: "http://evil.example" })).status).toBe(403);
    expect((await consolidate({ origin: "null" })).status).toBe(403);
    expect((await consolidate({ "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect((await consolidate({ origin: "http://127.0.0.1:8787" })).status).toBe(202);
    expect((await consolidate({})).status).toBe(202);
    // Reading cross-origin is left to the browser (no CORS headers are sent): a GET passes.
    expect((await at("127.0.0.1:8787", { headers: { origin: "http://evil.example" } })).status).toBe(200);
    await drain();
  });
});
