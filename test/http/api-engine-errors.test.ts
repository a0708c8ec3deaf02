// How the API answers when the store throttles, cannot be reached or contends: 429/503 with
// Retry-After, never a bare 500, and the client carries the wait. The store here is a stand-in
// that raises the engines' own errors (names and codes as the AWS SDK and Node raise them).
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Deps } from "#app/deps.ts";
import { MemgateApiError, MemgateClient } from "#client/client.ts";
import { createApi } from "#http/api.ts";
import { StoreContentionError } from "#ports/errors.ts";
import type { EventLog } from "#ports/event-log.ts";

function failingApi(error: unknown) {
  const events = new Proxy({} as EventLog, {
    get: () => async () => {
      throw error;
    },
  });
  const unexpected: unknown[] = [];
  const api = createApi({ deps: { events } as unknown as Deps, logUnexpected: (e) => unexpected.push(e) });
  return { api, unexpected };
}

const named = (name: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(`${name} from the engine`), { name, ...extra });

describe("engine failures over HTTP", () => {
  it.each([
    ["ThrottlingException", 429, named("ThrottlingException", { $metadata: { httpStatusCode: 400 } })],
    ["ProvisionedThroughputExceededException", 429, named("ProvisionedThroughputExceededException")],
    ["RequestLimitExceeded", 429, named("RequestLimitExceeded")],
    ["SlowDown (S3)", 429, named("SlowDown", { $metadata: { httpStatusCode: 503 } })],
    [
      "ECONNREFUSED",
      503,
      Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }),
    ],
    ["TimeoutError", 503, named("TimeoutError")],
    ["InternalServerError 500", 503, named("InternalServerError", { $metadata: { httpStatusCode: 500 } })],
    ["SQLITE_BUSY", 503, Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" })],
    ["StoreContentionError", 503, new StoreContentionError("the clock kept moving")],
  ])("%s → %i with Retry-After", async (_label, status, error) => {
    const { api } = failingApi(error);
    const response = await api.request("/v1/subjects/ana/clock");
    expect(response.status).toBe(status);
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
    const body = (await response.json()) as { error: { code: string } };
    expect(["throttled", "unavailable", "contention"]).toContain(body.error.code);
  });

  it("an unexpected error is a 500 that says it was logged, and is logged", async () => {
    const { api, unexpected } = failingApi(new TypeError("x is not a function"));
    const response = await api.request("/v1/subjects/ana/clock");
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({
      error: { code: "internal", message: "unexpected error; it was logged" },
    });
    expect(unexpected).toHaveLength(1);
  });

  it("the client reports the wait", async () => {
    const { api } = failingApi(named("ThrottlingException"));
    const client = new MemgateClient({
      baseUrl: "http://memgate.test",
      fetch: (request) => api.fetch(request),
    });
    const error = await client.clock("ana").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MemgateApiError);
    expect((error as MemgateApiError).retryAfterSeconds).toBe(1);
  });
});

describe("the client's SigV4 signing (shape only: no API Gateway runs here)", () => {
  it("signs for execute-api in the region with the given credentials, body hash included", async () => {
    const seen: Request[] = [];
    const client = new MemgateClient({
      baseUrl: "https://abc123.execute-api.eu-west-1.amazonaws.com",
      sigv4: { region: "eu-west-1", credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" } },
      fetch: async (request) => {
        seen.push(request);
        return new Response(JSON.stringify({ appended: [] }), {
          headers: { "content-type": "application/json" },
        });
      },
    });
    await client.append("ana", [{ eventId: "n-1", kind: "note", text: "hi" }]);
    const request = seen[0] as Request;
    expect(request.headers.get("authorization")).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/execute-api\/aws4_request, SignedHeaders=[^,]*host[^,]*, Signature=[0-9a-f]{64}$/,
    );
    expect(request.headers.get("x-amz-date")).toMatch(/^\d{8}T\d{6}Z$/);
    const body = JSON.stringify({ events: [{ eventId: "n-1", kind: "note", text: "hi" }] });
    expect(await request.text()).toBe(body);
    expect(request.headers.get("x-amz-content-sha256")).toBe(createHash("sha256").update(body).digest("hex"));
  });
});

describe("the worker's rule for contention", () => {
  it("store contention is retried, never acknowledged", async () => {
    const { workOnMessage } = await import("#app/worker.ts");
    const events = new Proxy({} as EventLog, {
      get: () => async () => {
        throw new StoreContentionError("another writer held the clock");
      },
    });
    const outcome = await workOnMessage({ events } as unknown as Deps, {
      subject: "ana",
      highWater: 2,
      inputEpoch: 0,
      expectedAlias: null,
    });
    expect(outcome).toMatchObject({ action: "retry", status: "contention" });
  });
});
