import { z } from "zod";
import type { RecallOptions } from "./recall.ts";

/** Far above any summary's budget, far below where token counting or JSON numbers misbehave. */
export const MAX_RECALL_BUDGET = 100_000_000;

/**
 * CONTRACT §1 "Sizes": a query is a question as an agent writes it; its cost grows with its length
 * (reading it into terms) and with the terms searched, at most MAX_SEARCH_TERMS (the most
 * informative: a longer question is cut, never refused). This bound keeps one recall's search
 * within a bounded amount of work.
 */
export const MAX_QUERY_CHARACTERS = 1000;

/**
 * Recall's options as the command line and the HTTP query string give them (text): one schema,
 * so `memgate recall` and `GET …/recall` accept and refuse exactly the same values.
 */
export const RecallQuery = z
  .object({
    scope: z
      .string()
      .min(1, { error: "must name a scope (or be left out for all)" })
      .max(128, { error: "is at most 128 characters" })
      .optional(),
    budget: z
      .string()
      .regex(/^\d{1,9}$/, { error: `must be a whole number of tokens from 0 to ${MAX_RECALL_BUDGET}` })
      .transform(Number)
      .refine((n) => n <= MAX_RECALL_BUDGET, {
        error: `must be a whole number of tokens from 0 to ${MAX_RECALL_BUDGET}`,
      })
      .optional(),
    query: z
      .string()
      .max(MAX_QUERY_CHARACTERS, { error: `is at most ${MAX_QUERY_CHARACTERS} characters` })
      .optional(),
    cursor: z.string().max(200, { error: "is not a cursor memgate issued" }).optional(),
    format: z.enum(["json", "text", "text-v1"], { error: 'must be "json", "text" or "text-v1"' }).optional(),
  })
  .strict();

export function parseRecallOptions(raw: Record<string, unknown>) {
  const defined = Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== undefined));
  return RecallQuery.safeParse(defined) as z.ZodSafeParseResult<RecallOptions>;
}
