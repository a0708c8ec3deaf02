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
  /** "1" prints the stack of an unexpected error. */
  MEMGATE_DEBUG: z.string().optional(),
});

const parsed = Environment.safeParse(process.env);
if (!parsed.success) {
  const problem = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ");
  throw new Error(`memgate: bad environment setting (${problem})`);
}

export const env = parsed.data;
