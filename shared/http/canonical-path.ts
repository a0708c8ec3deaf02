import type { Context } from "hono";

/**
 * The one path a request is decided by (CONTRACT §6 "Paths"). The route, the role check, the
 * subject check, idempotency and the request log all read it, so no two of them can disagree on
 * what was asked: the role check once matched the path as sent while the router decoded it, and
 * `/v1/%73ettings` reached the settings with an agent's token.
 *
 * The path as a URL parser reads it (dot segments resolved, `%2E` among them) is split at each `/`
 * first, then every segment is percent-decoded once, strictly: a `%XX` run that is no UTF-8 text
 * or a `%` without two hex digits leaves the path undecodable (400), never kept as written. An
 * encoded `/` (`%2F`) stays inside its segment (a subject may hold `/`); `%2573` decodes to the
 * text `%73` and is never decoded again. The canonical form writes each decoded segment with
 * `encodeURIComponent` (upper-case hex), so every spelling of one path is one string.
 */
export type CanonicalPath =
  | {
      ok: true;
      /** Each segment decoded, then encoded with `encodeURIComponent`: what the router matches. */
      path: string;
      /** The decoded segments (the first is the empty text before the leading `/`). */
      segments: readonly string[];
    }
  | {
      ok: false;
      /** The path as sent, encoded as it came. */
      sent: string;
      /** The segments, each decoded or null where it does not decode. */
      segments: readonly (string | null)[];
    };

/** Characters `encodeURIComponent` leaves as they are, and `/`: such a path is canonical already. */
const CANONICAL_ALREADY = /^[A-Za-z0-9\-_.!~*'()/]*$/;

/** The canonical form of a path as sent (see the type). */
export function canonicalPath(sent: string): CanonicalPath {
  const parts = sent.split("/");
  if (CANONICAL_ALREADY.test(sent)) return { ok: true, path: sent, segments: parts };
  const segments: (string | null)[] = [];
  let decodes = true;
  for (const part of parts) {
    let decoded: string | null;
    try {
      decoded = part.includes("%") ? decodeURIComponent(part) : part;
    } catch {
      decoded = null;
      decodes = false;
    }
    segments.push(decoded);
  }
  if (!decodes) return { ok: false, sent, segments };
  const decoded = segments as string[];
  return { ok: true, path: decoded.map(encodeURIComponent).join("/"), segments: decoded };
}

/** The canonical path of a request, worked out once per request (the router and the checks each ask). */
export function requestCanonicalPath(request: Request): CanonicalPath {
  let path = canonicalPaths.get(request);
  if (path === undefined) {
    path = canonicalPath(new URL(request.url).pathname);
    canonicalPaths.set(request, path);
  }
  return path;
}
const canonicalPaths = new WeakMap<Request, CanonicalPath>();

/**
 * What the router matches a path that does not decode against: no canonical path equals it (a
 * canonical path never holds a bare `%`), so it reaches no route; the access check refuses the
 * request with a 400 before any route would run.
 */
const UNDECODABLE = "/%";

/**
 * The router's `getPath`: it routes on the canonical path (hono's own reading decodes leniently,
 * keeping what does not decode as written). Path parameters are then decoded once by the router.
 */
export function routedPath(request: Request): string {
  const path = requestCanonicalPath(request);
  return path.ok ? path.path : UNDECODABLE;
}

/**
 * The path a request is logged and remembered under: its canonical path, or the path as sent when
 * that does not decode (the request is refused before anything else reads it).
 */
export function requestPath(c: Context): string {
  const path = requestCanonicalPath(c.req.raw);
  return path.ok ? path.path : path.sent;
}
