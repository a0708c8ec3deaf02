import type { MemoryEvent, Trust, TrustPolicy } from "./schemas.ts";
import { TRUST_LEVELS } from "./schemas.ts";

/**
 * The validity rule of CONTRACT §2, in one place: the selector (a pass over a whole log) and the
 * append planner (a few events loaded on demand) both call `standingOf`, so they cannot disagree.
 */

export const SELECTOR_VERSIONS = ["v1", "v2", "v3"] as const;
export type SelectorVersion = (typeof SELECTOR_VERSIONS)[number];
/** The selector new artifacts are built with; v2 and v1 stay selectable for forward recovery. */
export const SELECTOR_VERSION: SelectorVersion = "v3";

/** A stored selector name; absent (a record from before v2) is "v1". */
export function selectorNamed(stored: string | null | undefined): SelectorVersion {
  return stored === "v3" ? "v3" : stored === "v2" ? "v2" : "v1";
}

export type InvalidReason =
  | "after-high-water"
  | "revoked"
  | "superseded"
  | "untrusted"
  | "blocked-source"
  | "control-event";

/**
 * Where an event stands. `admissible`: it counts as a superseder (selector v2: not revoked, trusted,
 * not blocked). `valid`: admissible and not superseded; a valid revocation revokes, a valid content
 * event is an input. `reason` says why an event is not valid (null when it is).
 */
export interface Standing {
  admissible: boolean;
  valid: boolean;
  reason: InvalidReason | null;
}

/** An event naming this one in `revokes` or `supersedes`, with its own standing. */
export interface ActorStanding {
  effect: "revoked" | "superseded";
  standing: Standing;
}

const trustRank = (trust: Trust): number => TRUST_LEVELS.indexOf(trust);

/**
 * Each blocked-source list's answer by source. A log's events share few sources, while a policy
 * may hold 256 patterns of 128 characters and a selection asks about each event more than once:
 * remembered, every source is compared with the patterns once (a policy at its size limit over
 * 10,000 events took seconds of comparisons on every selection). Keyed by the list itself, which
 * policies are never changed in place; at most MAX_REMEMBERED_SOURCES answers per list.
 */
const blockedAnswers = new WeakMap<readonly string[], Map<string, boolean>>();
const MAX_REMEMBERED_SOURCES = 4096;

function isBlockedSource(source: string | undefined, policy: TrustPolicy): boolean {
  const patterns = policy.blockedSources;
  if (source === undefined || patterns.length === 0) return false;
  let answers = blockedAnswers.get(patterns);
  if (answers === undefined) {
    answers = new Map();
    blockedAnswers.set(patterns, answers);
  }
  let blocked = answers.get(source);
  if (blocked === undefined) {
    blocked = patterns.some((pattern) =>
      pattern.endsWith("*") ? source.startsWith(pattern.slice(0, -1)) : source === pattern,
    );
    if (answers.size >= MAX_REMEMBERED_SOURCES) answers.clear();
    answers.set(source, blocked);
  }
  return blocked;
}

/**
 * An event's standing from its own trust and the standings of the events acting on it (which
 * always have higher sequences, so a pass from the highest sequence down settles every event).
 * v2 and v3: a valid revocation revokes; an admissible superseder supersedes, even when it is itself
 * superseded (A ← B ← C leaves only C valid), and revoking it revives what it superseded.
 * v1: both the revocation and the superseder must be valid (A ← B ← C revives A).
 */
export function standingOf(
  event: Pick<MemoryEvent, "trust" | "source"> & { sequence: number },
  highWater: number,
  policy: TrustPolicy,
  actors: Iterable<ActorStanding>,
  version: SelectorVersion,
): Standing {
  if (event.sequence > highWater) return { admissible: false, valid: false, reason: "after-high-water" };
  if (trustRank(event.trust) < trustRank(policy.minTrust))
    return { admissible: false, valid: false, reason: "untrusted" };
  if (isBlockedSource(event.source, policy))
    return { admissible: false, valid: false, reason: "blocked-source" };
  let superseded = false;
  for (const actor of actors) {
    if (actor.effect === "revoked") {
      if (actor.standing.valid) return { admissible: false, valid: false, reason: "revoked" };
    } else if (version === "v1" ? actor.standing.valid : actor.standing.admissible) superseded = true;
  }
  return superseded
    ? { admissible: true, valid: false, reason: "superseded" }
    : { admissible: true, valid: true, reason: null };
}

/** Whether two standings differ in what any reader of the log can observe. */
export function sameStanding(a: Standing, b: Standing): boolean {
  return a.valid === b.valid && a.admissible === b.admissible;
}
