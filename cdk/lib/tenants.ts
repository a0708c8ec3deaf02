import { readFileSync } from "node:fs";
import { z } from "zod";
import { firstIssue } from "#runtime/issues.ts";
import { DEFAULT_MODEL, isDeployableJudge, isDeployableModel } from "#runtime/settings.ts";

/**
 * One tenant's deployment settings (a stack each). Validated before anything is synthesised: a
 * bad tenants file fails synth with one line naming the tenant and the field.
 */
export const Tenant = z
  .object({
    id: z.string({ error: "is required: a tenant id" }).regex(/^[a-z][a-z0-9-]{1,30}$/, {
      error: "must be 2–31 lowercase letters, digits or dashes, starting with a letter",
    }),
    /** A JWT authorizer instead of IAM when set. */
    jwt: z
      .object({
        issuer: z.url({ error: "must be the issuer URL (https://…)" }),
        audience: z.array(z.string().min(1)).min(1, { error: "must name at least one audience" }),
      })
      .strict()
      .optional(),
    model: z
      .string()
      .refine(isDeployableModel, {
        error: "must be deterministic-v1, bedrock:MODEL_ID, openai:MODEL or segmented: before either",
      })
      .default(DEFAULT_MODEL),
    /** An OpenAI-compatible endpoint for openai: models (OPENAI_BASE_URL). */
    openAiBaseUrl: z.url({ error: "must be the endpoint's URL (https://…/v1)" }).optional(),
    /** The Secrets Manager secret holding that endpoint's key: the functions read it, the stack never holds it. */
    openAiKeySecretArn: z
      .string()
      .regex(/^arn:aws[\w-]*:secretsmanager:[\w-]+:\d{12}:secret:[\w/+=.@-]+$/, {
        error: "must be a Secrets Manager secret ARN",
      })
      .optional(),
    /** The model's context window and answer size in tokens (prompts and segments are sized to fit). */
    contextTokens: z.number().int().min(1024).optional(),
    maxOutputTokens: z.number().int().min(256).optional(),
    /** A model judge (bedrock:MODEL_ID or openai:MODEL) for the texts the gate cannot decide. */
    judge: z
      .string()
      .refine(isDeployableJudge, { error: "must be bedrock:MODEL_ID or openai:MODEL" })
      .optional(),
    /**
     * The summary's token budget (cl100k_base) for the tenant's consolidations (MEMGATE_BUDGET_TOKENS):
     * the default under the store's setting (`memgate settings --store aws --budget`).
     */
    budgetTokens: z
      .number({ error: "must be a whole number of tokens" })
      .int({ error: "must be a whole number of tokens" })
      .min(1, { error: "must be at least 1" })
      .max(100_000_000, { error: "must be at most 100000000" })
      .optional(),
    /** Attempts per generation when the gate refuses a language model's answer (gate-guided repair). */
    repairAttempts: z.number().int().min(1).max(10).optional(),
    publishMode: z.enum(["live", "shadow"], { error: 'must be "live" or "shadow"' }).default("live"),
    alarmEmail: z.email({ error: "must be an e-mail address" }).optional(),
    alarmTopicArn: z
      .string()
      .regex(/^arn:aws[\w-]*:sns:[\w-]+:\d{12}:[\w-]+$/, { error: "must be an SNS topic ARN" })
      .optional(),
    /** Upper bound of concurrent worker invocations (the SQS event source's maximum concurrency). */
    workerConcurrency: z
      .number({ error: "must be a whole number" })
      .int({ error: "must be a whole number" })
      .min(2, { error: "must be at least 2 (SQS event sources need 2)" })
      .max(1000)
      .optional(),
    /** Seconds one generation may take (the worker's timeout adds a margin; the queue's visibility is 6×). */
    generationTimeoutSeconds: z.number().int().min(5).max(600).default(120),
  })
  .strict();
export type Tenant = z.infer<typeof Tenant>;

export const Tenants = z
  .array(Tenant, { error: "must be a JSON array of tenants" })
  .min(1, { error: "must name at least one tenant" })
  .superRefine((tenants, ctx) => {
    const seen = new Set<string>();
    for (const [index, tenant] of tenants.entries()) {
      if (seen.has(tenant.id))
        ctx.addIssue({ code: "custom", path: [index, "id"], message: `"${tenant.id}" is listed twice` });
      seen.add(tenant.id);
    }
  });

export class TenantsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TenantsError";
  }
}

/** Parses tenants from JSON text; the error names the source, the tenant index and the field. */
export function parseTenants(text: string, source: string): Tenant[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new TenantsError(`${source}: not valid JSON`);
  }
  const parsed = Tenants.safeParse(raw);
  if (parsed.success) return parsed.data;
  const { field, message } = firstIssue(parsed.error, "", { lead: "." });
  throw new TenantsError(`${source}: tenants${field}: ${message}`);
}

/** Tenants from context: `-c tenants='[…]'` (JSON) or `-c tenantsFile=path` (default cdk/tenants.json). */
export function tenantsFromContext(
  context: { tenants?: unknown; tenantsFile?: unknown },
  defaultFile: string,
): Tenant[] {
  if (typeof context.tenants === "string") return parseTenants(context.tenants, "-c tenants");
  if (context.tenants !== undefined) return parseTenants(JSON.stringify(context.tenants), "context tenants");
  const file = typeof context.tenantsFile === "string" ? context.tenantsFile : defaultFile;
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    throw new TenantsError(
      `${file}: cannot read the tenants file (pass -c tenantsFile=PATH or -c tenants='[…]')`,
    );
  }
  return parseTenants(text, file);
}
