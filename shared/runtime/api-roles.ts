/**
 * Who may call which route of the HTTP API (CONTRACT §6), by role. An agent remembers, recalls,
 * revokes and asks for consolidations; a reviewer reviews shadow candidates and approves or
 * rejects them; an admin changes the tenant's settings and a subject's trust policy. Reading
 * artifacts and clocks is open to agents and reviewers (the review page reads them too); the API's
 * own description and health to every role. A caller holding several roles holds their routes.
 *
 * The tenant stack declares one API Gateway route per entry (the JWT authorizer's scopes, the IAM
 * managed policy of each role): a route missing here is not reachable there. Pure data, no import.
 */
export const API_ROLES = ["agent", "reviewer", "admin"] as const;
export type ApiRole = (typeof API_ROLES)[number];

export interface ApiRouteAccess {
  method: "GET" | "POST" | "PUT";
  /** As OpenAPI and API Gateway write a route: `{name}` for a path parameter. */
  path: string;
  roles: readonly ApiRole[];
}

const READERS: readonly ApiRole[] = ["agent", "reviewer"];

export const API_ROUTES: readonly ApiRouteAccess[] = [
  { method: "POST", path: "/v1/subjects/{subject}/events", roles: ["agent"] },
  { method: "POST", path: "/v1/subjects/{subject}/revocations", roles: ["agent"] },
  { method: "GET", path: "/v1/subjects/{subject}/recall", roles: ["agent"] },
  { method: "POST", path: "/v1/subjects/{subject}/consolidations", roles: ["agent"] },
  { method: "GET", path: "/v1/subjects/{subject}/review", roles: ["reviewer"] },
  { method: "POST", path: "/v1/artifacts/{artifactId}/approve", roles: ["reviewer"] },
  { method: "POST", path: "/v1/artifacts/{artifactId}/reject", roles: ["reviewer"] },
  { method: "GET", path: "/v1/settings", roles: ["admin"] },
  { method: "PUT", path: "/v1/settings", roles: ["admin"] },
  { method: "GET", path: "/v1/subjects/{subject}/policy", roles: ["admin"] },
  { method: "PUT", path: "/v1/subjects/{subject}/policy", roles: ["admin"] },
  { method: "GET", path: "/v1/subjects", roles: READERS },
  { method: "GET", path: "/v1/subjects/{subject}/clock", roles: READERS },
  { method: "GET", path: "/v1/subjects/{subject}/artifacts", roles: READERS },
  { method: "GET", path: "/v1/artifacts/{artifactId}", roles: READERS },
  { method: "GET", path: "/v1/artifacts/{artifactId}/lineage", roles: READERS },
  { method: "GET", path: "/v1/artifacts/{artifactId}/claims", roles: READERS },
  { method: "GET", path: "/v1/openapi.json", roles: API_ROLES },
  { method: "GET", path: "/healthz", roles: API_ROLES },
];

/** The routes one role may call. */
export function routesOf(role: ApiRole): ApiRouteAccess[] {
  return API_ROUTES.filter((route) => route.roles.includes(role));
}
