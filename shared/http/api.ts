import { isIP } from "node:net";
import { OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import type { Deps } from "#app/deps.ts";
import { API_ROLES } from "#runtime/api-roles.ts";
import { MAX_REQUEST_BYTES } from "#runtime/settings.ts";
import { accessChecked, noRoute } from "./access.ts";
import { artifactRoutes } from "./artifact-routes.ts";
import { requestPath, routedPath } from "./canonical-path.ts";
import { API_COMPONENTS } from "./components.ts";
import { eventRoutes } from "./event-routes.ts";
import { idempotentPosts } from "./idempotency.ts";
import { HttpProblemError, problemOf } from "./problems.ts";
import { recallRoutes } from "./recall-routes.ts";
import { reviewPageRoutes } from "./review-page-routes.ts";
import { reviewRoutes } from "./review-routes.ts";
import type { RoleToken } from "./role-tokens.ts";
import { subjectSegmentChecked } from "./router.ts";
import { policyRoutes, settingsRoutes, subjectRoutes } from "./settings-routes.ts";

export interface ApiOptions {
  /** The use cases' dependencies (stores, model, clock, ids), opened once by the caller. */
  deps: Deps;
  /**
   * When set, every route but /healthz needs `Authorization: Bearer <token>` (memgate serve), and
   * the token holds every role.
   */
  token?: string | undefined;
  /**
   * `memgate serve`'s guard against other origins (absent behind API Gateway): a request whose
   * `Host` is not an IP address, `localhost` or one of these names is refused (DNS rebinding), and
   * so is a state-changing request a browser sent from another origin (see `browserGuard`).
   */
  allowedHosts?: readonly string[] | undefined;
  /** More tokens, each holding its roles: a route answers 403 to a token without one it allows. */
  roleTokens?: readonly RoleToken[] | undefined;
  /** One line per request (method, path, status, milliseconds). */
  logRequest?: (line: string) => void;
  /** Called for each 500 with the error (the answer only says it was logged). */
  logUnexpected?: (error: unknown) => void;
  /** Called for each recall answered, with its mode (the RecallServed metric). */
  recallServed?: (mode: "summary" | "raw") => void;
}

const DOCUMENT_INFO = {
  openapi: "3.1.0",
  info: {
    title: "memgate",
    version: "2",
    description: "Agents' long-term memory, consolidated without silently losing meaning (CONTRACT §6).",
  },
};

/**
 * The HTTP API of CONTRACT §6 over the use cases: one router for API Gateway and `memgate serve`,
 * one sub-router per resource. Every answer other than success is the contract's problem body,
 * its status from the one classification of errors every entry point shares.
 */
export function createApi(options: ApiOptions): OpenAPIHono {
  const { deps } = options;
  // Routed on the canonical path, the one the access check, the subject check and idempotency read.
  const app = new OpenAPIHono({ getPath: routedPath });

  app.use("*", async (c, next) => {
    const started = performance.now();
    await next();
    options.logRequest?.(
      `${c.req.method} ${requestPath(c)} ${c.res.status} ${Math.round(performance.now() - started)}ms`,
    );
  });
  // Authentication first: an unknown token is 401; then the path, which must decode (400) and
  // name a route (404); then the route's roles (403). The health check and the review page's
  // static files hold no memory: the page asks for the token and sends it with every API call.
  app.use(
    "*",
    accessChecked([
      ...(options.token === undefined ? [] : [{ token: options.token, roles: API_ROLES }]),
      ...(options.roleTokens ?? []),
    ]),
  );
  // Then the checks against other origins, on what an authenticated caller sent.
  if (options.allowedHosts !== undefined) app.use("*", browserGuard(options.allowedHosts));
  const tooLarge = () => {
    throw new HttpProblemError(
      413,
      "too-large",
      `body: a request holds at most ${MAX_REQUEST_BYTES} bytes (5 MiB); split the batch`,
      "body",
    );
  };
  const streamedLimit = bodyLimit({ maxSize: MAX_REQUEST_BYTES, onError: tooLarge });
  // The limit from the declared length when there is one, as bodyLimit decides it, but without
  // touching the body first: on `memgate serve` that would build a WHATWG Request for every
  // request (GETs included) and read the body through web streams instead of straight from the
  // socket. A GET or HEAD carries no body; a body without a length is counted as it streams.
  app.use("*", (c, next) => {
    if (c.req.method === "GET" || c.req.method === "HEAD") return next();
    const length = c.req.header("content-length");
    if (length !== undefined && c.req.header("transfer-encoding") === undefined)
      return Number.parseInt(length, 10) > MAX_REQUEST_BYTES ? tooLarge() : next();
    return streamedLimit(c, next);
  });
  app.use("*", idempotentPosts());
  app.onError((error, c) => {
    if (error instanceof HTTPException) return error.getResponse();
    const problem = problemOf(error);
    if (problem.status === 500) options.logUnexpected?.(error);
    if (problem.retryAfterSeconds !== undefined) c.header("Retry-After", String(problem.retryAfterSeconds));
    return c.json(problem.body(), problem.status);
  });
  app.notFound((c) => c.json(noRoute(c.req.method, requestPath(c)).body(), 404));

  app.use("/v1/subjects/*", subjectSegmentChecked);
  app
    .route("/", eventRoutes(deps))
    .route("/", recallRoutes(deps, options.recallServed))
    .route("/", artifactRoutes(deps))
    .route("/", reviewRoutes(deps))
    .route("/", subjectRoutes(deps))
    .route("/", reviewPageRoutes())
    .route("/", policyRoutes(deps))
    .route("/", settingsRoutes(deps));

  app.get("/healthz", (c) => c.json({ ok: true }, 200));
  let document: unknown;
  app.get("/v1/openapi.json", (c) => {
    // Paths from the routes' definitions; schemas from the zod schemas the handlers parse with.
    if (document === undefined) {
      const generated = app.getOpenAPI31Document(DOCUMENT_INFO);
      document = { ...generated, components: { ...generated.components, schemas: API_COMPONENTS } };
    }
    return c.json(document, 200);
  });
  return app;
}

const UNSAFE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * What keeps a web page the user visits from using `memgate serve` (CONTRACT §6 "Other origins").
 * DNS rebinding: a `Host` that is not an IP address, `localhost` or a configured name is refused
 * (a rebound name points at the server but keeps its own name). Cross-origin writes: a browser
 * sends `Origin` with every POST, PUT and DELETE (even `no-cors` ones, which skip the preflight);
 * one whose host is not the request's `Host` is refused, as is `Sec-Fetch-Site: cross-site`.
 * Programs that send no `Origin` (curl, the client, agents) are unaffected.
 */
function browserGuard(allowedHosts: readonly string[]): MiddlewareHandler {
  const named = new Set(allowedHosts.map((host) => host.toLowerCase()));
  const forbidden = (field: string, message: string) =>
    new HttpProblemError(403, "forbidden", `${field}: ${message}`, field);
  return async (c, next) => {
    const host = (c.req.header("Host") ?? "").toLowerCase();
    const hostname = host.replace(/:\d+$/, "").replace(/^\[(.*)\]$/, "$1");
    if (!(isIP(hostname) !== 0 || hostname === "localhost" || named.has(hostname)))
      throw forbidden(
        "Host",
        `"${host.slice(0, 100)}" is not an address memgate serve answers to; start it with --allowed-host NAME to answer to a name`,
      );
    if (UNSAFE_METHODS.has(c.req.method)) {
      const origin = c.req.header("Origin");
      let originHost: string | null = null;
      if (origin !== undefined) {
        try {
          originHost = new URL(origin).host.toLowerCase();
        } catch {
          originHost = null;
        }
      }
      if (origin !== undefined && originHost !== host)
        throw forbidden("Origin", `a write from another origin (${origin.slice(0, 100)}) is refused`);
      if (c.req.header("Sec-Fetch-Site") === "cross-site")
        throw forbidden("Origin", "a write from another site is refused");
    }
    await next();
  };
}
