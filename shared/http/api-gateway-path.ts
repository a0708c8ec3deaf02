import { API_ROUTES } from "#runtime/api-roles.ts";
import { REVIEW_PAGE_PATHS } from "#runtime/settings.ts";
import { noRoute } from "./access.ts";

/** What of a payload 2.0 event the request is rebuilt from. */
interface RoutedEvent {
  routeKey: string;
  rawPath: string;
  pathParameters?: Record<string, string | undefined> | undefined;
  requestContext: { http: { method: string } };
}

/** The routes the tenant stack declares (`METHOD /path`, as API Gateway writes a route key). */
const DECLARED_ROUTES = new Set<string>([
  ...API_ROUTES.map((route) => `${route.method} ${route.path}`),
  ...Object.values(REVIEW_PAGE_PATHS).map((path) => `GET ${path}`),
]);

/**
 * The request the api function serves: the route API Gateway matched and authorized
 * (`routeKey`, e.g. `GET /v1/subjects/{subject}/recall`, whose roles its authorizer checked), with
 * the path parameters it decoded, each encoded again, so the router decodes each exactly once and
 * routes to that route and no other. `rawPath` is never routed on: API Gateway hands it decoded (a
 * subject's `%2F` arrives as `/`, and a path it matched to no route would be routed on whatever it
 * holds). A parameter's `%XX` run that decodes to no UTF-8 text is passed on as it stands, so the
 * API refuses it as `memgate serve` refuses it (400), never storing the subject `%FF`.
 *
 * Null when the event names no declared route (`$default`, an event made by hand), when its
 * method is not the route's, or when a parameter is missing or empty: `noRouteAnswer` answers it,
 * and nothing is read or written.
 */
export function gatewayRoutedEvent<Event extends RoutedEvent>(event: Event): Event | null {
  if (!DECLARED_ROUTES.has(event.routeKey)) return null;
  const [method, template] = event.routeKey.split(" ") as [string, string];
  if (event.requestContext.http.method !== method) return null;
  const parameters = event.pathParameters ?? {};
  let complete = true;
  const rawPath = template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = parameters[name];
    if (value === undefined || value === "") complete = false;
    return encodedAsSent(value ?? "");
  });
  return complete ? { ...event, rawPath } : null;
}

/** The contract's 404 for an event `gatewayRoutedEvent` refuses (API Gateway's result shape). */
export function noRouteAnswer(event: RoutedEvent) {
  return {
    statusCode: 404,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(noRoute(event.requestContext.http.method, event.rawPath).body()),
  };
}

/**
 * A decoded parameter encoded again, except any `%XX` run that decodes to no UTF-8 text: that is
 * kept as it stands (API Gateway passed an undecodable sequence through), for the API to refuse.
 */
function encodedAsSent(value: string): string {
  let encoded = "";
  let from = 0;
  for (const run of value.matchAll(/(?:%[0-9A-Fa-f]{2})+/g)) {
    if (decodes(run[0])) continue;
    encoded += `${encodeURIComponent(value.slice(from, run.index))}${run[0]}`;
    from = run.index + run[0].length;
  }
  return encoded + encodeURIComponent(value.slice(from));
}

function decodes(run: string): boolean {
  try {
    decodeURIComponent(run);
    return true;
  } catch {
    return false;
  }
}
