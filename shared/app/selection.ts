import type { SequencedEvent } from "#domain/schemas.ts";
import {
  checkEventLogPaced,
  SELECTOR_VERSION,
  type Selection,
  type SelectorVersion,
  selectInputsPaced,
} from "#domain/selector.ts";
import { neverPause } from "#ports/time.ts";
import type { Deps } from "./deps.ts";

/**
 * Which events are valid inputs, read from the log: what invalidation and the switch's checks
 * need, without the gate's index (snapshot.ts builds that), so the functions that only follow
 * the log (the outbox, the sweep) load no part of the gate.
 */

/** The events through `highWater` and which of them are valid inputs, under the subject's policy. */
export async function readSelection(
  deps: Pick<Deps, "events" | "pause">,
  subject: string,
  highWater: number,
  version: SelectorVersion = SELECTOR_VERSION,
): Promise<{ events: SequencedEvent[]; selection: Selection }> {
  const [events, policy] = await Promise.all([
    deps.events.eventsThrough(subject, highWater),
    deps.events.trustPolicy(subject),
  ]);
  const pause = deps.pause ?? neverPause;
  const selection = await selectInputsPaced(
    await checkEventLogPaced(events, pause),
    highWater,
    policy,
    pause,
    version,
  );
  return { events, selection };
}
