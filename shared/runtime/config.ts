import { z } from "zod";
import { describeIssues } from "./issues.ts";
import { ENV } from "./settings.ts";

/**
 * The settings of the processes a user starts (the command line, `memgate serve`, `memgate mcp`),
 * from the environment, parsed once at load: a bad value fails at start with the variable named,
 * and `process.env` is read nowhere else. (The Lambdas parse theirs in their composition root.)
 */
const Environment = z.object({
  [ENV.home]: z.string().min(1).optional(),
  [ENV.failpoints]: z.string().optional(),
  [ENV.table]: z.string().min(1).optional(),
  [ENV.bucket]: z.string().min(1).optional(),
  [ENV.queueUrl]: z.string().min(1).optional(),
  [ENV.generationTimeoutMs]: z.coerce.number().int().positive().optional(),
  /** The bearer token `memgate serve` requires when --token is not given. */
  [ENV.token]: z.string().min(1).optional(),
  /** More tokens of `memgate serve`, each with its role: ROLE=TOKEN, comma-separated (--role-token). */
  [ENV.roleTokens]: z.string().min(1).optional(),
  /** A model's context window in tokens: prompts and segments are sized to fit it. */
  [ENV.contextTokens]: z.coerce.number().int().min(1024).optional(),
  /** The most tokens a model may write in one answer. */
  [ENV.maxOutputTokens]: z.coerce.number().int().min(256).optional(),
  /** Attempts per generation, the first included, when the gate refuses a language model's answer. */
  [ENV.repairAttempts]: z.coerce.number().int().min(1).max(10).optional(),
  /** A language model (openai:MODEL, bedrock:MODEL_ID, replay:DIR) asked about texts the gate cannot decide. */
  [ENV.judge]: z.string().min(1).optional(),
  /** OpenAI-compatible endpoint and key, read as the official SDK reads them. */
  [ENV.openAiBaseUrl]: z.string().url().optional(),
  [ENV.openAiApiKey]: z.string().min(1).optional(),
  /** "1" prints the stack of an unexpected error. */
  [ENV.debug]: z.string().optional(),
});

// An empty variable is an unset one (`OPENAI_API_KEY= memgate …`), as shells and CI write it.
const parsed = Environment.safeParse(
  Object.fromEntries(Object.entries(process.env).filter(([, value]) => value !== "")),
);

/**
 * What is wrong with the environment, or null. A module cannot fail its own import cleanly (the
 * process would end with a stack trace), so the command line reports this as one line and exit 2
 * before any command runs; `env` then holds no settings.
 */
export const environmentProblem: string | null = parsed.success
  ? null
  : `bad environment setting: ${describeIssues(parsed.error)}`;

export const env = parsed.success ? parsed.data : Environment.parse({});
