import { beforeAll, inject } from "vitest";
import { openAwsStores } from "../support/aws-stores.ts";
import { describePipelineScenarios } from "./pipeline-scenarios.ts";

let stores: Awaited<ReturnType<typeof openAwsStores>>;
beforeAll(async () => {
  stores = await openAwsStores({
    dynamoEndpoint: inject("dynamoEndpoint"),
    motoEndpoint: inject("motoEndpoint"),
  });
});

describePipelineScenarios("AWS local engines", () => ({
  events: stores.store,
  alias: stores.store,
  artifacts: stores.artifacts,
  settings: stores.store,
}));
