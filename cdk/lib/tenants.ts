import { readFileSync } from "node:fs";
import { z } from "zod";
import { firstIssue } from "#runtime/issues.ts";
import { DEFAULT_MODEL, isDeployableJudge, isDeployableModel } from "#runtime/settings.ts";
import { LAMBDA_MAX_TIMEOUT_SECONDS, workerTimeoutFormula, workerTimeoutSeconds } from "./worker-sizing.ts";

/**
 * One tenant's deployment settings (a stack each). Validated before anything is synthesised: a
 * bad tenants file fails synth with one line naming the tenant and the field.
 */
export const Tenant = z
  .object({
    id: z.string({ error: "is required: a tenant id" }).regex(/^[a-z][a-z0-9-]{1,30}$/, {
      error: "must be 2–31 lowercase letters, digits or dashes, starting with a letter",
    }),
    /**
     * A JWT authorizer instead of IAM when set. A token's scopes say its roles: `<scopePrefix>agent`,
     * `<scopePrefix>reviewer`, `<scopePrefix>admin` (default prefix `memgate/`, a Cognito resource
     * server's form).
     */
    jwt: z
      .object({
        issuer: z.url({ error: "must be the issuer URL (https://…)" }),
        audience: z.array(z.string().min(1)).min(1, { error: "must name at least one audience" }),
        scopePrefix: z
          .string()
          .regex(/^[\w.:/-]{0,64}$/, { error: "must be up to 64 letters, digits, '.', ':', '/', '_' or '-'" })
          .default("memgate/"),
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
    /**
     * The customer managed KMS key that secret is encrypted with, when it is not the account's
     * `aws/secretsmanager` key: the functions that read the secret may decrypt with it, through
     * Secrets Manager and for that secret only. (A secret's key cannot be read from its ARN.)
     */
    openAiKeySecretKmsKeyArn: z
      .string()
      .regex(/^arn:aws[\w-]*:kms:[\w-]+:\d{12}:key\/[\w-]+$/, { error: "must be a KMS key ARN (…:key/ID)" })
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
    /**
     * Attempts per generation when the gate refuses a language model's answer (gate-guided repair).
     * The default is the runtime's (2); the stack always hands it to the functions, so the worker
     * makes exactly the attempts its timeout was sized for.
     */
    repairAttempts: z.number().int().min(1).max(10).default(2),
    /**
     * The Regions a cross-Region inference profile (`bedrock:us.…`, `eu.…`, `apac.…`, `jp.…`, `au.…`)
     * routes to, when AWS's list has grown past the one the stack knows (cdk/lib/bedrock-access.ts).
     */
    bedrockRegions: z
      .array(z.string().regex(/^[a-z]{2}(-gov)?-[a-z]+-\d$/, { error: "must be Region names (eu-west-1)" }))
      .min(1, { error: "must name at least one Region" })
      .optional(),
    publishMode: z.enum(["live", "shadow"], { error: 'must be "live" or "shadow"' }).default("live"),
    alarmEmail: z.email({ error: "must be an e-mail address" }).optional(),
    alarmTopicArn: z
      .string()
      .regex(/^arn:aws[\w-]*:sns:[\w-]+:\d{12}:[\w-]+$/, { error: "must be an SNS topic ARN" })
      .optional(),
    /**
     * Ship source maps with the functions (and run Node with --enable-source-maps): readable stack
     * traces, at the price of a bundle three times larger and a slower cold start. Off by default.
     */
    sourceMaps: z.boolean().default(false),
    /**
     * Upper bound of concurrent worker invocations (the SQS event source's maximum concurrency):
     * at most this many generations call the tenant's model at once. 5 by default, so a burst of
     * rebuilds queues up instead of exhausting the model's quota; raise it when QueueAge alarms
     * and the quota allows.
     */
    workerConcurrency: z
      .number({ error: "must be a whole number" })
      .int({ error: "must be a whole number" })
      .min(2, { error: "must be at least 2 (SQS event sources need 2)" })
      .max(1000)
      .default(5),
    /**
     * Seconds one model call may take (the generation deadline, the judge's too). The worker's
     * timeout is attempts × deadlines + a margin (cdk/lib/worker-sizing.ts); the queue's visibility 6×.
     */
    generationTimeoutSeconds: z.number().int().min(5).max(600).default(120),
  })
  .strict()
  .superRefine((tenant, ctx) => {
    const seconds = workerTimeoutSeconds(tenant);
    if (seconds > LAMBDA_MAX_TIMEOUT_SECONDS)
      ctx.addIssue({
        code: "custom",
        path: ["repairAttempts"],
        message: `with generationTimeoutSeconds ${tenant.generationTimeoutSeconds}${tenant.judge ? " and a judge" : ""}, one message may take ${workerTimeoutFormula(tenant)} = ${seconds} s, over Lambda's ${LAMBDA_MAX_TIMEOUT_SECONDS} s: lower repairAttempts or generationTimeoutSeconds`,
      });
    if (tenant.openAiKeySecretKmsKeyArn !== undefined && tenant.openAiKeySecretArn === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["openAiKeySecretKmsKeyArn"],
        message: "names the key of openAiKeySecretArn: set that secret too",
      });
  });
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
