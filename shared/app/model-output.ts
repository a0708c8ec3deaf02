import { z } from "zod";
import { parseStrictJson } from "#domain/strict-json.ts";

/**
 * What a language model is asked to return, as zod schemas whose JSON Schema (zod 4's
 * toJSONSchema) is sent with every call: OpenAI's strict `response_format` and Bedrock's forced
 * tool both enforce it while the model writes. Strict structured output needs every property
 * required and no extra ones, so the contract's optional fields (a claim's `text`, a quantity's
 * `unit`) are nullable here and `decodeModelAnswer` drops the nulls: the gate then reads the
 * answer as the contract's ConsolidationOutput (§3), nothing else changed.
 */

const EventIds = z.array(z.string()).describe("ids of valid inputs listed in the prompt, never others");

const ModelValue = z.union([
  z.strictObject({ text: z.string() }),
  z.strictObject({ bool: z.boolean() }),
  z.strictObject({
    quantity: z.string().describe('a decimal string, such as "12500.00"'),
    unit: z.string().nullable(),
  }),
  z.strictObject({ date: z.string().describe("ISO 8601, as the source wrote it") }),
  z.strictObject({ entity: z.string() }),
  z.strictObject({ scopes: z.array(z.string()) }),
]);

const ModelClaim = z.strictObject({
  key: z.string(),
  scope: z.string(),
  value: ModelValue,
  polarity: z.enum(["affirmed", "negated"]),
  status: z.enum(["settled", "contested", "earlier"]),
  asOf: z.string().nullable().describe("only on an earlier reading: the date it was read, as listed"),
  text: z.string().nullable(),
  derivedFrom: EventIds,
});

const ModelPending = z.strictObject({ text: z.string(), derivedFrom: EventIds });

/** The whole ConsolidationOutput (one prompt with every valid input). */
export const ModelConsolidationOutput = z.strictObject({
  claims: z.array(ModelClaim),
  pending: z.array(ModelPending),
  unresolvedConflicts: z.array(z.strictObject({ key: z.string(), scope: z.string(), members: EventIds })),
  coldRefs: EventIds,
  summary: z.string(),
});

/** One segment's answer: a restatement of each of its text-bearing events, and its open tasks. */
export const SegmentAnswer = z.strictObject({
  claims: z.array(
    z.strictObject({
      key: z.string().describe("a short key naming what the event is about"),
      text: z.string().describe("the event restated in its own language and words"),
      derivedFrom: EventIds,
    }),
  ),
  pending: z.array(ModelPending),
});
export type SegmentAnswer = z.infer<typeof SegmentAnswer>;

/** The final call of a segmented generation: the summary prose over the merged claims. */
export const SummaryAnswer = z.strictObject({ summary: z.string() });

/** The judge's verdicts, one per text it was shown. */
export const JudgeAnswer = z.strictObject({
  verdicts: z.array(
    z.strictObject({
      id: z.string(),
      verdict: z.enum(["supported", "unsupported", "unclear"]),
      reason: z.string(),
    }),
  ),
});
export type JudgeAnswer = z.infer<typeof JudgeAnswer>;

/** The JSON Schema a model is held to, without the dialect line (tools and response formats take a bare schema). */
export function modelSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...jsonSchema } = z.toJSONSchema(schema) as Record<string, unknown>;
  return jsonSchema;
}

/**
 * The answer as the contract reads it: strict output's null for an absent optional field is
 * dropped. Text that is not strict JSON (truncated, duplicate keys, trailing text) is returned
 * unchanged, so the gate reports it as `schema-invalid` exactly as the model wrote it.
 */
export function decodeModelAnswer(text: string): string {
  const parsed = parseStrictJson(text);
  if (!parsed.ok) return text;
  return JSON.stringify(dropNulls(parsed.value));
}

function dropNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNulls);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, field]) => field !== null)
      .map(([key, field]) => [key, dropNulls(field)]),
  );
}

export type ModelAnswerOf<T> = { ok: true; value: T } | { ok: false; problem: string };

/** Parses an answer against a model schema; the problem names the field when it does not fit. */
export function parseModelAnswer<T>(schema: z.ZodType<T>, text: string): ModelAnswerOf<T> {
  const parsed = parseStrictJson(text);
  if (!parsed.ok) return parsed;
  const result = schema.safeParse(parsed.value);
  if (result.success) return { ok: true, value: result.data };
  const issue = result.error.issues[0];
  return { ok: false, problem: `${issue?.path.join(".") || "answer"}: ${issue?.message ?? "invalid"}` };
}
