// The role table the tenant stack declares its routes from (shared/runtime/api-roles.ts) against
// the HTTP API itself: every route the router serves has its roles, and no role names a route the
// router does not serve. A route added to the API without a role would not be reachable on AWS.
import { afterAll, describe, expect, it } from "vitest";
import { depsOverStore, temporaryStore } from "#harness/pipeline-builders.ts";
import { createApi } from "#http/api.ts";
import { type API_ROLES, API_ROUTES, routesOf } from "#runtime/api-roles.ts";

const store = temporaryStore("roles");
afterAll(() => store.close());
const app = createApi({ deps: depsOverStore(store) });

/** The routes the API documents (OpenAPI 3.1), as "METHOD /path/{param}". */
async function documentedRoutes(): Promise<string[]> {
  const response = await app.request("/v1/openapi.json");
  const document = (await response.json()) as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
  );
}

describe("the API's roles", () => {
  it("give every route the API documents at least one role, and name no route it does not serve", async () => {
    const declared = API_ROUTES.map((route) => `${route.method} ${route.path}`);
    expect(new Set(declared).size).toBe(declared.length);
    // The document and the health check are served beside the documented routes.
    expect(declared.sort()).toEqual(
      [...(await documentedRoutes()), "GET /v1/openapi.json", "GET /healthz"].sort(),
    );
    for (const route of API_ROUTES)
      expect(route.roles.length, `${route.method} ${route.path}`).toBeGreaterThan(0);
    expect((await app.request("/healthz")).status).toBe(200);
  });

  it("split the callers as the issue says: agents write and recall, reviewers decide, admins configure", () => {
    const keys = (role: (typeof API_ROLES)[number]) => routesOf(role).map((r) => `${r.method} ${r.path}`);
    expect(keys("agent")).toEqual(
      expect.arrayContaining([
        "POST /v1/subjects/{subject}/events",
        "GET /v1/subjects/{subject}/recall",
        "POST /v1/subjects/{subject}/revocations",
        "POST /v1/subjects/{subject}/consolidations",
      ]),
    );
    expect(keys("reviewer")).toEqual(
      expect.arrayContaining([
        "GET /v1/subjects/{subject}/review",
        "POST /v1/artifacts/{artifactId}/approve",
        "POST /v1/artifacts/{artifactId}/reject",
      ]),
    );
    expect(keys("admin")).toEqual(
      expect.arrayContaining(["PUT /v1/settings", "GET /v1/settings", "PUT /v1/subjects/{subject}/policy"]),
    );
    // Nobody but a reviewer decides, nobody but an admin configures, only agents write the log.
    const only = (route: string, role: string) =>
      expect(API_ROUTES.find((r) => `${r.method} ${r.path}` === route)?.roles, route).toEqual([role]);
    only("POST /v1/artifacts/{artifactId}/approve", "reviewer");
    only("POST /v1/artifacts/{artifactId}/reject", "reviewer");
    only("PUT /v1/settings", "admin");
    only("PUT /v1/subjects/{subject}/policy", "admin");
    only("POST /v1/subjects/{subject}/events", "agent");
    only("POST /v1/subjects/{subject}/revocations", "agent");
  });
});
