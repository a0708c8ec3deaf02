import { EventLogError } from "#domain/selector.ts";
import {
  AlreadyWrittenError,
  AppendRejectedError,
  EventConflictError,
  InputError,
  NotFoundError,
  PublishRefusedError,
  StoreContentionError,
} from "#ports/errors.ts";
import { GenerationFailedError } from "#ports/model.ts";

/**
 * What went wrong, as every entry point needs to know it: the command line's exit code, the HTTP
 * status and the MCP tool error all map from this one classification, so they cannot disagree on
 * what an error is.
 *
 * - `bad-input`: the caller's input (nothing written)
 * - `not-found`: an unknown subject or artifact
 * - `write-once-conflict`: an event id or a write-once key re-sent with other content
 * - `publish-refused`: the compare-and-set refused (a fresh snapshot is the way on)
 * - `generation-failed`: the model did not answer (timeout, error)
 * - `contention`, `throttled`, `unavailable`: the store or an engine; safe to retry
 * - `unexpected`: a defect or an engine error nobody classified; logged
 */
export type ErrorKind =
  | "bad-input"
  | "not-found"
  | "write-once-conflict"
  | "publish-refused"
  | "generation-failed"
  | "contention"
  | "throttled"
  | "unavailable"
  | "unexpected";

export interface ClassifiedError {
  kind: ErrorKind;
  /** The contract's error code (CONTRACT §6), the same for every entry point. */
  code: string;
  /** What the caller is told. */
  message: string;
  /** The field or argument at fault, when the error concerns one. */
  field?: string;
  /** Seconds to wait before trying again, for the errors that are safe to retry. */
  retryAfterSeconds?: number;
}

/** Engine errors that mean "slow down" (by name, as the AWS SDK raises them). */
const THROTTLING = new Set([
  "ThrottlingException",
  "ProvisionedThroughputExceededException",
  "RequestLimitExceeded",
  "TooManyRequestsException",
  "SlowDown",
  "RequestThrottled",
]);
/** Engine errors that mean "not reachable now" (by code, as Node and SQLite raise them). */
const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EAI_AGAIN",
  "EPIPE",
  "SQLITE_BUSY",
  "SQLITE_LOCKED",
]);

/** Classifies anything a use case, a store or an engine may throw. */
export function classifyError(error: unknown): ClassifiedError {
  if (error instanceof InputError)
    return {
      kind: "bad-input",
      code: "invalid-input",
      message: error.message,
      field: error.field ?? "request",
    };
  if (error instanceof AppendRejectedError || error instanceof EventLogError)
    return { kind: "bad-input", code: "invalid-input", message: error.message, field: "events" };
  if (error instanceof NotFoundError)
    return { kind: "not-found", code: "not-found", message: error.message, field: error.field ?? "path" };
  if (error instanceof EventConflictError || error instanceof AlreadyWrittenError)
    return {
      kind: "write-once-conflict",
      code: "write-once-conflict",
      message: error.message,
      field: "events",
    };
  if (error instanceof PublishRefusedError)
    return {
      kind: "publish-refused",
      code: `publish-refused:${error.reason}`,
      message: error.message,
      field: "artifactId",
    };
  if (error instanceof StoreContentionError)
    return { kind: "contention", code: "contention", message: error.message, retryAfterSeconds: 1 };
  if (error instanceof GenerationFailedError)
    return {
      kind: "generation-failed",
      code: "generation-failed",
      message: error.message,
      retryAfterSeconds: 5,
    };
  const name = (error as { name?: unknown })?.name;
  const code = (error as { code?: unknown })?.code;
  const status = (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
  if (typeof name === "string" && THROTTLING.has(name))
    return {
      kind: "throttled",
      code: "throttled",
      message: `the store is throttling requests (${name}); retry`,
      retryAfterSeconds: 1,
    };
  if (
    (typeof code === "string" && UNREACHABLE_CODES.has(code)) ||
    name === "TimeoutError" ||
    (typeof status === "number" && status >= 500)
  )
    return {
      kind: "unavailable",
      code: "unavailable",
      message: `the store did not answer (${String(code ?? name)}); retry`,
      retryAfterSeconds: 2,
    };
  return { kind: "unexpected", code: "internal", message: "unexpected error; it was logged" };
}
