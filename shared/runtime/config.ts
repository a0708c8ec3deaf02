import { z } from "zod";

/**
 * Settings from the environment, parsed once at load: a bad value fails at start with the variable
 * named, and `process.env` is read nowhere else.
 */
const Environment = z.object({
  MEMGATE_HOME: z.string().min(1).optional(),
  MEMGATE_FAILPOINTS: z.string().optional(),
  MEMGATE_TABLE: z.string().min(1).optional(),
  MEMGATE_BUCKET: z.string().min(1).optional(),
  MEMGATE_QUEUE_URL: z.string().min(1).optional(),
  MEMGATE_GENERATION_TIMEOUT_MS: z.coerce.number().int().positive().optional(),
  /** The bearer token `memgate serve` requires when --token is not given. */
  MEMGATE_TOKEN: z.string().min(1).optional(),
  /** A model's context window in tokens: prompts and segments are sized to fit it. */
  MEMGATE_CONTEXT_TOKENS: z.coerce.number().int().min(1024).optional(),
  /** The most tokens a model may write in one answer. */
  MEMGATE_MAX_OUTPUT_TOKENS: z.coerce.number().int().min(256).optional(),
  /** Attempts per generation, the first included, when the gate refuses a language model's answer. */
  MEMGATE_REPAIR_ATTEMPTS: z.coerce.number().int().min(1).max(10).optional(),
  /** A language model (openai:MODEL, bedrock:MODEL_ID, replay:DIR) asked about texts the gate cannot decide. */
  MEMGATE_JUDGE: z.string().min(1).optional(),
  /** OpenAI-compatible endpoint and key, read as the official SDK reads them. */
  OPENAI_BASE_URL: z.string().url().optional(),
  OPENAI_API_KEY: z.string().min(1).optional(),
  /** "1" prints the stack of an unexpected error. */
  MEMGATE_DEBUG: z.string().optional(),
});

// An empty variable is an unset one (`OPENAI_API_KEY= memgate …`), as shells and CI write it.
const parsed = Environment.safeParse(
  Object.fromEntries(Object.entries(process.env).filter(([, value]) => value !== "")),
);
if (!parsed.success) {
  const problem = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ");
  throw new Error(`memgate: bad environment setting (${problem})`);
}

export const env = parsed.data;
