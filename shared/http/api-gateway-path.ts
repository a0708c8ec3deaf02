/** What of a payload 2.0 event the path is rebuilt from. */
interface RoutedEvent {
  routeKey: string;
  rawPath: string;
  pathParameters?: Record<string, string | undefined> | undefined;
}

/**
 * API Gateway's HTTP API hands the Lambda `rawPath` already percent-decoded, so a subject holding
 * `/`, `?`, `#` or `%` (sent as `%2F`, `%3F`, `%23`, `%25`) would reach the router as more path
 * segments, a query or a fragment, and route differently than under `memgate serve`. The route API
 * Gateway matched (`routeKey`, e.g. `GET /v1/subjects/{subject}/recall`) and its decoded
 * `pathParameters` are exact: the path is rebuilt from them, each parameter encoded again, so the
 * router sees the path the caller sent. An event without a route template (`$default`, a test's
 * hand-made event) is left as it is.
 */
export function pathAsSent<Event extends RoutedEvent>(event: Event): Event {
  const template = /^[A-Z]+ (\/\S*)$/.exec(event.routeKey)?.[1];
  if (template === undefined || !template.includes("{")) return event;
  const parameters = event.pathParameters ?? {};
  let complete = true;
  const rawPath = template.replace(/\{(\w+)\+?\}/g, (_, name: string) => {
    const value = parameters[name];
    if (value === undefined) complete = false;
    return encodeURIComponent(value ?? "");
  });
  return complete ? { ...event, rawPath } : event;
}
