import {
  type Generation,
  GenerationFailedError,
  type LanguageModel,
  type ModelAnswer,
  type ModelCall,
  type ModelCallKind,
  type ModelCallRecord,
  type ModelPort,
  type ModelRequest,
  type PromptPreview,
} from "#ports/model.ts";
import { decodeModelAnswer, ModelConsolidationOutput, modelSchema } from "./model-output.ts";
import { promptTokens, RENDERER_VERSION, type RenderedPrompt, renderConsolidation } from "./prompt-render.ts";

/** A model's limits: prompts are sized to fit the context with room for the answer. */
export interface ModelSettings {
  contextTokens: number;
  maxOutputTokens: number;
}

export const DEFAULT_MODEL_SETTINGS: ModelSettings = { contextTokens: 32_000, maxOutputTokens: 4_096 };

/**
 * Asks a language model one rendered prompt, its answer given up to `settings.maxOutputTokens`
 * (the call's own room: a segment's is what its context leaves), refusing a prompt that cannot fit
 * its context with that room before sending it.
 */
export async function ask(
  model: LanguageModel,
  settings: ModelSettings,
  kind: ModelCallKind,
  rendered: RenderedPrompt,
  schema: { name: string; json: Record<string, unknown> },
  attempt: number,
  signal: AbortSignal,
): Promise<{ answer: ModelAnswer; record: ModelCallRecord }> {
  const needed = promptTokens(rendered);
  if (needed + settings.maxOutputTokens > settings.contextTokens)
    throw new GenerationFailedError(
      `${model.name}: the ${kind} prompt needs ${needed} tokens and the answer up to ${settings.maxOutputTokens}, more than the context of ${settings.contextTokens} (MEMGATE_CONTEXT_TOKENS)${kind === "consolidate" ? `; use segmented:${model.name}` : ""}`,
    );
  const call: ModelCall = {
    kind,
    system: rendered.system,
    prompt: rendered.prompt,
    promptHash: rendered.hash,
    schemaName: schema.name,
    schema: schema.json,
    maxOutputTokens: settings.maxOutputTokens,
  };
  const answer = await model.complete(call, signal);
  return {
    answer,
    record: {
      kind,
      attempt,
      promptHash: rendered.hash,
      reused: false,
      inputTokens: answer.inputTokens,
      outputTokens: answer.outputTokens,
    },
  };
}

const CONSOLIDATION_SCHEMA = { name: "ConsolidationOutput", json: modelSchema(ModelConsolidationOutput) };

/**
 * One prompt with every valid input (model names `openai:…`, `bedrock:…`, `replay:…`): the
 * rendered consolidate template, answered under the ConsolidationOutput schema. A repair re-renders
 * the same prompt with the gate's reasons appended and asks for a whole new answer.
 */
export function onePromptGenerator(model: LanguageModel, settings: ModelSettings): ModelPort {
  const render = (request: ModelRequest) =>
    renderConsolidation(request.prompt, request.context, { budget: request.budget, repair: request.repair });
  return {
    name: model.name,
    rendererVersion: RENDERER_VERSION,
    repairs: true,
    preview(request: ModelRequest): PromptPreview[] {
      return [{ kind: "consolidate", ...render(request) }];
    },
    async generate(request: ModelRequest, signal: AbortSignal): Promise<Generation> {
      const rendered = render(request);
      const { answer, record } = await ask(
        model,
        settings,
        "consolidate",
        rendered,
        CONSOLIDATION_SCHEMA,
        request.repair?.attempt ?? 1,
        signal,
      );
      return { answer: decodeModelAnswer(answer.text), calls: [record] };
    },
  };
}
