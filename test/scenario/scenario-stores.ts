import type { PipelineStores } from "#harness/pipeline-builders.ts";

/** A store set under test: the pipeline's stores and a way to make a subject look older. */
export interface ScenarioStores extends PipelineStores {
  /**
   * Makes a subject's clock look as an older store left it, written through the engine directly
   * (the pipeline itself never produces it): no selector mark (before v2), or "v2" (before v3).
   */
  forgetSelector(subject: string, mark?: "v2"): Promise<void>;
}

let subjects = 0;
export const freshSubject = () => `scenario-${process.pid}-${++subjects}`;
