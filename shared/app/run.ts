import type { GateReport } from "#domain/gate/index.ts";
import type { GenerationRecord, Snapshot } from "#domain/schemas.ts";
import type { AliasState } from "#ports/alias.ts";
import type { GenerateDeps, PublishDeps } from "./deps.ts";
import { type GenerateOutcome, generate } from "./generate.ts";
import { publish } from "./publish.ts";

/**
 * The run use case, what the worker does with one snapshot: generate, then publish a passing
 * candidate. Invariant: only a CANDIDATE is published; a dropped snapshot or a REJECTED answer is
 * returned as generated.
 */

export type RunOutcome =
  | GenerateOutcome
  | {
      status: "PUBLISHED" | "SHADOW";
      artifactId: string;
      alias?: AliasState;
      gate: GateReport;
      /** How the candidate was generated (language models only): calls, tokens, attempts. */
      generation?: GenerationRecord;
    };

/** The worker: generate, then publish a passing candidate (`approve` publishes even in shadow mode). */
export async function run(
  deps: GenerateDeps & PublishDeps,
  snapshot: Snapshot,
  options: { approve?: boolean } = {},
): Promise<RunOutcome> {
  const generated = await generate(deps, snapshot);
  if (generated.status !== "CANDIDATE") return generated;
  const published = await publish(deps, generated.artifactId, options);
  const { artifactId, gate, manifest } = generated;
  const generation = manifest.generation ? { generation: manifest.generation } : {};
  return published.status === "PUBLISHED"
    ? { status: "PUBLISHED", artifactId, alias: published.alias, gate, ...generation }
    : { status: "SHADOW", artifactId, gate, ...generation };
}
