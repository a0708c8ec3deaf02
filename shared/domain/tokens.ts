import { Tiktoken } from "js-tiktoken/lite";
import cl100kBase from "js-tiktoken/ranks/cl100k_base";

/** The budget's tokenizer (CONTRACT §4a: cl100k_base), built on first use: its ranks are large. */
let encoder: Tiktoken | undefined;

export function countTokens(text: string): number {
  encoder ??= new Tiktoken(cl100kBase);
  return encoder.encode(text).length;
}
