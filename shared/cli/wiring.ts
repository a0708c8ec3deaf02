import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { MemoryQueue } from "#adapters/embedded/memory-queue.ts";
import { SqliteStore } from "#adapters/embedded/sqlite-store.ts";
import { judgeNamed, modelNamed, modelOptionsFromEnv } from "#adapters/models/models.ts";
import type { Deps } from "#app/deps.ts";
import { parseFailpoints } from "#app/failpoints.ts";
import { DEFAULT_PROMPT_VERSION, loadPrompt } from "#app/prompts.ts";
import { DETERMINISTIC_MODEL } from "#domain/consolidator.ts";
import { InputError } from "#io/event-file.ts";
import type { Stores } from "#ports/stores.ts";
import { env } from "#runtime/config.ts";

export interface StoreOptions {
  store: "embedded" | "aws";
  home?: string | undefined;
  /** Refuse (and create nothing) when the embedded store does not exist yet: read-only commands. */
  mustExist?: boolean;
}

export type { Stores } from "#ports/stores.ts";

/** The embedded store under --home (default $MEMGATE_HOME or ./.memgate), or the AWS one. */
export async function openStores(options: StoreOptions): Promise<Stores> {
  if (options.store === "aws") return openAwsStores();
  const home = options.home ?? env.MEMGATE_HOME ?? ".memgate";
  if (home.trim() === "")
    throw new InputError("--home is empty: name the folder of the embedded store (default ./.memgate)");
  if (options.mustExist && !existsSync(join(resolve(home), SqliteStore.FILE)))
    throw new InputError(
      `no memgate store in ${resolve(home)} yet: nothing was appended there (check --home or $MEMGATE_HOME)`,
    );
  const store = SqliteStore.open(resolve(home));
  return {
    events: store,
    alias: store,
    artifacts: store,
    queue: new MemoryQueue(),
    settings: store,
    close: () => store.close(),
  };
}

/** AWS adapters, loaded only when asked for (their SDK stays out of embedded runs). */
async function openAwsStores(): Promise<Stores> {
  const table = env.MEMGATE_TABLE;
  const bucket = env.MEMGATE_BUCKET;
  const queueUrl = env.MEMGATE_QUEUE_URL;
  if (!table || !bucket || !queueUrl)
    throw new InputError(
      "--store aws needs MEMGATE_TABLE, MEMGATE_BUCKET and MEMGATE_QUEUE_URL (the tenant stack's outputs)",
    );
  const { composeAwsStores } = await import("#adapters/aws/compose.ts");
  return composeAwsStores({ table, bucket, queueUrl });
}

export interface PipelineOptions {
  model?: string | undefined;
  prompt?: string | undefined;
  budget?: number | undefined;
  timeoutMs?: number | undefined;
  /** Only prompts are rendered (`memgate prompt`): no model is called, so no API key is needed. */
  renderOnly?: boolean | undefined;
  progress: (line: string) => void;
}

/** Refuses an unknown --model before anything is opened. */
export function checkModelName(name: string): void {
  try {
    modelNamed(name);
  } catch (error) {
    throw new InputError(`--model: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The use cases' dependencies over open stores. */
export function pipelineDeps(stores: Stores, options: PipelineOptions): Deps {
  return {
    ...stores,
    model: modelNamed(options.model ?? DETERMINISTIC_MODEL, {
      ...modelOptionsFromEnv(),
      ...(options.renderOnly ? { openAiApiKey: env.OPENAI_API_KEY ?? "not-needed-to-render" } : {}),
    }),
    prompt: loadPrompt(options.prompt ?? DEFAULT_PROMPT_VERSION),
    now: () => new Date(),
    newId: () => randomUUID().slice(0, 8),
    failpoints: parseFailpoints(env.MEMGATE_FAILPOINTS),
    generationTimeoutMs: options.timeoutMs ?? env.MEMGATE_GENERATION_TIMEOUT_MS ?? 30_000,
    ...(options.budget === undefined ? {} : { budget: options.budget }),
    ...(env.MEMGATE_REPAIR_ATTEMPTS === undefined ? {} : { repairAttempts: env.MEMGATE_REPAIR_ATTEMPTS }),
    ...(env.MEMGATE_JUDGE === undefined || options.renderOnly
      ? {}
      : { judge: judgeNamed(env.MEMGATE_JUDGE) }),
    progress: options.progress,
  };
}
