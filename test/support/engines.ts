// vitest globalSetup: the real local engines, started once per test run and stopped after it.
import type { TestProject } from "vitest/node";
import { startLocalEngines } from "#harness/local-engines.ts";

declare module "vitest" {
  export interface ProvidedContext {
    dynamoEndpoint: string;
    motoEndpoint: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const engines = await startLocalEngines();
  project.provide("dynamoEndpoint", engines.dynamoEndpoint);
  project.provide("motoEndpoint", engines.motoEndpoint);
  return engines.stop;
}
