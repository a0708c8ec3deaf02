// memgate serve's tokens by role (shared/runtime/api-roles.ts, the table the stack's scopes and
// policies come from): --token holds every role, as it could always call every route; a role token
// reaches its role's routes and gets 403 naming the role elsewhere; an unknown token is 401.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { memgate } from "#harness/cli.ts";
import { depsOverStore, temporaryStore } from "#harness/pipeline-builders.ts";
import { routeCalled } from "#http/access.ts";
import { createApi } from "#http/api.ts";
import { RoleTokenError, roleTokens } from "#http/role-tokens.ts";
import { API_ROUTES } from "#runtime/api-roles.ts";

const store = temporaryStore("roles");
afterAll(() => store.close());
const deps = depsOverStore(store);
const ADMIN = "admin-token-0001";
const AGENT = "agent-token-0001";
const REVIEWER = "reviewer-token-01";
const BOTH = "agent-and-reviewer";
const app = createApi({
  deps,
  roleTokens: roleTokens(ADMIN, [
    `agent=${AGENT}`,
    `reviewer=${REVIEWER}`,
    `agent=${BOTH}`,
    `reviewer=${BOTH}`,
  ]),
});

async function as(token: string, method: string, path: string, body?: unknown) {
  const response = await app.request(path, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
}

const subject = encodeURIComponent("roles/ana?#%");
const note = { eventId: "n-1", kind: "note", text: "Likes tea." };

describe("memgate serve's tokens by role", () => {
  it("lets an agent token append and recall, and refuses it the admin's and reviewer's routes with 403", async () => {
    expect((await as(AGENT, "POST", `/v1/subjects/${subject}/events`, { events: [note] })).status).toBe(200);
    expect((await as(AGENT, "GET", `/v1/subjects/${subject}/recall`)).status).toBe(200);
    const settings = await as(AGENT, "PUT", "/v1/settings", { publishMode: "shadow" });
    expect(settings).toEqual({
      status: 403,
      body: {
        error: {
          code: "forbidden",
          message: "PUT /v1/settings needs a token with the role admin; this token holds agent",
          field: "Authorization",
        },
      },
    });
    expect((await as(AGENT, "GET", "/v1/settings")).body.error.message).toMatch(/role admin/);
    expect((await as(AGENT, "GET", `/v1/subjects/${subject}/review`)).body.error.message).toMatch(
      /role reviewer; this token holds agent/,
    );
    // Refused before anything is written.
    expect((await as(ADMIN, "GET", "/v1/settings")).body.publishMode).toBe("live");
  });

  it("lets a reviewer token review and read subjects, never append", async () => {
    expect((await as(REVIEWER, "GET", `/v1/subjects/${subject}/review`)).status).toBe(200);
    expect((await as(REVIEWER, "GET", "/v1/subjects")).status).toBe(200);
    const append = await as(REVIEWER, "POST", `/v1/subjects/${subject}/events`, { events: [note] });
    expect(append.status).toBe(403);
    expect(append.body.error.message).toBe(
      "POST /v1/subjects/{subject}/events needs a token with the role agent; this token holds reviewer",
    );
  });

  it("gives a token named for two roles both, and --token every route", async () => {
    expect((await as(BOTH, "GET", `/v1/subjects/${subject}/review`)).status).toBe(200);
    expect((await as(BOTH, "GET", `/v1/subjects/${subject}/recall`)).status).toBe(200);
    expect((await as(BOTH, "PUT", "/v1/settings", {})).status).toBe(403);
    expect((await as(ADMIN, "PUT", "/v1/settings", { rebuildAfterEvents: 5 })).status).toBe(200);
    expect((await as(ADMIN, "POST", `/v1/subjects/${subject}/events`, { events: [note] })).status).toBe(200);
    expect((await as(ADMIN, "GET", `/v1/subjects/${subject}/review`)).status).toBe(200);
  });

  it("answers 401 to an unknown or missing token, and needs none on /healthz", async () => {
    expect((await as("agent-token-0002", "GET", `/v1/subjects/${subject}/recall`)).status).toBe(401);
    expect((await app.request("/v1/subjects")).status).toBe(401);
    expect((await app.request("/healthz")).status).toBe(200);
  });

  it("comes before the checks of other origins and Idempotency-Key, which then apply as without roles", async () => {
    const guarded = createApi({
      deps,
      roleTokens: roleTokens(ADMIN, [`agent=${AGENT}`]),
      allowedHosts: [],
    });
    const post = (token: string | null, host: string, headers: Record<string, string> = {}) =>
      guarded.request(`http://${host}/v1/subjects/${subject}/events`, {
        method: "POST",
        headers: {
          host,
          "content-type": "application/json",
          ...(token === null ? {} : { authorization: `bearer\t${token}` }),
          ...headers,
        },
        body: JSON.stringify({ events: [{ ...note, eventId: "n-guarded" }] }),
      });
    const field = async (response: Response) =>
      [response.status, ((await response.json()) as { error: { field: string } }).error.field] as const;
    // Neither a missing nor an unknown token learns anything of the Host or Origin checks.
    expect(await field(await post(null, "attacker.example"))).toEqual([401, "Authorization"]);
    expect(await field(await post("agent-token-0002", "attacker.example"))).toEqual([401, "Authorization"]);
    // A known token without the route's role: 403 for its role, whatever else the request carries.
    const settings = await guarded.request("http://attacker.example/v1/settings", {
      headers: { host: "attacker.example", authorization: `Bearer ${AGENT}` },
    });
    expect(await field(settings)).toEqual([403, "Authorization"]);
    // The role allows the route: then the Host and Origin checks.
    expect(await field(await post(AGENT, "attacker.example"))).toEqual([403, "Host"]);
    expect(await field(await post(AGENT, "127.0.0.1:8787", { origin: "http://evil.example" }))).toEqual([
      403,
      "Origin",
    ]);
    // And Idempotency-Key: the same key and body answered again, another body under it a 422.
    const first = await post(AGENT, "127.0.0.1:8787", { "idempotency-key": "roles-key-1" });
    expect(first.status).toBe(200);
    const again = await post(ADMIN, "127.0.0.1:8787", { "idempotency-key": "roles-key-1" });
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const other = await guarded.request(`http://127.0.0.1:8787/v1/subjects/${subject}/revocations`, {
      method: "POST",
      headers: {
        host: "127.0.0.1:8787",
        "content-type": "application/json",
        authorization: `Bearer ${AGENT}`,
        "idempotency-key": "roles-key-1",
      },
      body: JSON.stringify({ eventIds: ["n-guarded"], reason: "test" }),
    });
    expect(other.status).toBe(422);
  });

  it("finds the route of every request the roles table names, encoded subjects included", () => {
    for (const route of API_ROUTES) {
      const path = route.path.replace(/\{[^}]+\}/g, "a%2Fb%3Fc");
      expect(routeCalled(route.method, path), `${route.method} ${route.path}`).toBe(route);
    }
    expect(routeCalled("HEAD", "/healthz")?.path).toBe("/healthz");
    expect(routeCalled("GET", "/v1/nothing")).toBeNull();
  });

  it("refuses a role token that names no role, or is too short, naming the flag", () => {
    expect(() => roleTokens(undefined, ["boss=long-enough-token"])).toThrow(
      new RoleTokenError(
        '--role-token "boss=long-enough-token" must be ROLE=TOKEN with ROLE one of agent, reviewer, admin',
      ),
    );
    expect(() => roleTokens(undefined, ["agent"])).toThrow(/ROLE=TOKEN/);
    expect(() => roleTokens(undefined, ["agent=short"])).toThrow(/--role-token must be at least 8/);
    expect(() => roleTokens("short", [])).toThrow(/--token must be at least 8/);
  });

  it("memgate serve says so and starts nothing", async () => {
    const home = mkdtempSync(join(tmpdir(), "memgate-roles-cli-"));
    const result = await memgate([
      "serve",
      "--home",
      home,
      "--port",
      "0",
      "--role-token",
      "root=long-enough-token",
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--role-token "root=long-enough-token" must be ROLE=TOKEN/);
  });
});
