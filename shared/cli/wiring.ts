import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { MemoryQueue } from "../adapters/embedded/memory-queue.ts";
import { SqliteStore } from "../adapters/embedded/sqlite-store.ts";
import { modelNamed } from "../adapters/models/models.ts";
import { parseFailpoints } from "../app/failpoints.ts";
import type { Deps } from "../app/pipeline.ts";
import { DEFAULT_PROMPT_VERSION, loadPrompt } from "../app/prompts.ts";
import { env } from "../config.ts";
import { DETERMINISTIC_MODEL } from "../domain/consolidator.ts";
import { InputError } from "../io/event-file.ts";
import type { AliasPort, ArtifactStore, EventLog, SettingsPort, SnapshotQueue } from "../ports/store.ts";
import { packageRoot } from "./package-root.ts";

export interface StoreOptions {
  store: "embedded" | "aws";
  home?: string | undefined;
  /** Refuse (and create nothing) when the embedded store does not exist yet: read-only commands. */
  mustExist?: boolean;
}

export interface Stores {
  events: EventLog;
  alias: AliasPort;
  artifacts: ArtifactStore;
  queue: SnapshotQueue;
  settings: SettingsPort;
  close(): void;
}

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

/** AWS adapters, loaded only when asked for; endpoints come from the standard SDK variables. */
async function openAwsStores(): Promise<Stores> {
  const table = env.MEMGATE_TABLE;
  const bucket = env.MEMGATE_BUCKET;
  const queueUrl = env.MEMGATE_QUEUE_URL;
  if (!table || !bucket || !queueUrl)
    throw new InputError(
      "--store aws needs MEMGATE_TABLE, MEMGATE_BUCKET and MEMGATE_QUEUE_URL (the tenant stack's outputs)",
    );
  const [
    { DynamoDBClient },
    { S3Client },
    { SQSClient },
    { DynamoStore },
    { S3ArtifactStore },
    { SqsSnapshotQueue },
  ] = await Promise.all([
    import("@aws-sdk/client-dynamodb"),
    import("@aws-sdk/client-s3"),
    import("@aws-sdk/client-sqs"),
    import("../adapters/aws/dynamo-store.ts"),
    import("../adapters/aws/s3-artifacts.ts"),
    import("../adapters/aws/sqs-queue.ts"),
  ]);
  const dynamo = new DynamoDBClient({});
  const s3 = new S3Client({ forcePathStyle: true });
  const store = new DynamoStore(dynamo, table);
  return {
    events: store,
    alias: store,
    artifacts: new S3ArtifactStore(s3, bucket, store),
    queue: new SqsSnapshotQueue(new SQSClient({}), queueUrl),
    settings: store,
    close: () => {
      dynamo.destroy();
      s3.destroy();
    },
  };
}

export interface PipelineOptions {
  model?: string | undefined;
  prompt?: string | undefined;
  budget?: number | undefined;
  timeoutMs?: number | undefined;
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
    model: modelNamed(options.model ?? DETERMINISTIC_MODEL),
    prompt: loadPrompt(packageRoot(), options.prompt ?? DEFAULT_PROMPT_VERSION),
    now: () => new Date(),
    newId: () => randomUUID().slice(0, 8),
    failpoints: parseFailpoints(env.MEMGATE_FAILPOINTS),
    generationTimeoutMs: options.timeoutMs ?? env.MEMGATE_GENERATION_TIMEOUT_MS ?? 30_000,
    ...(options.budget === undefined ? {} : { budget: options.budget }),
    progress: options.progress,
  };
}
