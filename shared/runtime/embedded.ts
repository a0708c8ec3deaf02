import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { MemoryQueue } from "#adapters/embedded/memory-queue.ts";
import { SqliteStore, StoreHomeError } from "#adapters/embedded/sqlite-store.ts";
import { modelNamed, modelOptionsFromEnv } from "#adapters/models/models.ts";
import { pauseBetweenSlices } from "#adapters/time-slices.ts";
import type { Deps } from "#app/deps.ts";
import { parseFailpoints } from "#app/failpoints.ts";
import { DEFAULT_PROMPT_VERSION } from "#app/prompts.ts";
import { migrateSelectors } from "#app/selector-migration.ts";
import { DETERMINISTIC_MODEL } from "#domain/consolidator.ts";
import type { SelectorVersion } from "#domain/validity.ts";
import { InputError } from "#ports/errors.ts";
import type { Stores } from "#ports/stores.ts";
import { composeDeps } from "./compose.ts";
import { env } from "./config.ts";
import { ENV } from "./settings.ts";

export interface StoreOptions {
  store: "embedded" | "aws";
  home?: string | undefined;
  /** Refuse (and create nothing) when the embedded store does not exist yet: read-only commands. */
  mustExist?: boolean;
  /**
   * The process serves requests for as long as it runs (serve, mcp): the embedded store's log is
   * checkpointed on a thread of its own and its commits are synced off the serving thread.
   */
  longRunning?: boolean | undefined;
}

export interface EmbeddedRuntimeOptions extends StoreOptions {
  /** The model's name; none: the store's own setting (`memgate settings --model`), else deterministic-v1. */
  model?: string | undefined;
  prompt?: string | undefined;
  budget?: number | undefined;
  timeoutMs?: number | undefined;
  selectorVersion?: SelectorVersion | undefined;
  /** Only prompts are rendered (`memgate prompt`): no model is called, so no API key is needed. */
  renderOnly?: boolean | undefined;
  progress: (line: string) => void;
}

/** The use cases' dependencies and how to let go of the stores under them. */
export interface OpenRuntime {
  deps: Deps;
  close(): void;
}

/**
 * The embedded composition root, for every process a user starts (the command line, `memgate
 * serve`, `memgate mcp`): the store under --home (or the tenant's AWS stores with `--store aws`),
 * the models named by flag, store setting or environment, the failpoints. The embedded store moves
 * its subjects to the current selector when opened (a query that finds none once done); a DynamoDB
 * table is moved once by `memgate migrate --store aws`.
 */
export async function openEmbeddedRuntime(options: EmbeddedRuntimeOptions): Promise<OpenRuntime> {
  const stores = await openStores(options);
  try {
    const model = options.model ?? (await stores.settings.settings()).model ?? DETERMINISTIC_MODEL;
    let deps: Deps;
    try {
      deps = composeDeps(
        stores,
        {
          model,
          prompt: options.prompt ?? DEFAULT_PROMPT_VERSION,
          generationTimeoutMs: options.timeoutMs ?? env.MEMGATE_GENERATION_TIMEOUT_MS ?? 30_000,
          budget: options.budget,
          repairAttempts: env.MEMGATE_REPAIR_ATTEMPTS,
          judge: options.renderOnly ? undefined : env.MEMGATE_JUDGE,
          failpoints: parseFailpoints(env.MEMGATE_FAILPOINTS),
          selectorVersion: options.selectorVersion,
          progress: options.progress,
        },
        {
          ...modelOptionsFromEnv(),
          ...(options.renderOnly ? { openAiApiKey: env.OPENAI_API_KEY ?? "not-needed-to-render" } : {}),
        },
      );
    } catch (error) {
      // A model, judge or prompt the settings name but this process cannot build.
      throw error instanceof InputError
        ? error
        : new InputError(error instanceof Error ? error.message : String(error), { cause: error });
    }
    if (options.store === "embedded") await migrateSelectors(deps);
    return { deps: { ...deps, pause: pauseBetweenSlices }, close: () => stores.close() };
  } catch (error) {
    stores.close();
    throw error;
  }
}

/** The embedded store under --home (default $MEMGATE_HOME or ./.memgate), or the AWS one. */
export async function openStores(options: StoreOptions): Promise<Stores> {
  if (options.store === "aws") return openAwsStores();
  const home = options.home ?? env.MEMGATE_HOME ?? ".memgate";
  if (home.trim() === "")
    throw new InputError("--home is empty: name the folder of the embedded store (default ./.memgate)");
  if (options.mustExist && !existsSync(join(resolve(home), SqliteStore.FILE)))
    throw new InputError(
      `no memgate store in ${resolve(home)} yet: nothing was appended there (check --home or $${ENV.home})`,
    );
  let store: SqliteStore;
  try {
    store = SqliteStore.open(resolve(home), {
      pause: pauseBetweenSlices,
      serving: options.longRunning === true,
    });
  } catch (error) {
    // A home that cannot hold a store (a file, no permission) is the user's to fix: exit 2.
    if (error instanceof StoreHomeError) throw new InputError(error.message, { cause: error });
    throw error;
  }
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
      `--store aws needs ${ENV.table}, ${ENV.bucket} and ${ENV.queueUrl} (the tenant stack's outputs)`,
    );
  const { composeAwsStores } = await import("#adapters/aws/compose.ts");
  return composeAwsStores({ table, bucket, queueUrl });
}

/** Refuses an unknown --model before anything is opened. */
export function checkModelName(name: string): void {
  try {
    modelNamed(name);
  } catch (error) {
    throw new InputError(`--model: ${error instanceof Error ? error.message : String(error)}`);
  }
}
