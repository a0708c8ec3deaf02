import { describeFaultScenarios } from "./scenario-faults.ts";
import { describeReadingScenarios } from "./scenario-readings.ts";
import { describeRebuildScenarios } from "./scenario-rebuilds.ts";
import { describeRecallScenarios } from "./scenario-recall.ts";
import { describeSelectorScenarios } from "./scenario-selectors.ts";
import type { ScenarioStores } from "./scenario-stores.ts";

/**
 * The pipeline's scenarios over one store set (the embedded store, and the AWS engines run
 * locally): each part in its own module, run here in one order.
 */
export function describePipelineScenarios(name: string, open: () => ScenarioStores): void {
  describeRebuildScenarios(name, open);
  describeRecallScenarios(name, open);
  describeSelectorScenarios(name, open);
  describeFaultScenarios(name, open);
  describeReadingScenarios(name, open);
}
