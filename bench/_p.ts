import { consolidate } from "../shared/domain/consolidator.ts";
import { buildGateContext, checkConsolidationOutput } from "../shared/domain/gate.ts";
import { DEFAULT_TRUST_POLICY, MemoryEvent } from "../shared/domain/schemas.ts";
import { selectInputs } from "../shared/domain/selector.ts";

const units = ["USD", "km", "h", "GiB", "kg"];
const events = Array.from({ length: 10000 }, (_, i) => ({
  ...MemoryEvent.parse({
    eventId: `m-${i + 1}`,
    kind: i % 3 === 0 ? "constraint" : "fact",
    text: `s ${i}`,
    assertions: [
      {
        key: `project:p${i % 97}/item-${i}`,
        value: { quantity: `${i}.50`, unit: units[i % 5] },
        polarity: "affirmed",
        scope: `project:p${i % 97}`,
      },
    ],
  }),
  sequence: i + 1,
}));
const context = buildGateContext(selectInputs(events, 10000, DEFAULT_TRUST_POLICY), 10000);
const c = consolidate(context);
for (let i = 0; i < 50; i++) checkConsolidationOutput(context, c);
const t = performance.now();
for (let i = 0; i < 500; i++) checkConsolidationOutput(context, c);
console.log(((performance.now() - t) / 500).toFixed(2), "ms per check");
