import type {
  BedrockRuntimeClient,
  ContentBlock,
  ConverseCommandOutput,
} from "@aws-sdk/client-bedrock-runtime";
import type { DocumentType } from "@smithy/types";
import type { LanguageModel, ModelAnswer, ModelCall } from "#ports/model.ts";
import { clientFailure, type Failure, type RetryOptions, withRetries } from "./retry.ts";

export interface BedrockOptions {
  /** Default: the SDK's own (AWS_ENDPOINT_URL_BEDROCK_RUNTIME, then the region's endpoint). */
  endpoint?: string | undefined;
  region?: string | undefined;
  retry?: RetryOptions;
  /** Wraps the SDK client (the Lambdas' X-Ray tracer). */
  instrument?: <T extends object>(client: T) => T;
}

/** The name of the tool the model is made to call: its input is the answer. */
export const ANSWER_TOOL = "answer";

/**
 * Amazon Bedrock through the Converse API: structured output by a forced tool whose input schema
 * is the answer's JSON Schema (from the zod schema), temperature 0, max tokens from config, the
 * deadline's signal passed to the SDK. The SDK's own retries are off (one attempt per send);
 * `withRetries` retries throttling and 5xx within the deadline. Credentials and region are the
 * standard AWS SDK chain's; every request is SigV4-signed by the SDK.
 */
export function bedrockModel(modelId: string, options: BedrockOptions): LanguageModel {
  const name = `bedrock:${modelId}`;
  // The SDK loads on the first call: functions that never call a model never pay for it.
  let loaded:
    | Promise<{ sdk: typeof import("@aws-sdk/client-bedrock-runtime"); client: BedrockRuntimeClient }>
    | undefined;
  const load = () => {
    loaded ??= import("@aws-sdk/client-bedrock-runtime").then((sdk) => {
      const client = new sdk.BedrockRuntimeClient({
        maxAttempts: 1,
        ...(options.endpoint ? { endpoint: options.endpoint } : {}),
        ...(options.region ? { region: options.region } : {}),
      });
      return { sdk, client: options.instrument ? options.instrument(client) : client };
    });
    return loaded;
  };
  return {
    name,
    async complete(call: ModelCall, signal: AbortSignal): Promise<ModelAnswer> {
      const { sdk, client } = await load();
      const output = await withRetries(
        name,
        () =>
          client.send(
            new sdk.ConverseCommand({
              modelId,
              system: [{ text: call.system }],
              messages: [{ role: "user", content: [{ text: call.prompt }] }],
              inferenceConfig: { temperature: 0, maxTokens: call.maxOutputTokens },
              toolConfig: {
                tools: [
                  {
                    toolSpec: {
                      name: ANSWER_TOOL,
                      description: `Return the answer: one ${call.schemaName} object.`,
                      inputSchema: { json: call.schema as DocumentType },
                    },
                  },
                ],
                toolChoice: { tool: { name: ANSWER_TOOL } },
              },
            }),
            { abortSignal: signal },
          ),
        classifyBedrockError,
        signal,
        options.retry,
      );
      return {
        text: answerText(output),
        inputTokens: output.usage?.inputTokens ?? 0,
        outputTokens: output.usage?.outputTokens ?? 0,
      };
    },
  };
}

/** The forced tool's input as JSON text; a model that wrote prose instead answers that prose. */
function answerText(output: ConverseCommandOutput): string {
  const content: ContentBlock[] = output.output?.message?.content ?? [];
  const tool = content.find((block) => block.toolUse?.name === ANSWER_TOOL)?.toolUse;
  if (tool) return JSON.stringify(tool.input ?? null);
  return content.map((block) => block.text ?? "").join("");
}

const RETRIED = new Set([
  "ThrottlingException",
  "ServiceUnavailableException",
  "InternalServerException",
  "ModelNotReadyException",
  "ModelTimeoutException",
  "TooManyRequestsException",
]);

export function classifyBedrockError(error: unknown): Failure {
  const named = error as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const status = named.$metadata?.httpStatusCode;
  const message = named.message ?? String(error);
  if ((named.name && RETRIED.has(named.name)) || status === 429 || (status !== undefined && status >= 500))
    return { retry: true, why: `Bedrock answered ${named.name ?? status} (${message})` };
  if (status !== undefined && status >= 400) return clientFailure(status, `${named.name}: ${message}`);
  const code = (error as { code?: string }).code;
  if (
    code === "ECONNREFUSED" ||
    code === "ECONNRESET" ||
    code === "ETIMEDOUT" ||
    named.name === "TimeoutError"
  )
    return { retry: true, why: `Bedrock could not be reached (${message})` };
  return { retry: false, why: message };
}
