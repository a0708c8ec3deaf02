import { AppendProblem, EventConflictProblem } from "#domain/append-plan.ts";

/**
 * What the storage ports raise instead of engine errors: each names what happened and what to do.
 * Adapters translate engine errors (ConditionalCheckFailed, SQLITE_CONSTRAINT, 412) into these.
 */

/**
 * Bad input from a user's file, flag or request: nothing was written. Says where and what to fix;
 * `field` names the field or argument at fault when one is (the HTTP API's 400 and the MCP tool
 * error name it). Raised by the use cases as well as by the entry points, so it lives with the
 * other errors every layer shares, not in the file parsers.
 */
export class InputError extends Error {
  readonly field: string | undefined;
  constructor(message: string, options?: { cause?: unknown; field?: string }) {
    super(message, options);
    this.name = "InputError";
    this.field = options?.field;
  }
}

/** An event id re-sent with different content. Nothing of the batch was written. */
export class EventConflictError extends Error {
  constructor(
    readonly subject: string,
    readonly eventIds: string[],
    options?: { cause?: unknown },
  ) {
    super(
      `event id${eventIds.length > 1 ? "s" : ""} ${eventIds.join(", ")} already stored for ${subject} with different content; events are write-once: send a new id (and supersede the old one) instead`,
      options,
    );
    this.name = "EventConflictError";
  }
}

/** A batch that cannot be appended as sent (a link to an unknown or later event). Nothing written. */
export class AppendRejectedError extends Error {
  constructor(
    readonly problems: string[],
    options?: { cause?: unknown },
  ) {
    super(`append refused, nothing written: ${problems.join("; ")}`, options);
    this.name = "AppendRejectedError";
  }
}

export type PublishRefusal =
  | "alias-moved"
  | "epoch-moved"
  | "coverage-decrease"
  | "artifact-not-publishable"
  | "parent-moved"
  | "beyond-log"
  | "publish-mode-changed";

/** The switch transaction did not happen; the snapshot is dead: take a new one and rebuild. */
export class PublishRefusedError extends Error {
  constructor(
    readonly reason: PublishRefusal,
    detail: string,
    options?: { cause?: unknown; what?: string },
  ) {
    super(
      `${options?.what ?? "publish"} refused (${reason}): ${detail}; take a new snapshot and rebuild`,
      options,
    );
    this.name = "PublishRefusedError";
  }
}

/**
 * Why a switch to an artifact covering less than where the clock's epoch began is refused: an
 * event after its coverage (a revocation, a supersession, a contradiction, a later reading) or a
 * policy change moved the epoch, so the artifact judged its inputs without it (CONTRACT §2).
 */
export function epochAfterCoverage(
  epochMovedAt: number,
  request: { inputEpoch: number; newCoversThrough: number },
): string {
  return `epoch ${request.inputEpoch} began at ${epochMovedAt}, after the artifact's coverage ${request.newCoversThrough}: what moved it there changed what the events it covers mean`;
}

/**
 * A snapshot that cannot be built on (beyond the log, below the alias's coverage, below where the
 * clock's epoch began): refused before anything is generated. Exit 4 like a refused publish: a fresh snapshot is the way on.
 */
export class SnapshotRefusedError extends PublishRefusedError {
  constructor(reason: PublishRefusal, detail: string, options?: { cause?: unknown }) {
    super(reason, detail, { ...options, what: "snapshot" });
    this.name = "SnapshotRefusedError";
  }
}

/** A write-once key that already holds something: artifacts and manifests are never overwritten. */
export class AlreadyWrittenError extends Error {
  constructor(
    readonly key: string,
    options?: { cause?: unknown },
  ) {
    super(`${key} is already written and is never overwritten; generate under a new artifact id`, options);
    this.name = "AlreadyWrittenError";
  }
}

/** Another writer touched the same items at the same moment; the operation changed nothing and may be retried. */
export class StoreContentionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(`${message}; nothing was written, retry`, options);
    this.name = "StoreContentionError";
  }
}

/** A record the caller named does not exist. */
export class NotFoundError extends Error {
  /** What names the missing thing (`subject`, `artifactId`), when the message is about one field. */
  readonly field: string | undefined;
  constructor(message: string, options?: { cause?: unknown; field?: string }) {
    super(message, options);
    this.name = "NotFoundError";
    this.field = options?.field;
  }
}

/** The append planner's problems as the port's errors. */
export function translatePlanError(subject: string, error: unknown): unknown {
  if (error instanceof EventConflictProblem)
    return new EventConflictError(subject, error.eventIds, { cause: error });
  if (error instanceof AppendProblem) return new AppendRejectedError(error.problems, { cause: error });
  return error;
}
