// Every way a route's path can be written that an access check must see through (CONTRACT §6
// "Paths"), and, independently of shared/http, which route a path written so names: each segment
// percent-decoded once, the route template matched on the decoded segments.
import { API_ROUTES, type ApiRouteAccess } from "#runtime/api-roles.ts";

export interface PathForm {
  form: string;
  path: string;
}

/** `%XX` for one character, its hex digits in upper case, or in lower case when `lower`. */
function escaped(character: string, lower = false): string {
  const hex = (character.codePointAt(0) ?? 0).toString(16).padStart(2, "0");
  return `%${lower ? hex.toLowerCase() : hex.toUpperCase()}`;
}

/**
 * A route's path (`/v1/subjects/{subject}/recall`) with its parameters filled in, written as sent
 * in every form the issue names: plain; a literal segment's letter encoded (`/v1/%73ettings`);
 * every letter of every literal segment encoded in mixed-case hex; the letter double-encoded
 * (`%2573`, the text `%73` once decoded: no route); the `/` before the last segment encoded
 * (`/v1%2Fsettings`: one segment, no route); a parameter holding an encoded `/` and another
 * route's name (`ana%2Frecall`, in lower-case hex too); a parameter double-encoded (`%2561na`, the
 * text `%61na`).
 */
export function pathForms(template: string, parameters: Record<string, string>): PathForm[] {
  const parts = template.split("/");
  const last = parts.findLastIndex((part) => part !== "" && !part.startsWith("{"));
  const build = (literal: (part: string, index: number) => string, parameter: (value: string) => string) =>
    parts
      .map((part, index) => {
        const name = /^\{(\w+)\}$/.exec(part)?.[1];
        if (name !== undefined) return parameter(parameters[name] ?? "");
        return part === "" ? part : literal(part, index);
      })
      .join("/");
  const same = (part: string) => part;
  const encoded = encodeURIComponent;
  /** `%25` and the hex of the first character: the text `%XX…` once decoded. */
  const doubled = (text: string) => `%25${escaped(text.charAt(0)).slice(1)}${encoded(text.slice(1))}`;
  const plain = build(same, encoded);
  const forms: PathForm[] = [
    { form: "plain", path: plain },
    {
      form: "a letter encoded",
      path: build((part, i) => (i === last ? `${escaped(part.charAt(0))}${part.slice(1)}` : part), encoded),
    },
    {
      form: "every letter encoded, mixed-case hex",
      path: build(
        (part) => [...part].map((c, k) => (/[a-z]/i.test(c) ? escaped(c, k % 2 === 1) : c)).join(""),
        encoded,
      ),
    },
    { form: "double encoding", path: build((part, i) => (i === last ? doubled(part) : part), encoded) },
  ];
  // The `/` before the last segment encoded (a path of one segment has none but the leading one).
  if (plain.lastIndexOf("/") > 0)
    forms.push({ form: "encoded /", path: plain.replace(/\/([^/]*)$/, "%2F$1") });
  if (!template.includes("{")) return forms;
  return [
    ...forms,
    { form: "a parameter holding an encoded /", path: build(same, (v) => encoded(`${v}/recall`)) },
    {
      form: "a parameter holding an encoded /, lower-case hex",
      path: build(same, (v) => encoded(`${v}/settings`).replace(/%2F/g, "%2f")),
    },
    { form: "a parameter double-encoded", path: build(same, doubled) },
  ];
}

/** The decoded segments of a path as sent, each decoded once; null when one does not decode. */
export function decodedSegments(sent: string): string[] | null {
  try {
    return sent.split("/").map((segment) => decodeURIComponent(segment));
  } catch {
    return null;
  }
}

/** The route a path as sent names: the template whose literal segments equal its decoded ones. */
export function routeNamed(method: string, sent: string): ApiRouteAccess | null {
  const segments = decodedSegments(sent);
  if (segments === null) return null;
  return (
    API_ROUTES.find((route) => {
      const template = route.path.split("/");
      return (
        route.method === method &&
        template.length === segments.length &&
        template.every((part, i) => (part.startsWith("{") ? segments[i] !== "" : segments[i] === part))
      );
    }) ?? null
  );
}

let writes = 0;
/**
 * A body the route would write with, new on each call (a new event, another setting, another
 * policy): a refused request that ran anyway would show in the store.
 */
export function writingBody(route: ApiRouteAccess): string | undefined {
  writes++;
  if (route.path.endsWith("/events"))
    return JSON.stringify({ events: [{ eventId: `w-${writes}`, kind: "note", text: `Note ${writes}.` }] });
  if (route.path.endsWith("/revocations")) return JSON.stringify({ eventIds: ["n-1"], reason: "test" });
  if (route.method === "PUT" && route.path === "/v1/settings")
    return JSON.stringify({ rebuildAfterEvents: 50 + writes });
  if (route.method === "PUT")
    return JSON.stringify({ minTrust: "tool", blockedSources: [`agent:b-${writes}`] });
  return undefined;
}
