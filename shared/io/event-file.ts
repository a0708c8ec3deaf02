import { z } from "zod";
import type { SequencedEvent, TrustPolicy } from "#domain/schemas.ts";
import { MemoryEvent, TrustPolicy as TrustPolicySchema } from "#domain/schemas.ts";
import { InputError } from "#ports/errors.ts";
import { describeIssues } from "#runtime/issues.ts";

/**
 * Parses JSON Lines of MemoryEvents. A missing sequence defaults to the line number (1-based), as
 * CONTRACT §1 says for files given to `memgate gate`; `assignSequence: false` leaves it unset (the
 * store assigns it). Every bad line is reported, with its number and field.
 */
export function parseEventLines(
  text: string,
  name: string,
  options: { assignSequence: boolean },
): SequencedEvent[] {
  const events: SequencedEvent[] = [];
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    const lineNumber = index + 1;
    if (line.trim() === "") return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (error) {
      problems.push(
        `${name}:${lineNumber}: not valid JSON (${error instanceof Error ? error.message : String(error)})`,
      );
      return;
    }
    const parsed = MemoryEvent.safeParse(json);
    if (!parsed.success) {
      problems.push(`${name}:${lineNumber}: ${describeIssues(parsed.error)}`);
      return;
    }
    const sequence = parsed.data.sequence ?? (options.assignSequence ? lineNumber : 0);
    events.push({ ...parsed.data, sequence });
  });
  if (problems.length > 0) {
    const more = problems.length > 3 ? ` (and ${problems.length - 3} more bad lines)` : "";
    throw new InputError(`${problems.slice(0, 3).join(" | ")}${more}`);
  }
  return events;
}

const Share = (field: string) =>
  z
    .number({ error: `${field} must be a number from 0 to 1` })
    .min(0, { error: `${field} must be a number from 0 to 1` })
    .max(1, { error: `${field} must be a number from 0 to 1` })
    .optional();

/** A policy file: the trust policy, and the gate's text-support thresholds (CONTRACT §4b). */
const PolicyFile = TrustPolicySchema.extend({
  textSupport: Share("textSupport"),
  summarySupport: Share("summarySupport"),
  restatementSupport: Share("restatementSupport"),
});
export type PolicyFile = TrustPolicy & {
  textSupport?: number;
  summarySupport?: number;
  restatementSupport?: number;
};

/** Parses a policy file's text. */
export function parsePolicy(text: string, name: string): PolicyFile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new InputError(
      `${name}: not valid JSON (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  const parsed = PolicyFile.safeParse(json);
  if (!parsed.success) throw new InputError(`${name}: ${describeIssues(parsed.error)}`);
  const { textSupport, summarySupport, restatementSupport, ...policy } = parsed.data;
  return {
    ...policy,
    ...(textSupport === undefined ? {} : { textSupport }),
    ...(summarySupport === undefined ? {} : { summarySupport }),
    ...(restatementSupport === undefined ? {} : { restatementSupport }),
  };
}
