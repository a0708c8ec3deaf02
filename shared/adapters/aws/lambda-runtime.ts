import { z } from "zod";
import type { Deps } from "#app/deps.ts";
import { NO_FAILPOINTS } from "#app/failpoints.ts";
import { DEFAULT_PROMPT_VERSION } from "#app/prompts.ts";
import { DETERMINISTIC_MODEL } from "#domain/consolidator.ts";
import type { AuditRounds } from "#ports/audit-rounds.ts";
import { composeDeps } from "#runtime/compose.ts";
import { ENV } from "#runtime/settings.ts";
import { modelOptionsFromEnv } from "../models/models.ts";
import {
  LambdaStoreConfig,
  type LambdaTools,
  lambdaStores,
  lambdaTools,
  parseEnvironment,
} from "./lambda-store-runtime.ts";
import { secretKey } from "./secret-key.ts";

export { LambdaConfigError } from "./lambda-store-runtime.ts";

/**
 * The settings of the Lambdas that generate or judge (api, worker, audit): the stores' settings
 * and the model's, parsed once at cold start like the stores' (lambda-store-runtime.ts).
 */
export const LambdaConfig = LambdaStoreConfig.extend({
  [ENV.model]: z.string().min(1).default(DETERMINISTIC_MODEL),
  [ENV.prompt]: z.string().min(1).default(DEFAULT_PROMPT_VERSION),
  [ENV.generationTimeoutMs]: z.coerce.number().int().positive().default(60_000),
  [ENV.budgetTokens]: z.coerce.number().int().positive().optional(),
  [ENV.repairAttempts]: z.coerce.number().int().min(1).max(10).optional(),
  [ENV.judge]: z.string().min(1).optional(),
  /** A Secrets Manager secret holding the OpenAI-compatible endpoint's key (never the key itself). */
  [ENV.openAiKeySecret]: z.string().min(1).optional(),
});
export type LambdaConfig = z.infer<typeof LambdaConfig> & LambdaStoreConfig;

export function parseLambdaConfig(environment: Record<string, string | undefined>): LambdaConfig {
  return parseEnvironment(LambdaConfig, environment);
}

export interface LambdaRuntime extends LambdaTools {
  config: LambdaConfig;
  deps: Deps;
  /** The scheduled audit's checkpoint (the audit Lambda's rounds). */
  rounds: AuditRounds;
}

/**
 * The AWS composition root of the Lambdas that generate or judge: the tenant's table, bucket and
 * queue behind the ports, the model and the judge, Powertools' logger, metrics and tracer. Built
 * once per cold start and shared by every invocation. The outbox and the sweep use
 * lambdaStoreRuntime, which leaves the models (and what they import) out of their bundles.
 */
export function lambdaRuntime(environment: Record<string, string | undefined> = process.env): LambdaRuntime {
  const config = parseLambdaConfig(environment);
  const tools = lambdaTools(config.MEMGATE_TENANT);
  const instrument = <T extends object>(client: T): T => tools.tracer.captureAWSv3Client(client);
  const stores = lambdaStores(config, tools.tracer);
  const deps = composeDeps(
    stores,
    {
      model: config.MEMGATE_MODEL,
      prompt: config.MEMGATE_PROMPT,
      generationTimeoutMs: config.MEMGATE_GENERATION_TIMEOUT_MS,
      defaultBudget: config.MEMGATE_BUDGET_TOKENS,
      repairAttempts: config.MEMGATE_REPAIR_ATTEMPTS,
      judge: config.MEMGATE_JUDGE,
      failpoints: NO_FAILPOINTS,
      progress: (line) => tools.logger.debug(line),
    },
    {
      ...modelOptionsFromEnv(),
      instrument,
      ...(config.MEMGATE_OPENAI_KEY_SECRET
        ? { openAiApiKey: secretKey(config.MEMGATE_OPENAI_KEY_SECRET, { instrument }) }
        : {}),
    },
  );
  return { ...tools, config, deps, rounds: stores.rounds };
}
