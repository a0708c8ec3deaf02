import { z } from "zod";
import { MemoryEvent, Subject } from "#domain/schemas.ts";
import type { GoldFact } from "#eval/synthetic.ts";
import { InputError } from "#ports/errors.ts";
import { describeIssues, firstIssue } from "#runtime/issues.ts";

const GoldLine = z
  .object({
    subject: Subject,
    key: z.string().min(1).optional(),
    scope: z.string().min(1).optional(),
    value: z.unknown().optional(),
    polarity: z.enum(["affirmed", "negated"]).optional(),
    mention: z.string().min(1).optional(),
    fact: z.string().min(1).optional(),
    words: z
      .array(z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]), {
        error: "words must list the words that must survive (a list inside is alternatives)",
      })
      .min(1)
      .optional(),
    evidence: z.array(z.string()).default([]),
    contested: z.boolean().default(false),
  })
  .refine((fact) => fact.key !== undefined || fact.mention !== undefined || fact.words !== undefined, {
    error: "a gold fact names a key (with its value), a literal mention, or the words that must survive",
  })
  .refine((fact) => fact.words === undefined || fact.evidence.length > 0, {
    error: "a gold fact in words names its evidence events",
    path: ["evidence"],
  });

function lines(text: string): Array<[number, string]> {
  return text
    .split("\n")
    .map((line, index) => [index + 1, line.trim()] as [number, string])
    .filter(([, line]) => line !== "");
}

function parseLine(line: string, name: string, number: number): unknown {
  try {
    return JSON.parse(line);
  } catch {
    throw new InputError(`${name}:${number}: not valid JSON`);
  }
}

/** An evaluation dataset: MemoryEvent JSON Lines with a `subject` field, grouped by subject in order. */
export function parseDataset(text: string, name: string): Map<string, MemoryEvent[]> {
  const dataset = new Map<string, MemoryEvent[]>();
  for (const [number, line] of lines(text)) {
    const raw = parseLine(line, name, number);
    const { subject, ...event } = (raw ?? {}) as { subject?: unknown };
    const parsedSubject = Subject.safeParse(subject);
    if (!parsedSubject.success)
      throw new InputError(
        `${name}:${number}: subject: ${firstIssue(parsedSubject.error, "subject").message}`,
      );
    const parsed = MemoryEvent.safeParse(event);
    if (!parsed.success) throw new InputError(`${name}:${number}: ${describeIssues(parsed.error)}`);
    const { sequence: _sequence, ...clean } = parsed.data;
    dataset.set(parsedSubject.data, [...(dataset.get(parsedSubject.data) ?? []), clean]);
  }
  if (dataset.size === 0) throw new InputError(`${name}: no events`);
  return dataset;
}

/** Gold facts: JSON Lines of {subject, key, scope, value, polarity | mention | fact, words, evidence, contested}. */
export function parseGold(text: string, name: string): GoldFact[] {
  return lines(text).map(([number, line]) => {
    const parsed = GoldLine.safeParse(parseLine(line, name, number));
    if (!parsed.success) throw new InputError(`${name}:${number}: ${describeIssues(parsed.error)}`);
    const { value, ...fact } = parsed.data;
    return { ...fact, ...(value === undefined ? {} : { value }) } as GoldFact;
  });
}
