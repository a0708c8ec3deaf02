import type { SelectorVersion } from "#domain/selector.ts";
import type { AliasPort } from "#ports/alias.ts";
import type { ArtifactStore } from "#ports/artifacts.ts";
import type { EventLog } from "#ports/event-log.ts";
import type { JudgePort } from "#ports/judge.ts";
import type { ModelPort, Prompt } from "#ports/model.ts";
import type { SnapshotQueue } from "#ports/queue.ts";
import type { SettingsPort } from "#ports/settings.ts";
import type { Pause, TimeSource } from "#ports/time.ts";
import type { Failpoints } from "./failpoints.ts";

/**
 * What the use cases are handed: stores, model, prompt, time, ids, failpoints, limits. The CLI,
 * the local server and the Lambdas build one `Deps` each; every use case declares the part it
 * uses (`StoreDeps`, `AppendDeps`, `GenerateDeps`, `PublishDeps` or a `Pick`), never reads a
 * global, so an append needs no model and a publish no prompt.
 */

/** Everything an entry point hands the use cases; each use case takes only its part of it. */
export interface Deps {
  events: EventLog;
  alias: AliasPort;
  artifacts: ArtifactStore;
  queue: SnapshotQueue;
  settings: SettingsPort;
  model: ModelPort;
  prompt: Prompt;
  now: TimeSource;
  newId: () => string;
  failpoints: Failpoints;
  generationTimeoutMs: number;
  /** Token budget for summaries given for this process (`--budget`); it wins over the store's setting. */
  budget?: number;
  /** The deployment's default budget (a tenant stack's `budgetTokens`), under the store's setting. */
  defaultBudget?: number;
  /** Attempts per generation, the first included, when a model that can repair is refused (default 2). */
  repairAttempts?: number;
  /** A model judge for the texts the gate cannot decide; none: the deterministic verdict stands. */
  judge?: JudgePort;
  /** The selector new artifacts are built with (forward recovery may pick v1); default the current one. */
  selectorVersion?: SelectorVersion;
  progress: (line: string) => void;
  /**
   * Lets the thread's other work run during a large request (a server's event loop); default:
   * never pauses (a process serving one request at a time).
   */
  pause?: Pause;
}

/** What each use case needs, and no more: an append needs no model, a publish no prompt. */
export type StoreDeps = Pick<Deps, "events" | "artifacts" | "queue" | "settings" | "progress" | "pause">;
export type AppendDeps = StoreDeps & Pick<Deps, "failpoints" | "newId" | "pause">;
export type GenerateDeps = Pick<
  Deps,
  | "events"
  | "artifacts"
  | "model"
  | "prompt"
  | "now"
  | "newId"
  | "failpoints"
  | "generationTimeoutMs"
  | "budget"
  | "defaultBudget"
  | "settings"
  | "repairAttempts"
  | "judge"
  | "selectorVersion"
  | "progress"
>;
export type PublishDeps = Pick<
  Deps,
  "events" | "alias" | "artifacts" | "settings" | "failpoints" | "progress"
>;
