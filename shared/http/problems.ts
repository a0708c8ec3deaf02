import { classifyError, type ErrorKind } from "#runtime/errors.ts";

/** The error body of CONTRACT §6: `{"error":{"code","message","field"}}`. */
export interface ProblemBody {
  error: { code: string; message: string; field?: string };
}

export type ProblemStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422 | 429 | 500 | 503;

/** An HTTP answer other than success, with the field it concerns and when to retry. */
export class HttpProblemError extends Error {
  constructor(
    readonly status: ProblemStatus,
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

/**
 * Statuses of §6 by what went wrong: bad input 400 (never a 5xx), unknown 404, write-once conflict
 * or refused publish 409, an engine throttling 429 and one unreachable or contended 503 (both with
 * Retry-After); anything else 500, and the caller logs it.
 */
const STATUS: Record<ErrorKind, ProblemStatus> = {
  "bad-input": 400,
  "not-found": 404,
  "write-once-conflict": 409,
  "publish-refused": 409,
  "generation-failed": 503,
  contention: 503,
  throttled: 429,
  unavailable: 503,
  unexpected: 500,
};

/** Every error a use case raises as the answer of §6. */
export function problemOf(error: unknown): HttpProblemError {
  if (error instanceof HttpProblemError) return error;
  const { kind, code, message, field, retryAfterSeconds } = classifyError(error);
  return new HttpProblemError(STATUS[kind], code, message, field, retryAfterSeconds);
}
