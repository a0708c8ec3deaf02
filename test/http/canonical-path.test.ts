// One canonical path (CONTRACT §6 "Paths"): the route, the role check, the subject check and
// idempotency all read the path decoded once, so no spelling of a path reaches a route its token
// may not call, a path that does not decode is a 400, and one that names no route never reaches a
// handler. Every route × every role × every encoded form, in process; the attacks again
// against `memgate serve` over a socket, paths sent byte for byte.
import { mkdtempSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run } from "#app/run.ts";
import { takeSnapshot } from "#app/snapshot.ts";
import { depsOverStore, temporaryStore } from "#harness/pipeline-builders.ts";
import { type ServeProcess, startServe } from "#harness/serve-process.ts";
import { createApi } from "#http/api.ts";
import { canonicalPath } from "#http/canonical-path.ts";
import { roleTokens } from "#http/role-tokens.ts";
import { API_ROLES, API_ROUTES, type ApiRole, type ApiRouteAccess } from "#runtime/api-roles.ts";
import { pathForms, routeNamed, writingBody } from "../support/path-forms.ts";

const store = temporaryStore("canonical-path");
afterAll(() => store.close());
const deps = depsOverStore(store);
const TOKENS = {
  agent: "agent-token-0001",
  reviewer: "reviewer-token-01",
  admin: "admin-role-token-1",
  "every role": "every-role-token-1",
} as const;
type Caller = keyof typeof TOKENS;
const ROLES_OF: Record<Caller, readonly ApiRole[]> = {
  agent: ["agent"],
  reviewer: ["reviewer"],
  admin: ["admin"],
  "every role": API_ROLES,
};
const logged: string[] = [];
const app = createApi({
  deps,
  roleTokens: roleTokens(TOKENS["every role"], [
    `agent=${TOKENS.agent}`,
    `reviewer=${TOKENS.reviewer}`,
    `admin=${TOKENS.admin}`,
  ]),
  logRequest: (line) => logged.push(line),
});
let artifactId = "";

beforeAll(async () => {
  await deps.events.append("ana", [
    { eventId: "c-1", kind: "constraint", text: "Never share keys.", trust: "user" },
    { eventId: "n-1", kind: "note", text: "Likes tea.", trust: "user" },
  ]);
  const outcome = await run(deps, await takeSnapshot(deps, "ana"));
  if ("artifactId" in outcome) artifactId = outcome.artifactId;
});

async function send(caller: Caller | null, method: string, path: string, body?: string) {
  const response = await app.request(path, {
    method,
    headers: {
      ...(caller === null ? {} : { authorization: `Bearer ${TOKENS[caller]}` }),
      "content-type": "application/json",
    },
    ...(body === undefined ? {} : { body }),
  });
  const answer = (await response.json()) as { error?: { field?: string; message?: string } };
  // The path the router routed on: the request log's, written once the answer is made.
  const [, , servedPath = ""] = /^(\S+) (\S+) \d+ /.exec(logged.at(-1) ?? "") ?? [];
  return { status: response.status, field: answer.error?.field, message: answer.error?.message, servedPath };
}

/** Everything a request could have written. */
async function state(): Promise<string> {
  return JSON.stringify([
    await deps.settings.settings(),
    await deps.events.listSubjects(),
    await deps.events.snapshot("ana"),
    await deps.events.storedPolicy("ana"),
    (await deps.artifacts.listRecords("ana")).map((r) => [r.artifactId, r.status, r.stale]),
  ]);
}

describe("the canonical path", () => {
  it("decodes each segment once and strictly; an encoded / stays in its segment; hex is written in upper case", () => {
    expect(canonicalPath("/v1/%73ettings")).toMatchObject({ ok: true, path: "/v1/settings" });
    expect(canonicalPath("/v1/subjects/a%2fb/clock")).toMatchObject({
      ok: true,
      path: "/v1/subjects/a%2Fb/clock",
      segments: ["", "v1", "subjects", "a/b", "clock"],
    });
    // Decoded once: %2573 is the text %73, written canonically as %2573 again, never "s".
    expect(canonicalPath("/v1/subjects/%2573/clock")).toMatchObject({
      ok: true,
      path: "/v1/subjects/%2573/clock",
      segments: ["", "v1", "subjects", "%73", "clock"],
    });
    expect(canonicalPath("/v1/subjects/a:b/clock")).toEqual(canonicalPath("/v1/subjects/a%3ab/clock"));
    expect(canonicalPath("/v1/subjects/%C3%A9/clock")).toMatchObject({ path: "/v1/subjects/%C3%A9/clock" });
    for (const segment of ["%FF", "%zz", "100%", "%E0%A4%A", "%C0%AF", "%ED%A0%80", "%"])
      expect(canonicalPath(`/v1/subjects/${segment}/events`), segment).toMatchObject({
        ok: false,
        segments: ["", "v1", "subjects", null, "events"],
      });
  });

  it("every route × every role × every encoded form: no role reaches a route it may not call, no unnamed route reaches a handler", async () => {
    const reached = new Map<Caller, Set<ApiRouteAccess>>();
    let cases = 0;
    for (const route of API_ROUTES)
      for (const { form, path } of pathForms(route.path, { subject: "ana", artifactId })) {
        const named = routeNamed(route.method, path);
        for (const caller of Object.keys(TOKENS) as Caller[]) {
          const what = `${caller}: ${route.method} ${path} (${form} of ${route.path})`;
          const allowed = named?.roles.some((role) => ROLES_OF[caller].includes(role)) ?? false;
          const before = allowed ? "" : await state();
          const answer = await send(caller, route.method, path, writingBody(route));
          cases++;
          if (named === null) {
            expect([answer.status, answer.field], what).toEqual([404, "path"]);
            expect(answer.message, what).toMatch(/^path: no route /);
          } else if (!allowed) {
            expect([answer.status, answer.field], what).toEqual([403, "Authorization"]);
            expect(answer.message, what).toContain(`${named.method} ${named.path} needs a token`);
          } else {
            expect([401, 403], what).not.toContain(answer.status);
            expect(answer.field === "path" && answer.status === 404, what).toBe(false);
            // The route the router served is the one the path names, decoded once.
            expect(routeNamed(route.method, answer.servedPath), what).toBe(named);
            reached.set(caller, (reached.get(caller) ?? new Set()).add(named));
          }
          if (!allowed) expect(await state(), `${what} wrote`).toBe(before);
        }
      }
    expect(cases).toBeGreaterThan(API_ROUTES.length * 4 * 5);
    for (const [caller, routes] of reached)
      for (const route of routes)
        expect(
          route.roles.some((role) => ROLES_OF[caller].includes(role)),
          `${caller} reached ${route.method} ${route.path}`,
        ).toBe(true);
    // Each caller reached every route of its roles in some form: the refusals above are not all there is.
    for (const caller of Object.keys(TOKENS) as Caller[])
      expect(reached.get(caller)?.size, caller).toBe(
        API_ROUTES.filter((route) => route.roles.some((role) => ROLES_OF[caller].includes(role))).length,
      );
  });

  it("refuses the attacks the issue found: an agent on settings and policies, a reviewer on recall and appends", async () => {
    const before = await state();
    for (const [caller, method, path, body] of [
      ["agent", "GET", "/v1/%73ettings", undefined],
      ["agent", "PUT", "/v1/%73ettings", JSON.stringify({ recallBypass: true })],
      ["agent", "GET", "/v1/subjects/ana/%70olicy", undefined],
      ["agent", "PUT", "/v1/subjects/ana/%70olicy", JSON.stringify({ minTrust: "user" })],
      ["reviewer", "GET", "/v1/subjects/ana/%72ecall", undefined],
      ["reviewer", "POST", "/v1/subjects/ana/%65vents", writingBody(API_ROUTES[0] as ApiRouteAccess)],
    ] as const) {
      const answer = await send(caller, method, path, body);
      expect([answer.status, answer.field], `${caller} ${method} ${path}`).toEqual([403, "Authorization"]);
    }
    expect(await state()).toBe(before);
    expect((await deps.settings.settings()).recallBypass).toBe(false);
  });

  it("refuses a path that does not decode with a 400 naming it, after the token and before the role: the subject %FF is never stored", async () => {
    const before = await state();
    const events = writingBody(API_ROUTES[0] as ApiRouteAccess);
    for (const segment of ["%FF", "%E0%A4%A", "%zz", "100%", "%C0%AF"]) {
      const path = `/v1/%73ubjects/${segment}/events`;
      const answer = await send("agent", "POST", path, events);
      expect([answer.status, answer.field], path).toEqual([400, "subject"]);
      expect(answer.message, path).toContain(`"${segment}" in the path ${path} is not percent-encoded UTF-8`);
      // A reviewer may not append: still 400, the path is read before the role is.
      expect((await send("reviewer", "POST", path, events)).status, path).toBe(400);
      expect((await send(null, "POST", path, events)).status, path).toBe(401);
    }
    expect(await send("every role", "GET", "/v1/%FFsettings")).toMatchObject({ status: 400, field: "path" });
    expect(await state()).toBe(before);
    const subjects = await deps.events.listSubjects();
    expect(subjects).not.toContain("%FF");
    // Without tokens (loopback, and the api function behind API Gateway) the same.
    const open = createApi({ deps });
    const answer = await open.request("/v1/%73ubjects/%FF/events", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: events ?? null,
    });
    expect(answer.status).toBe(400);
    expect(await deps.events.listSubjects()).toEqual(subjects);
  });

  it("checks the subject and remembers Idempotency-Key on the canonical path", async () => {
    expect(await send("agent", "GET", "/v1/%73ubjects/a%07b/clock")).toMatchObject({
      status: 400,
      field: "subject",
    });
    const post = (path: string, key: string) =>
      app.request(path, {
        method: "POST",
        headers: {
          authorization: `Bearer ${TOKENS.agent}`,
          "content-type": "application/json",
          "idempotency-key": key,
        },
        body: JSON.stringify({ events: [{ eventId: `i-${key}`, kind: "note", text: "Once." }] }),
      });
    expect((await post("/v1/subjects/ana/events", "canonical-1")).status).toBe(200);
    // The same request spelled another way is the same request: answered again, not run.
    const again = await post("/v1/%73ubjects/%61na/%65vents", "canonical-1");
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    // %2561na is the subject "%61na": another path, so the key is refused for it.
    expect((await post("/v1/subjects/%2561na/events", "canonical-1")).status).toBe(422);
  });
});

describe("memgate serve, paths sent byte for byte", () => {
  let server: ServeProcess;
  const home = mkdtempSync(join(tmpdir(), "memgate-canonical-"));
  beforeAll(async () => {
    server = await startServe([
      "--home",
      home,
      "--token",
      TOKENS["every role"],
      "--role-token",
      `agent=${TOKENS.agent}`,
      "--role-token",
      `reviewer=${TOKENS.reviewer}`,
    ]);
  });
  afterAll(async () => {
    if (server.child.exitCode === null) await server.stop("SIGKILL");
  });

  /** One request with its path exactly as written (fetch would normalise it). */
  function raw(caller: Caller, method: string, path: string, body?: string) {
    const url = new URL(server.url);
    return new Promise<{ status: number; body: { error?: { field?: string } } }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          method,
          path,
          headers: {
            authorization: `Bearer ${TOKENS[caller]}`,
            ...(body === undefined ? {} : { "content-type": "application/json" }),
          },
        },
        (res) => {
          let text = "";
          res.on("data", (chunk) => {
            text += String(chunk);
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  }

  it("answers the issue's attacks 403, %FF 400, and writes nothing", async () => {
    const note = JSON.stringify({ events: [{ eventId: "s-1", kind: "note", text: "Likes tea." }] });
    expect((await raw("agent", "POST", "/v1/subjects/ana/events", note)).status).toBe(200);
    for (const [caller, method, path, body] of [
      ["agent", "GET", "/v1/%73ettings", undefined],
      ["agent", "PUT", "/v1/%73ettings", JSON.stringify({ recallBypass: true })],
      ["agent", "PUT", "/v1/subjects/ana/%70olicy", JSON.stringify({ minTrust: "user" })],
      ["agent", "GET", "/v1/subjects/%2e%2e/settings", undefined],
      ["reviewer", "GET", "/v1/subjects/ana/%72ecall", undefined],
      ["reviewer", "POST", "/v1/subjects/ana/%65vents", note.replace("s-1", "s-2")],
    ] as const)
      expect((await raw(caller, method, path, body)).status, `${caller} ${method} ${path}`).toBe(403);
    const ff = await raw("agent", "POST", "/v1/%73ubjects/%FF/events", note);
    expect([ff.status, ff.body.error?.field]).toEqual([400, "subject"]);
    expect((await raw("agent", "GET", "/v1/subjects/ana%2Frecall")).status).toBe(404);
    const settings = await raw("every role", "GET", "/v1/settings");
    expect(settings.body).toMatchObject({ recallBypass: false });
    const subjects = (await raw("reviewer", "GET", "/v1/subjects")).body as {
      subjects: { subject: string }[];
    };
    expect(subjects.subjects.map((s) => s.subject)).toEqual(["ana"]);
    const clock = (await raw("reviewer", "GET", "/v1/subjects/ana/clock")).body as { highWater: number };
    expect(clock.highWater).toBe(1);
  });
});
