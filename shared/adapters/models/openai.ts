import type OpenAI from "openai";
import type { LanguageModel, ModelAnswer, ModelCall } from "#ports/model.ts";
import { clientFailure, type Failure, type RetryOptions, withRetries } from "./retry.ts";

export interface OpenAiOptions {
  /** Default: OPENAI_BASE_URL, else OpenAI's own endpoint. */
  baseURL?: string | undefined;
  /** Default: OPENAI_API_KEY; or read when needed (a secret store). Never a flag, never logged. */
  apiKey?: string | (() => Promise<string>) | undefined;
  retry?: RetryOptions;
}

/**
 * An OpenAI-compatible Chat Completions endpoint (OpenAI, vLLM, Ollama, llama.cpp's server, LM
 * Studio) through the official SDK: temperature 0, a strict `json_schema` response format built
 * from the zod schema, the deadline's signal passed to the request. The SDK's own retries are off:
 * `withRetries` retries throttling and 5xx within the deadline, and a 4xx fails at once saying why.
 */
export function openAiModel(model: string, options: OpenAiOptions): LanguageModel {
  const name = `openai:${model}`;
  // The SDK loads on the first call: commands and functions that never call a model never pay for it.
  let loaded: Promise<{ sdk: typeof OpenAI; client: OpenAI }> | undefined;
  const load = () => {
    loaded ??= import("openai").then(({ default: sdk }) => ({
      sdk,
      client: new sdk({
        // A local server (Ollama, llama.cpp) needs no key; the SDK insists on one, so it gets a placeholder.
        apiKey: options.apiKey ?? (options.baseURL ? "no-key" : undefined),
        baseURL: options.baseURL ?? null,
        maxRetries: 0,
        timeout: 24 * 60 * 60 * 1000, // the generation deadline (the signal) ends a call, not the SDK
      }),
    }));
    return loaded;
  };
  // Older servers (and local ones) take max_tokens; OpenAI's newer models refuse it and take
  // max_completion_tokens. Start with the first; on that refusal, switch once and keep the switch.
  let limitField: "max_tokens" | "max_completion_tokens" = "max_tokens";
  const create = (client: OpenAI, call: ModelCall, signal: AbortSignal) =>
    client.chat.completions.create(
      {
        model,
        temperature: 0,
        [limitField]: call.maxOutputTokens,
        messages: [
          { role: "system", content: call.system },
          { role: "user", content: call.prompt },
        ],
        response_format: {
          type: "json_schema",
          json_schema: { name: call.schemaName, strict: true, schema: call.schema },
        },
      },
      { signal },
    );
  return {
    name,
    async complete(call: ModelCall, signal: AbortSignal): Promise<ModelAnswer> {
      const { sdk, client } = await load();
      const completion = await withRetries(
        name,
        async () => {
          try {
            return await create(client, call, signal);
          } catch (error) {
            if (limitField === "max_tokens" && refusesMaxTokens(sdk, error)) {
              limitField = "max_completion_tokens";
              return await create(client, call, signal);
            }
            throw error;
          }
        },
        (error) => classifyOpenAiError(sdk, error),
        signal,
        options.retry,
      );
      const choice = completion.choices[0];
      const refusal = choice?.message.refusal;
      return {
        // A refusal or an empty message is an empty answer: the gate reports it as schema-invalid.
        text: choice?.message.content ?? (refusal ? `refused: ${refusal}` : ""),
        inputTokens: completion.usage?.prompt_tokens ?? 0,
        outputTokens: completion.usage?.completion_tokens ?? 0,
      };
    },
  };
}

function refusesMaxTokens(sdk: typeof OpenAI, error: unknown): boolean {
  return (
    error instanceof sdk.APIError &&
    error.status === 400 &&
    (error.param === "max_tokens" || /max_completion_tokens/.test(error.message))
  );
}

function classifyOpenAiError(sdk: typeof OpenAI, error: unknown): Failure {
  if (error instanceof sdk.APIConnectionError)
    return { retry: true, why: `the endpoint could not be reached (${error.message})` };
  if (error instanceof sdk.APIError && typeof error.status === "number") {
    if (error.status === 429 || error.status === 408 || error.status >= 500)
      return { retry: true, why: `the endpoint answered ${error.status} (${error.message})` };
    return clientFailure(error.status, error.message, error.code);
  }
  return { retry: false, why: error instanceof Error ? error.message : String(error) };
}
