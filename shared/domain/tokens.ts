import { Tiktoken } from "js-tiktoken/lite";
import cl100k from "js-tiktoken/ranks/cl100k_base";

/**
 * The budget's tokenizer (CONTRACT §4a: cl100k_base). The rank table is imported statically, so
 * a bundle (a Lambda's) carries it and needs no file beside it; importing it costs ~10 ms (it is
 * one string), while building the encoder from it is the expensive part, done on the first count.
 */
let encoder: Tiktoken | undefined;

export function countTokens(text: string): number {
  encoder ??= new Tiktoken(cl100k);
  return encoder.encode(text).length;
}
