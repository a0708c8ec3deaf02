import { EventLogError } from "#domain/selector.ts";
import { InputError } from "#io/event-file.ts";
import {
  AlreadyWrittenError,
  AppendRejectedError,
  EventConflictError,
  NotFoundError,
  PublishRefusedError,
  StoreContentionError,
} from "#ports/errors.ts";
import { GenerationFailedError } from "#ports/model.ts";

/** The error body of CONTRACT §6: `{"error":{"code","message","field"}}`. */
export interface ProblemBody {
  error: { code: string; message: string; field?: string };
}

/** An HTTP answer other than success, with the field it concerns and when to retry. */
export class HttpProblemError extends Error {
  constructor(
    readonly status: 400 | 401 | 404 | 409 | 413 | 415 | 429 | 500 | 503,
    readonly code: string,
    message: string,
    readonly field?: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = "HttpProblemError";
  }

  body(): ProblemBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.field === undefined ? {} : { field: this.field }),
      },
    };
  }
}

export const invalid = (field: string, message: string) =>
  new HttpProblemError(400, "invalid-input", `${field}: ${message}`, field);

/** Engine errors that mean "slow down" (429) and "not reachable now" (503): both safe to retry. */
const THROTTLING = new Set([
  "ThrottlingException",
  "ProvisionedThroughputExceededException",
  "RequestLimitExceeded",
  "TooManyRequestsException",
  "SlowDown",
  "RequestThrottled",
]);
const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EAI_AGAIN",
  "EPIPE",
  "SQLITE_BUSY",
  "SQLITE_LOCKED",
]);

/**
 * Every error a use case raises as the answer of §6: bad input 400 (never a 5xx), unknown 404,
 * write-once conflict or refused publish 409, an engine throttling 429 and one unreachable or
 * contended 503 (both with Retry-After); anything else 500, and the caller logs it.
 */
export function problemOf(error: unknown): HttpProblemError {
  if (error instanceof HttpProblemError) return error;
  if (error instanceof NotFoundError) return new HttpProblemError(404, "not-found", error.message, "path");
  if (error instanceof EventConflictError || error instanceof AlreadyWrittenError)
    return new HttpProblemError(409, "write-once-conflict", error.message, "events");
  if (error instanceof PublishRefusedError)
    return new HttpProblemError(409, `publish-refused:${error.reason}`, error.message, "artifactId");
  if (error instanceof AppendRejectedError || error instanceof EventLogError)
    return new HttpProblemError(400, "invalid-input", error.message, "events");
  if (error instanceof InputError)
    return new HttpProblemError(400, "invalid-input", error.message, error.field ?? "request");
  if (error instanceof StoreContentionError)
    return new HttpProblemError(503, "contention", error.message, undefined, 1);
  if (error instanceof GenerationFailedError)
    return new HttpProblemError(503, "generation-failed", error.message, undefined, 5);
  const name = (error as { name?: unknown })?.name;
  const code = (error as { code?: unknown })?.code;
  const status = (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
  if (typeof name === "string" && THROTTLING.has(name))
    return new HttpProblemError(
      429,
      "throttled",
      `the store is throttling requests (${name}); retry`,
      undefined,
      1,
    );
  if (
    (typeof code === "string" && UNREACHABLE_CODES.has(code)) ||
    name === "TimeoutError" ||
    (typeof status === "number" && status >= 500)
  )
    return new HttpProblemError(
      503,
      "unavailable",
      `the store did not answer (${String(code ?? name)}); retry`,
      undefined,
      2,
    );
  return new HttpProblemError(500, "internal", "unexpected error; it was logged");
}

/** A zod issue path as a field name (`events[3].assertions[0].value`), after `lead` when it starts with a key. */
export function fieldPath(path: readonly PropertyKey[], lead = ""): string {
  return path
    .map((part, index) =>
      typeof part === "number" ? `[${part}]` : `${index === 0 ? lead : "."}${String(part)}`,
    )
    .join("");
}
