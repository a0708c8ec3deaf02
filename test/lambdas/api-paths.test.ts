// The api function behind API Gateway (CONTRACT §6 "Paths"): API Gateway matches a route and its
// authorizer checks that route's roles, so the function must serve that route and no other,
// whatever the caller wrote and however API Gateway matched it (on the path as sent or decoded:
// both are tried), and a path matched to no route reaches no handler. Every route × every role ×
// every encoded form, invoked in process against DynamoDB Local and moto; the served route read
// from the request log.
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { openAwsStores } from "#harness/aws-stores.ts";
import { API_ROLES, API_ROUTES, type ApiRole, type ApiRouteAccess } from "#runtime/api-roles.ts";
import { lambdaEnvironment } from "../support/lambda-environment.ts";
import { type GatewayMatching, httpApiEvent, lambdaContext } from "../support/lambda-events.ts";
import { pathForms, routeNamed, writingBody } from "../support/path-forms.ts";

type ApiHandler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyStructuredResultV2>;

const endpoints = { dynamoEndpoint: inject("dynamoEndpoint"), motoEndpoint: inject("motoEndpoint") };
let aws: Awaited<ReturnType<typeof openAwsStores>>;
let api: ApiHandler;
/** The request log's lines (`METHOD path status ms`), the function logging at INFO. */
const requestLog: string[] = [];
const saved = { ...process.env };

beforeAll(async () => {
  aws = await openAwsStores(endpoints);
  Object.assign(process.env, lambdaEnvironment(aws, endpoints, "INFO"), {
    POWERTOOLS_METRICS_DISABLED: "true",
  });
  const write = process.stdout.write.bind(process.stdout);
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = String(chunk);
    const message = /"message":"((?:GET|POST|PUT|HEAD|DELETE|PATCH) [^"]+ \d+ \d+ms)"/.exec(text)?.[1];
    if (message !== undefined) requestLog.push(message);
    if (text.startsWith("{")) return true;
    return write(chunk, ...(rest as []));
  });
  vi.resetModules();
  api = (await import("../../lambdas/api/handler.ts")).handler as unknown as ApiHandler;
  const appended = await invoke(
    httpApiEvent("POST", "/v1/subjects/ana/events", {
      body: JSON.stringify({ events: [{ eventId: "n-1", kind: "note", text: "Likes tea." }] }),
      headers: { "content-type": "application/json" },
    }),
  );
  expect(appended.statusCode).toBe(200);
});
afterAll(() => {
  vi.restoreAllMocks();
  process.env = saved;
});

/** One invocation: its answer, and the route the router served (null when no handler ran). */
async function invoke(event: APIGatewayProxyEventV2) {
  const logged = requestLog.length;
  const result = await api(event, lambdaContext("memgate-api"));
  const line = requestLog.length > logged ? requestLog.at(-1) : undefined;
  const [, method = "", path = ""] = /^(\S+) (\S+) /.exec(line ?? "") ?? [];
  const body = JSON.parse(result.body ?? "null") as { error?: { field?: string } } | null;
  return {
    statusCode: result.statusCode,
    field: body?.error?.field,
    served: line === undefined ? null : routeNamed(method, path),
    servedPath: path,
  };
}

const CALLERS: Record<string, readonly ApiRole[]> = {
  agent: ["agent"],
  reviewer: ["reviewer"],
  admin: ["admin"],
  "every role": API_ROLES,
};
const ARTIFACT = "summary:ana:000001:x";
const routeOfKey = (routeKey: string) => API_ROUTES.find((r) => `${r.method} ${r.path}` === routeKey) ?? null;
const headers = { "content-type": "application/json" };

describe("the api function serves the route API Gateway matched, never another", () => {
  it("every route × every role × every encoded form, both ways of matching", async () => {
    const reached = new Map<string, Set<ApiRouteAccess>>();
    let invocations = 0;
    for (const route of API_ROUTES)
      for (const { form, path } of pathForms(route.path, { subject: "ana", artifactId: ARTIFACT }))
        for (const matching of ["as-sent", "decoded"] as GatewayMatching[]) {
          const event = httpApiEvent(route.method, path, { body: writingBody(route), headers, matching });
          const matched = routeOfKey(event.routeKey);
          const answer = await invoke(event);
          invocations++;
          const what = `${route.method} ${path} (${form}, matched ${matching}: ${event.routeKey})`;
          if (matched === null) {
            // No route matched: nothing of the function's routes runs.
            expect([answer.statusCode, answer.field, answer.served], what).toEqual([404, "path", null]);
            continue;
          }
          expect(answer.served, what).toBe(matched);
          // API Gateway's authorizer let a caller through only with one of the route's roles.
          for (const [caller, roles] of Object.entries(CALLERS))
            if (matched.roles.some((role) => roles.includes(role)))
              reached.set(caller, (reached.get(caller) ?? new Set()).add(answer.served as ApiRouteAccess));
        }
    expect(invocations).toBeGreaterThan(API_ROUTES.length * 2 * 5);
    for (const [caller, routes] of reached)
      for (const route of routes)
        expect(
          route.roles.some((role) => CALLERS[caller]?.includes(role)),
          `${caller} reached ${route.path}`,
        ).toBe(true);
  });

  it("routes on routeKey and the parameters, never on rawPath or another method", async () => {
    const parameters = (route: ApiRouteAccess) =>
      Object.fromEntries(
        [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => [
          name as string,
          name === "subject" ? "ana" : ARTIFACT,
        ]),
      );
    for (const matched of API_ROUTES)
      for (const other of API_ROUTES) {
        if (other === matched) continue;
        const [otherPath = ""] = pathForms(other.path, { subject: "ana", artifactId: ARTIFACT }).map(
          (f) => f.path,
        );
        const overrides = {
          routeKey: `${matched.method} ${matched.path}`,
          rawPath: otherPath,
          pathParameters: parameters(matched),
        };
        const what = `${overrides.routeKey} with rawPath ${other.method} ${otherPath}`;
        const answer = await invoke(httpApiEvent(matched.method, otherPath, { headers, overrides }));
        expect(answer.served, what).toBe(matched);
        if (other.method !== matched.method) {
          const crossed = await invoke(httpApiEvent(other.method, otherPath, { headers, overrides }));
          expect([crossed.statusCode, crossed.served], `${what}, method ${other.method}`).toEqual([
            404,
            null,
          ]);
        }
      }
    // A subject holding `/` and another route's name is that subject, on the route matched.
    const clock = await invoke(
      httpApiEvent("GET", "/v1/subjects/nobody%2Frecall/clock", {
        overrides: {
          routeKey: "GET /v1/subjects/{subject}/clock",
          rawPath: "/v1/subjects/nobody/recall",
          pathParameters: { subject: "nobody/recall" },
        },
      }),
    );
    expect(clock).toMatchObject({
      statusCode: 404,
      field: "subject",
      servedPath: "/v1/subjects/nobody%2Frecall/clock",
    });
    // A parameter decoded to `%73` is that text, decoded no further.
    const literal = await invoke(
      httpApiEvent("GET", "/v1/subjects/%2573/clock", { overrides: { pathParameters: { subject: "%73" } } }),
    );
    expect(literal.servedPath).toBe("/v1/subjects/%2573/clock");
  });

  it("refuses a subject %FF through an encoded route, however API Gateway hands it on, and writes nothing", async () => {
    const before = await aws.store.listSubjects();
    const body = writingBody(API_ROUTES[0] as ApiRouteAccess);
    for (const segment of ["%FF", "%E0%A4%A", "%C0%AF"]) {
      const path = `/v1/%73ubjects/${segment}/events`;
      // Matched on the path as sent: no route.
      expect(await invoke(httpApiEvent("POST", path, { body, headers })), path).toMatchObject({
        statusCode: 404,
        served: null,
      });
      // Matched on the path decoded, the undecodable run handed on as it stands: the subject is refused.
      const decoded = httpApiEvent("POST", path, { body, headers, matching: "decoded" });
      expect(decoded.routeKey).toBe("POST /v1/subjects/{subject}/events");
      expect(await invoke(decoded), path).toMatchObject({ statusCode: 400, field: "subject" });
    }
    expect(await aws.store.listSubjects()).toEqual(before);
    expect(before).not.toContain("%FF");
  });
});
