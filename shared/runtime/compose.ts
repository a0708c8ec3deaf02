import { randomUUID } from "node:crypto";
import { judgeNamed, type ModelOptions, modelNamed } from "#adapters/models/models.ts";
import type { Deps } from "#app/deps.ts";
import type { Failpoints } from "#app/failpoints.ts";
import { loadPrompt } from "#app/prompts.ts";
import type { SelectorVersion } from "#domain/validity.ts";
import type { Stores } from "#ports/stores.ts";

/** How a runtime generates: models by their names (CONTRACT §5), the prompt by its version. */
export interface GenerationSettings {
  model: string;
  prompt: string;
  generationTimeoutMs: number;
  budget?: number | undefined;
  /** Under the store's budget setting (`memgate settings --budget`): a tenant stack's `budgetTokens`. */
  defaultBudget?: number | undefined;
  repairAttempts?: number | undefined;
  /** A model judge for the texts the gate cannot decide (MEMGATE_JUDGE). */
  judge?: string | undefined;
  failpoints: Failpoints;
  /** The selector new artifacts are built with (`memgate recover --selector`). */
  selectorVersion?: SelectorVersion | undefined;
  progress: (line: string) => void;
}

/**
 * The use cases' dependencies over open stores: the one assembly both composition roots (the
 * embedded one of the command line, `serve` and `mcp`, and the Lambdas') build from their own
 * stores and settings. The clock and the ids are the real ones here and nowhere else.
 */
export function composeDeps(stores: Stores, settings: GenerationSettings, models: ModelOptions): Deps {
  return {
    events: stores.events,
    alias: stores.alias,
    artifacts: stores.artifacts,
    queue: stores.queue,
    settings: stores.settings,
    model: modelNamed(settings.model, models),
    prompt: loadPrompt(settings.prompt),
    now: () => new Date(),
    newId: () => randomUUID().slice(0, 8),
    failpoints: settings.failpoints,
    generationTimeoutMs: settings.generationTimeoutMs,
    ...(settings.budget === undefined ? {} : { budget: settings.budget }),
    ...(settings.defaultBudget === undefined ? {} : { defaultBudget: settings.defaultBudget }),
    ...(settings.repairAttempts === undefined ? {} : { repairAttempts: settings.repairAttempts }),
    ...(settings.judge === undefined ? {} : { judge: judgeNamed(settings.judge, models) }),
    ...(settings.selectorVersion === undefined ? {} : { selectorVersion: settings.selectorVersion }),
    progress: settings.progress,
  };
}
