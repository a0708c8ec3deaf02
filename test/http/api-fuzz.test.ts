// Random and mutated requests against the HTTP API: never a 5xx, never a write on a 4xx, and every
// refusal is the contract's error naming what was wrong.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run } from "#app/run.ts";
import { takeSnapshot } from "#app/snapshot.ts";
import { depsOverStore, temporaryStore } from "#harness/pipeline-builders.ts";
import { createApi } from "#http/api.ts";

const store = temporaryStore("fuzz");
afterAll(() => store.close());
const deps = depsOverStore(store);
const app = createApi({ deps });
const SUBJECTS = ["alice", "team/ops", "客户-7"];
let artifactId = "";

const validEvent = {
  eventId: "v-1",
  kind: "fact",
  text: "The budget is 12,500 USD.",
  assertions: [{ key: "budget", value: { quantity: "12500", unit: "USD" }, polarity: "affirmed" }],
};

beforeAll(async () => {
  for (const subject of SUBJECTS) {
    await app.request(`/v1/subjects/${encodeURIComponent(subject)}/events`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        events: [validEvent, { eventId: "c-1", kind: "constraint", text: "Never share keys." }],
      }),
    });
    const outcome = await run(deps, await takeSnapshot(deps, subject));
    if ("artifactId" in outcome) artifactId = outcome.artifactId;
  }
});

/** Everything a request could have written: each subject's clock and artifacts, and the settings. */
async function state(): Promise<string> {
  const parts: unknown[] = [await deps.settings.settings()];
  for (const subject of SUBJECTS)
    parts.push(
      await deps.events.snapshot(subject),
      await deps.events.trustPolicy(subject),
      (await deps.artifacts.listRecords(subject)).map((r) => [r.artifactId, r.status, r.stale]),
    );
  return JSON.stringify(parts);
}

const subjectSegment = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...SUBJECTS).map(encodeURIComponent) },
  { weight: 1, arbitrary: fc.string({ maxLength: 140 }).map(encodeURIComponent) },
  { weight: 1, arbitrary: fc.constantFrom("%", "%zz", "%00", "a%2Fb", "..", "%E0%A4%A", "x".repeat(300)) },
);
const artifactSegment = fc.oneof(
  fc.constant(null).map(() => encodeURIComponent(artifactId)),
  fc.string({ maxLength: 60 }).map(encodeURIComponent),
  fc.constantFrom("summary:alice:000002:nope", "summary::1:x", "%ff"),
);
const subjectRoute = fc
  .tuple(
    subjectSegment,
    fc.constantFrom(
      ["POST", "events"],
      ["POST", "revocations"],
      ["GET", "clock"],
      ["GET", "recall"],
      ["POST", "consolidations"],
      ["GET", "artifacts"],
      ["GET", "review"],
      ["GET", "policy"],
      ["PUT", "policy"],
    ),
  )
  .map(([subject, [method, leaf]]) => ({ method, target: `/v1/subjects/${subject}/${leaf}` }));
const artifactRoute = fc
  .tuple(artifactSegment, fc.constantFrom(["GET", ""], ["GET", "/lineage"], ["POST", "/approve"]))
  .map(([id, [method, leaf]]) => ({ method, target: `/v1/artifacts/${id}${leaf}` }));
const anyRequest = fc.record({
  method: fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH"),
  target: fc.oneof(
    fc.constantFrom("/v1/settings", "/healthz", "/v1/openapi.json", "/", "/v1", "/v1/subjects"),
    fc.webPath(),
    subjectRoute.map((r) => r.target),
  ),
});
/** Mostly requests to real routes with their own method (bodies and queries bent), some anything. */
const route = fc.oneof(
  { weight: 5, arbitrary: subjectRoute },
  { weight: 2, arbitrary: artifactRoute },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      { method: "PUT", target: "/v1/settings" },
      { method: "GET", target: "/v1/settings" },
    ),
  },
  { weight: 2, arbitrary: anyRequest },
);
const query = fc.oneof(
  fc.constant(""),
  fc
    .dictionary(
      fc.constantFrom("scope", "budget", "query", "cursor", "format", "x"),
      fc.oneof(
        fc.string({ maxLength: 30 }),
        fc.integer().map(String),
        fc.constantFrom("-1", "1e9", "dot", "png"),
      ),
      { maxKeys: 3 },
    )
    .map((params) => `?${new URLSearchParams(params)}`),
);
/** Valid-looking event batches bent one field at a time, and arbitrary JSON. */
const mutatedEvent = fc.record(
  {
    eventId: fc.oneof(fc.constant("v-1"), fc.string({ maxLength: 140 }), fc.integer()),
    kind: fc.oneof(
      fc.constantFrom("fact", "note", "constraint", "revocation", "task"),
      fc.string({ maxLength: 10 }),
    ),
    text: fc.oneof(fc.string({ maxLength: 50 }), fc.integer(), fc.constant(null)),
    assertions: fc.oneof(fc.constant(validEvent.assertions), fc.array(fc.jsonValue(), { maxLength: 2 })),
    revokes: fc.array(fc.string({ maxLength: 8 }), { maxLength: 2 }),
    trust: fc.constantFrom("user", "tool", "root", 7),
    sequence: fc.oneof(fc.integer(), fc.double()),
  },
  { requiredKeys: [] },
);
const body = fc.oneof(
  fc.constant(undefined),
  fc.array(mutatedEvent, { maxLength: 4 }).map((events) => JSON.stringify({ events })),
  fc.array(mutatedEvent, { maxLength: 4 }).map((events) => events.map((e) => JSON.stringify(e)).join("\n")),
  fc.jsonValue().map((value) => JSON.stringify(value)),
  fc
    .record({ eventIds: fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }), reason: fc.anything() })
    .map((r) => JSON.stringify(r)),
  fc
    .record(
      { publishMode: fc.string(), recallBypass: fc.anything(), rebuildAfterEvents: fc.anything() },
      { requiredKeys: [] },
    )
    .map((r) => JSON.stringify(r)),
  fc
    .record({ minTrust: fc.string(), blockedSources: fc.anything() }, { requiredKeys: [] })
    .map((r) => JSON.stringify(r)),
  fc.string({ maxLength: 200 }),
);
const contentType = fc.constantFrom(
  undefined,
  "application/json",
  "application/json; charset=utf-8",
  "application/x-ndjson",
  "text/plain",
  "multipart/form-data",
  "APPLICATION/JSON",
);

describe("API fuzz", () => {
  it("random and mutated requests: no 5xx; a 4xx writes nothing and names the field", async () => {
    await fc.assert(
      fc.asyncProperty(route, query, contentType, body, async ({ method, target }, search, type, payload) => {
        const before = await state();
        const canHaveBody = method !== "GET";
        const response = await app.request(`${target}${search}`, {
          method,
          headers: type === undefined ? {} : { "content-type": type },
          ...(canHaveBody && payload !== undefined ? { body: payload } : {}),
        });
        expect(response.status).toBeLessThan(500);
        if (response.status >= 400) {
          const answer = (await response.json()) as {
            error?: { code?: unknown; message?: unknown; field?: unknown };
          };
          expect(typeof answer.error?.code).toBe("string");
          expect(typeof answer.error?.message).toBe("string");
          expect(typeof answer.error?.field).toBe("string");
          expect(await state()).toBe(before);
        }
      }),
      { numRuns: 400 },
    );
  });

  it("oversized requests are refused with the limit named, and nothing is written", async () => {
    const before = await state();
    for (const size of [5 * 1024 * 1024 + 1, 8 * 1024 * 1024]) {
      const response = await app.request("/v1/subjects/alice/events", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ events: [{ eventId: "big", kind: "note", text: "x".repeat(size) }] }),
      });
      expect(response.status).toBe(413);
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/5 MiB/);
    }
    expect(await state()).toBe(before);
  });
});
