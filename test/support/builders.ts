import type { GateContext, GateOptions, GateReport } from "#domain/gate/index.ts";
import { buildGateContext, gateCandidate } from "#domain/gate/index.ts";
import type { ConsolidationOutput, MemoryEvent, SequencedEvent, TrustPolicy } from "#domain/schemas.ts";
import { DEFAULT_TRUST_POLICY, MemoryEvent as MemoryEventSchema } from "#domain/schemas.ts";
import { checkEventLog, selectInputs } from "#domain/selector.ts";

/** An event as a test writes it: the contract's JSON, sequence optional. */
export type EventInput = Record<string, unknown> & { eventId: string; kind: string };

/** Parses events through the public schema and numbers them 1..n in order unless they carry a sequence. */
export function log(...inputs: EventInput[]): SequencedEvent[] {
  return inputs.map((input, index) => {
    const event: MemoryEvent = MemoryEventSchema.parse(input);
    return { ...event, sequence: event.sequence ?? index + 1 };
  });
}

export function contextOf(events: SequencedEvent[], policy: TrustPolicy = DEFAULT_TRUST_POLICY): GateContext {
  const checked = checkEventLog(events);
  const highWater = checked.reduce((max, event) => Math.max(max, event.sequence), 0);
  return buildGateContext(selectInputs(checked, highWater, policy), checked.length);
}

export function gate(
  events: SequencedEvent[],
  candidate: unknown,
  options: { policy?: TrustPolicy } & GateOptions = {},
): GateReport {
  const { policy, ...gateOptions } = options;
  return gateCandidate(contextOf(events, policy), candidate, gateOptions);
}

export function codes(report: GateReport): string[] {
  return [...new Set(report.reasons.map((reason) => reason.code))].sort();
}

/** A candidate with the four required fields, overridable. */
export function candidate(parts: Partial<ConsolidationOutput> = {}): ConsolidationOutput {
  return { claims: [], pending: [], unresolvedConflicts: [], coldRefs: [], summary: "", ...parts };
}

export function fact(
  eventId: string,
  key: string,
  value: unknown,
  extra: Record<string, unknown> = {},
): EventInput {
  const { polarity = "affirmed", scope, kind = "fact", text = `${key} statement`, ...rest } = extra;
  return {
    eventId,
    kind: kind as string,
    text,
    assertions: [{ key, value, polarity, ...(scope === undefined ? {} : { scope }) }],
    ...rest,
  };
}

export function settled(
  key: string,
  value: unknown,
  derivedFrom: string[],
  extra: Record<string, unknown> = {},
) {
  return {
    key,
    scope: "global",
    value,
    polarity: "affirmed",
    status: "settled",
    derivedFrom,
    ...extra,
  } as ConsolidationOutput["claims"][number];
}

/**
 * A reading of a backup bucket's size in TB, as devops-ana's log writes one (`ana-22`, `ana-51`):
 * what a `latest: ["backup.bucket_size"]` rule covers (selector v3).
 */
export function bucketReading(
  eventId: string,
  quantity: string,
  occurredAt: string,
  key = "backup.bucket_size",
) {
  return {
    eventId,
    kind: "fact",
    text: `pay-backups-prod is at ${quantity} TB`,
    occurredAt,
    assertions: [{ key, value: { quantity, unit: "TB" }, polarity: "affirmed" }],
  };
}

/**
 * The small subject the Lambda, audit and least-privilege tests append: a whole event, a fact with a
 * quantity assertion, a low-value note.
 */
export const SAMPLE = {
  constraint: { eventId: "c-1", kind: "constraint", text: "Backups must be encrypted." },
  budget: {
    eventId: "b-1",
    kind: "fact",
    text: "The budget is 12,500 USD.",
    assertions: [{ key: "budget", value: { quantity: "12500", unit: "USD" }, polarity: "affirmed" }],
  },
  note: { eventId: "n-1", kind: "note", text: "Likes short answers." },
} as const satisfies Record<string, EventInput>;
