import { hash, timingSafeEqual } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import { API_ROLES, API_ROUTES, type ApiRole, type ApiRouteAccess } from "#runtime/api-roles.ts";
import { HttpProblemError } from "./problems.ts";
import { requestPath } from "./router.ts";

/** A bearer token of `memgate serve` and the roles it holds (shared/runtime/api-roles.ts). */
export interface RoleToken {
  token: string;
  roles: readonly ApiRole[];
}

/**
 * The tokens `memgate serve` was started with: `--token` (or MEMGATE_TOKEN) holds every role, as
 * it could always call every route; each `--role-token ROLE=TOKEN` (or MEMGATE_ROLE_TOKENS,
 * comma-separated) one role, and a token named for several roles holds them all.
 */
export function roleTokens(adminToken: string | undefined, byRole: readonly string[]): RoleToken[] {
  const tokens = new Map<string, Set<ApiRole>>();
  const hold = (token: string, roles: readonly ApiRole[]) => {
    checkToken(token, "--role-token");
    const held = tokens.get(token) ?? new Set<ApiRole>();
    for (const role of roles) held.add(role);
    tokens.set(token, held);
  };
  for (const entry of byRole) {
    const [role, token] = splitOnce(entry);
    if (!API_ROLES.includes(role as ApiRole) || token === undefined)
      throw new RoleTokenError(
        `--role-token "${entry.slice(0, 40)}" must be ROLE=TOKEN with ROLE one of ${API_ROLES.join(", ")}`,
      );
    hold(token, [role as ApiRole]);
  }
  if (adminToken !== undefined) {
    checkToken(adminToken, "--token");
    tokens.set(adminToken, new Set(API_ROLES));
  }
  return [...tokens].map(([token, roles]) => ({ token, roles: API_ROLES.filter((r) => roles.has(r)) }));
}

/** A token the command line cannot accept: a usage error naming the flag. */
export class RoleTokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RoleTokenError";
  }
}

function splitOnce(entry: string): [string, string | undefined] {
  const at = entry.indexOf("=");
  return at < 0 ? [entry, undefined] : [entry.slice(0, at), entry.slice(at + 1)];
}

function checkToken(token: string, flag: string): void {
  if (token.length < 8)
    throw new RoleTokenError(`${flag} must be at least 8 characters (or leave it out on loopback)`);
  // RFC 6750's token characters: anything else could never be sent as Authorization: Bearer.
  if (!/^[A-Za-z0-9._~+/-]+=*$/.test(token))
    throw new RoleTokenError(`${flag} may hold only letters, digits and - . _ ~ + / (then = padding)`);
}

/** Each route of API_ROUTES as a pattern over the request's (percent-encoded) path. */
const ROUTE_PATTERNS = API_ROUTES.map((route) => ({
  route,
  pattern: new RegExp(`^${route.path.replace(/\{[^}]+\}/g, "[^/]+")}$`),
}));

/** The route a request calls; null for a path the API does not serve (the router answers 404). */
export function routeCalled(method: string, path: string): ApiRouteAccess | null {
  const asGet = method === "HEAD" ? "GET" : method;
  return (
    ROUTE_PATTERNS.find(({ route, pattern }) => route.method === asGet && pattern.test(path))?.route ?? null
  );
}

const digest = (text: string) => hash("sha256", text, "buffer");

/**
 * `Authorization: Bearer <token>` against every token (a constant-time comparison of digests, so
 * neither a token's content nor its length leaks): a missing, malformed or unknown token is the
 * contract's 401; a known token without a role the route allows is 403 naming the roles it needs.
 */
export function rolesRequired(tokens: readonly RoleToken[]): MiddlewareHandler {
  const known = tokens.map((entry) => ({
    ...entry,
    digest: digest(entry.token),
    everyRole: API_ROLES.every((role) => entry.roles.includes(role)),
  }));
  return async (c, next) => {
    // The scheme in any case (RFC 9110 §11.1), then the token and nothing else.
    const sent = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(c.req.header("Authorization") ?? "")?.[1];
    const presented = sent === undefined ? null : digest(sent);
    let holder: (typeof known)[number] | undefined;
    for (const entry of known)
      if (presented !== null && timingSafeEqual(entry.digest, presented)) holder = entry;
    if (holder === undefined) return unauthorized(c);
    // A token holding every role opens every route: no route to look up.
    const route = holder.everyRole ? null : routeCalled(c.req.method, requestPath(c));
    if (route !== null && !route.roles.some((role) => holder.roles.includes(role)))
      return c.json(
        new HttpProblemError(
          403,
          "forbidden",
          `${route.method} ${route.path} needs a token with the role ${route.roles.join(" or ")}; this token holds ${holder.roles.join(", ")}`,
          "Authorization",
        ).body(),
        403,
      );
    await next();
  };
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
