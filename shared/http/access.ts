import { hash, timingSafeEqual } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import { API_ROLES, API_ROUTES, type ApiRole, type ApiRouteAccess } from "#runtime/api-roles.ts";
import { REVIEW_PAGE_PATHS } from "#runtime/settings.ts";
import { type CanonicalPath, requestCanonicalPath } from "./canonical-path.ts";
import { HttpProblemError } from "./problems.ts";
import type { RoleToken } from "./role-tokens.ts";

/** Each route of API_ROUTES as a pattern over a canonical path (a parameter is one segment). */
const ROUTE_PATTERNS = API_ROUTES.map((route) => ({
  route,
  pattern: new RegExp(`^${route.path.replace(/\{[^}]+\}/g, "[^/]+")}$`),
}));

/**
 * The route a request calls, read from its canonical path (`canonical-path.ts`); null for a path
 * the API does not serve.
 */
export function routeCalled(method: string, path: string): ApiRouteAccess | null {
  const asGet = method === "HEAD" ? "GET" : method;
  return (
    ROUTE_PATTERNS.find(({ route, pattern }) => route.method === asGet && pattern.test(path))?.route ?? null
  );
}

/** The answer to a path no route serves (the router's own 404 says the same). */
export function noRoute(method: string, path: string): HttpProblemError {
  return new HttpProblemError(
    404,
    "not-found",
    `path: no route ${method} ${path.slice(0, 300)}; see GET /v1/openapi.json`,
    "path",
  );
}

/**
 * Paths that hold no memory and need no token: the health check and the review page's static
 * files (the page asks for the token and sends it with every API call it makes).
 */
const OPEN_PATHS = new Set<string>(["/healthz", ...Object.values(REVIEW_PAGE_PATHS)]);

const digest = (text: string) => hash("sha256", text, "buffer");

/**
 * Who may call what (CONTRACT §6 "Authentication", "Paths"), before anything else reads the
 * request, on its canonical path: first the token (when the API has tokens: `Authorization:
 * Bearer <token>` against every token, a constant-time comparison of digests, so neither a token's
 * content nor its length leaks; missing, malformed or unknown is 401); then the path, which must
 * decode (400) and name a route (404: a path no route serves never reaches the router's
 * handlers, whoever asks); then the route's roles (403 naming the roles it needs). Without tokens
 * every caller holds every role, and the path is checked all the same.
 */
export function accessChecked(tokens: readonly RoleToken[]): MiddlewareHandler {
  const known = tokens.map((entry) => ({ ...entry, digest: digest(entry.token) }));
  return async (c, next) => {
    const path = requestCanonicalPath(c.req.raw);
    if (path.ok && OPEN_PATHS.has(path.path)) return next();
    let roles: readonly ApiRole[] = API_ROLES;
    if (known.length > 0) {
      // The scheme in any case (RFC 9110 §11.1), then the token and nothing else.
      const sent = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(c.req.header("Authorization") ?? "")?.[1];
      const presented = sent === undefined ? null : digest(sent);
      let holder: (typeof known)[number] | undefined;
      for (const entry of known)
        if (presented !== null && timingSafeEqual(entry.digest, presented)) holder = entry;
      if (holder === undefined) return unauthorized(c);
      roles = holder.roles;
    }
    if (!path.ok) throw undecodable(path);
    const route = routeCalled(c.req.method, path.path);
    if (route === null) throw noRoute(c.req.method, path.path);
    if (!route.roles.some((role) => roles.includes(role)))
      return c.json(
        new HttpProblemError(
          403,
          "forbidden",
          `${route.method} ${route.path} needs a token with the role ${route.roles.join(" or ")}; this token holds ${roles.join(", ")}`,
          "Authorization",
        ).body(),
        403,
      );
    await next();
  };
}

/**
 * A path with a segment that does not decode: 400 naming the path parameter that segment stands
 * for (a route's other segments matching), else the path.
 */
function undecodable(path: Extract<CanonicalPath, { ok: false }>): HttpProblemError {
  const at = path.segments.indexOf(null);
  const segment = path.sent.split("/")[at] ?? "";
  const field = parameterAt(path.segments, at) ?? "path";
  return new HttpProblemError(
    400,
    "invalid-input",
    `${field}: "${segment.slice(0, 200)}" in the path ${path.sent.slice(0, 300)} is not percent-encoded UTF-8 (a %XX that decodes to no character, or a % without two hex digits); percent-encode each segment's UTF-8 bytes once`,
    field,
  );
}

/** The name of the parameter at segment `at` of a route whose literal segments all match, if any. */
function parameterAt(segments: readonly (string | null)[], at: number): string | undefined {
  for (const route of API_ROUTES) {
    const template = route.path.split("/");
    if (template.length !== segments.length) continue;
    const name = /^\{(\w+)\}$/.exec(template[at] ?? "")?.[1];
    if (name !== undefined && template.every((part, i) => part.startsWith("{") || segments[i] === part))
      return name;
  }
  return undefined;
}

function unauthorized(c: Context) {
  c.header("WWW-Authenticate", 'Bearer realm="memgate"');
  return c.json(
    new HttpProblemError(
      401,
      "unauthorized",
      "Authorization: send the token memgate serve was started with, as Authorization: Bearer <token>",
      "Authorization",
    ).body(),
    401,
  );
}
