import { createHash } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { requestPath } from "./canonical-path.ts";
import { HttpProblemError } from "./problems.ts";

/** How many keys are remembered, and for how long (CONTRACT §6 "Retries"). */
export const IDEMPOTENCY_KEYS = 10_000;
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

interface Remembered {
  /** SHA-256 of the request's method, path and body: a key re-used for another request is refused. */
  request: string;
  at: number;
  answer: Promise<{ status: number; headers: [string, string][]; body: ArrayBuffer } | null>;
}

/**
 * `Idempotency-Key` on POST: the first answer to a key is remembered (in this process, the newest
 * IDEMPOTENCY_KEYS keys for IDEMPOTENCY_TTL_MS) and a request with the same key, path and body is
 * answered with it again without running anything, so a client may retry a write whose answer it
 * lost. The same key with another path or body is a 422; a retry arriving while the first is still
 * running waits for its answer. Answers that invite a retry (429 and 5xx) are not remembered.
 */
export function idempotentPosts(now: () => number = Date.now): MiddlewareHandler {
  const remembered = new Map<string, Remembered>();
  return async (c, next) => {
    const key = c.req.header("Idempotency-Key");
    if (c.req.method !== "POST" || key === undefined) return next();
    if (!KEY_PATTERN.test(key))
      throw new HttpProblemError(
        400,
        "invalid-input",
        "Idempotency-Key: send 1 to 255 visible ASCII characters (a UUID, for instance)",
        "Idempotency-Key",
      );
    const body = await c.req.raw.clone().arrayBuffer();
    const request = createHash("sha256")
      .update(`${c.req.method} ${requestPath(c)}\n`)
      .update(new Uint8Array(body))
      .digest("hex");
    for (const [stored, entry] of remembered) {
      if (remembered.size <= IDEMPOTENCY_KEYS && now() - entry.at < IDEMPOTENCY_TTL_MS) break;
      remembered.delete(stored);
    }
    const earlier = remembered.get(key);
    if (earlier !== undefined) {
      if (earlier.request !== request)
        throw new HttpProblemError(
          422,
          "idempotency-key-reused",
          "Idempotency-Key: this key was used for another request (path or body); use a new key for a new request",
          "Idempotency-Key",
        );
      const answer = await earlier.answer;
      if (answer !== null) {
        const headers = new Headers(answer.headers);
        headers.set("Idempotent-Replayed", "true");
        return new Response(answer.body.slice(0), { status: answer.status, headers });
      }
    }
    let settle: (answer: Awaited<Remembered["answer"]>) => void = () => {};
    const entry: Remembered = { request, at: now(), answer: new Promise((resolve) => (settle = resolve)) };
    remembered.set(key, entry);
    try {
      await next();
    } finally {
      const status = c.res.status;
      if (status === 429 || status >= 500) {
        remembered.delete(key);
        settle(null);
      } else {
        const copy = c.res.clone();
        const headers: [string, string][] = [];
        copy.headers.forEach((value, name) => {
          headers.push([name, value]);
        });
        settle({ status, headers, body: await copy.arrayBuffer() });
      }
    }
  };
}
