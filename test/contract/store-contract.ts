import { describeAppendContract } from "./store-contract-append.ts";
import { describeArtifactContract } from "./store-contract-artifacts.ts";
import type { StoreUnderTest } from "./store-contract-support.ts";

export type { StoreUnderTest } from "./store-contract-support.ts";

/** The store contract every adapter set passes (the embedded store, and the AWS engines run locally). */
export function describeStoreContract(name: string, open: () => StoreUnderTest): void {
  describeAppendContract(name, open);
  describeArtifactContract(name, open);
}
