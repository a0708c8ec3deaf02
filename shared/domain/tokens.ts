import { createRequire } from "node:module";
import type { Tiktoken as TiktokenType } from "js-tiktoken/lite";

/**
 * The budget's tokenizer (CONTRACT §4a: cl100k_base). Its rank table is over a megabyte, so it is
 * loaded on the first count, not when memgate starts: most runs never check a budget.
 */
const require = createRequire(import.meta.url);
let encoder: TiktokenType | undefined;

export function countTokens(text: string): number {
  if (!encoder) {
    const { Tiktoken } = require("js-tiktoken/lite") as typeof import("js-tiktoken/lite");
    const ranks = require("js-tiktoken/ranks/cl100k_base") as { default?: unknown } & Record<string, unknown>;
    encoder = new Tiktoken((ranks.default ?? ranks) as ConstructorParameters<typeof Tiktoken>[0]);
  }
  return encoder.encode(text).length;
}
