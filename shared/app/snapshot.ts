import { buildGateContext, type GateContext } from "#domain/gate/index.ts";
import type { SequencedEvent, Snapshot } from "#domain/schemas.ts";
import { SELECTOR_VERSION, type SelectorVersion } from "#domain/selector.ts";
import { InputError, NotFoundError, SnapshotRefusedError } from "#ports/errors.ts";
import type { ReadSnapshot } from "#ports/event-log.ts";
import type { Deps } from "./deps.ts";
import { readSelection } from "./selection.ts";

/**
 * The snapshot use case: the queue message (clock and alias from one consistent read) and the
 * inputs a snapshot selects from the log under the subject's trust policy, with the gate's index
 * over them. Invariant: a snapshot never covers past the log nor below the alias's coverage, and
 * the same log, high-water mark, policy and selector always select the same inputs.
 */

/** The selected inputs of a snapshot and the gate's index over them. */
export interface SnapshotInputs {
  events: SequencedEvent[];
  context: GateContext;
}

/** The selection plus the gate's index over it (must-preserve set, conflicts, held tokens). */
export async function readInputs(
  deps: Pick<Deps, "events">,
  subject: string,
  highWater: number,
  version: SelectorVersion = SELECTOR_VERSION,
): Promise<SnapshotInputs> {
  const { events, selection } = await readSelection(deps, subject, highWater, version);
  return { events, context: buildGateContext(selection, events.length) };
}

/**
 * The queue message: clock and alias from one consistent read, optionally capped at `through`.
 * A cap below where the epoch began is refused (CONTRACT §2): what moved the epoch after it (a
 * revocation, a supersession, a contradiction, a later reading, a policy change) would be missing
 * from the judgement of the events it covers, while the snapshot carries the epoch that counts it.
 */
export async function takeSnapshot(
  deps: Pick<Deps, "events">,
  subject: string,
  through?: number,
): Promise<Snapshot> {
  const snapshot = await deps.events.snapshot(subject);
  if (through === undefined || through === snapshot.highWater) return snapshot;
  if (through > snapshot.highWater)
    throw new InputError(
      `--through ${through} is beyond the log of ${subject}, which ends at ${snapshot.highWater}; a snapshot covers only appended events`,
    );
  if (snapshot.expectedAlias && through < snapshot.expectedAlias.coversThrough)
    throw new SnapshotRefusedError(
      "coverage-decrease",
      `--through ${through} is below the alias's coverage ${snapshot.expectedAlias.coversThrough}; coverage never goes back`,
    );
  refuseBelowEpoch(snapshot, through, `--through ${through}`);
  return { ...snapshot, highWater: through };
}

/**
 * Refuses a snapshot covering through `highWater` of a clock whose epoch began after it
 * (`epochMovedAt`, CONTRACT §2): the events it covers would be judged without what moved the epoch.
 */
export function refuseBelowEpoch(clock: ReadSnapshot, highWater: number, what: string): void {
  if (highWater < clock.epochMovedAt)
    throw new SnapshotRefusedError(
      "epoch-moved",
      `${what} is below ${clock.epochMovedAt}, where epoch ${clock.inputEpoch} of ${clock.subject} began: the write there (a revocation, a supersession, a contradiction, a later reading or a policy change) changed what the events through ${highWater} mean, so a snapshot of this epoch covers through ${clock.epochMovedAt} or later`,
    );
}

/**
 * The clock and alias of a subject that has events. A subject with none is unknown
 * (NotFoundError naming `subject`: HTTP's 404, the MCP tools' error): there is nothing to read,
 * revoke or consolidate, and consolidating it would publish an empty summary that makes it appear.
 */
export async function knownSubjectSnapshot(deps: Pick<Deps, "events">, subject: string): Promise<Snapshot> {
  const snapshot = await deps.events.snapshot(subject);
  if (snapshot.highWater === 0 && snapshot.expectedAlias === null) throw unknownSubjectError(subject);
  return snapshot;
}

/** What every entry point says of a subject with no events (HTTP 404, the MCP tools' error). */
export function unknownSubjectError(subject: string): NotFoundError {
  return new NotFoundError(`subject: no events for "${subject}"`, { field: "subject" });
}
