import { modelJudge } from "#app/judge.ts";
import { DEFAULT_MODEL_SETTINGS, type ModelSettings, onePromptGenerator } from "#app/one-prompt.ts";
import { segmentedGenerator } from "#app/segmented.ts";
import { consolidate, DETERMINISTIC_MODEL } from "#domain/consolidator.ts";
import type { ConsolidationOutput } from "#domain/schemas.ts";
import type { JudgePort } from "#ports/judge.ts";
import type { Generation, LanguageModel, ModelPort, ModelRequest } from "#ports/model.ts";
import { env } from "#runtime/config.ts";
import {
  isSegmented,
  type LanguageModelName,
  MODEL_NAME_FORMS,
  ModelNameError,
  parseLanguageModelName,
} from "#runtime/settings.ts";
import { bedrockModel } from "./bedrock.ts";
import { openAiModel } from "./openai.ts";
import { recordingModel, replayModel } from "./replay.ts";
import type { RetryOptions } from "./retry.ts";

/**
 * The embedded default model and the test doubles that fail on purpose. Doubles start from the
 * deterministic consolidator's honest answer and bend it the way real models do.
 */

/** An answer written without calling a language model: no prompt was sent. */
function answered(answer: string): Generation {
  return { answer, calls: [] };
}

const deterministic: ModelPort = {
  name: DETERMINISTIC_MODEL,
  async generate(request: ModelRequest): Promise<Generation> {
    return answered(
      JSON.stringify(
        consolidate(request.context, request.budget === undefined ? {} : { budget: request.budget }),
      ),
    );
  },
};

function bending(
  name: string,
  bend: (honest: ConsolidationOutput, request: ModelRequest) => unknown,
): ModelPort {
  return {
    name,
    async generate(request: ModelRequest): Promise<Generation> {
      const honest = consolidate(
        request.context,
        request.budget === undefined ? {} : { budget: request.budget },
      );
      return answered(JSON.stringify(bend(honest, request)));
    },
  };
}

const structured = (o: ConsolidationOutput) =>
  o.claims.findIndex((claim) => !claim.key.startsWith("memory:"));

export const MODELS: Record<string, ModelPort> = {
  [DETERMINISTIC_MODEL]: deterministic,
  /** Never answers: the caller's timeout must end it. */
  slow: {
    name: "slow",
    generate: (_request, signal) =>
      new Promise((_resolve, reject) => {
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      }),
  },
  "missing-fields": bending("missing-fields", (o) => ({ claims: o.claims })),
  truncated: {
    name: "truncated",
    async generate(request) {
      const { answer } = await deterministic.generate(request, new AbortController().signal);
      return answered(answer.slice(0, Math.floor(answer.length / 2)));
    },
  },
  "polarity-flip": bending("polarity-flip", (o) => {
    const i = structured(o);
    return {
      ...o,
      claims: o.claims.map((c, j) =>
        j === i ? { ...c, polarity: c.polarity === "affirmed" ? "negated" : "affirmed" } : c,
      ),
    };
  }),
  "number-nudge": bending("number-nudge", (o) => ({
    ...o,
    claims: o.claims.map((c) =>
      "quantity" in c.value ? { ...c, value: { ...c.value, quantity: `${c.value.quantity}1` } } : c,
    ),
  })),
  hallucinate: bending("hallucinate", (o) => ({
    ...o,
    claims: [
      ...o.claims,
      {
        key: "invented/fact",
        scope: "global",
        value: { text: "made up" },
        polarity: "affirmed",
        status: "settled",
        derivedFrom: o.claims[0]?.derivedFrom ?? ["none"],
      },
    ],
  })),
  "cite-revoked": bending("cite-revoked", (o, request) => {
    const invalid = [...request.context.selection.invalid.entries()].find(
      ([, why]) => why === "revoked" || why === "superseded",
    );
    return invalid ? { ...o, coldRefs: [...o.coldRefs, invalid[0]] } : o;
  }),
};

/** Where the language models are and how big they are; by default from the environment (CONTRACT §5). */
export interface ModelOptions {
  settings: ModelSettings;
  openAiBaseUrl?: string | undefined;
  /** The key, or how to read it when needed (the Lambdas read it from Secrets Manager). */
  openAiApiKey?: string | (() => Promise<string>) | undefined;
  bedrockEndpoint?: string | undefined;
  bedrockRegion?: string | undefined;
  /** Retries of throttling and 5xx (default: up to 6 attempts, from 250 ms doubling, jittered). */
  retry?: RetryOptions;
  /** Wraps AWS SDK clients (the Lambdas' X-Ray tracer). */
  instrument?: <T extends object>(client: T) => T;
}

export function modelOptionsFromEnv(): ModelOptions {
  return {
    settings: {
      contextTokens: env.MEMGATE_CONTEXT_TOKENS ?? DEFAULT_MODEL_SETTINGS.contextTokens,
      maxOutputTokens: env.MEMGATE_MAX_OUTPUT_TOKENS ?? DEFAULT_MODEL_SETTINGS.maxOutputTokens,
    },
    openAiBaseUrl: env.OPENAI_BASE_URL,
    openAiApiKey: env.OPENAI_API_KEY,
  };
}

/**
 * A generator by its name (CONTRACT §5): the deterministic consolidator and the test doubles by
 * their names; `openai:MODEL`, `bedrock:MODEL_ID` and `replay:DIR` as one prompt with every input;
 * `segmented:INNER` as segments; `record:DIR:INNER` keeps every answer of INNER in DIR. The
 * grammar is the runtime settings' (the tenant stack checks a tenant's model with it).
 */
export function modelNamed(name: string, options: ModelOptions = modelOptionsFromEnv()): ModelPort {
  const double = MODELS[name];
  if (double) return double;
  const parsed = languageModelName(name);
  const model = languageModel(parsed, options);
  return isSegmented(parsed)
    ? segmentedGenerator(model, options.settings)
    : onePromptGenerator(model, options.settings);
}

/** The judge a model name gives (MEMGATE_JUDGE): one language model, never segmented or a double. */
export function judgeNamed(name: string, options: ModelOptions = modelOptionsFromEnv()): JudgePort {
  return modelJudge(languageModelNamed(name, options, "a judge"), options.settings);
}

/**
 * One language model by its name (`openai:`, `bedrock:`, `replay:`, `record:`), never segmented or a
 * double: the judge, and the evaluation's answering and grading models (`role` names it in errors).
 */
export function languageModelNamed(
  name: string,
  options: ModelOptions = modelOptionsFromEnv(),
  role = "this model",
): LanguageModel {
  const parsed = languageModelName(name);
  if (isSegmented(parsed))
    throw new ModelNameError(
      `"${name}": ${role} is one model (openai:, bedrock:, replay:, record:), not segmented`,
    );
  return languageModel(parsed, options);
}

function languageModelName(name: string): LanguageModelName {
  const parsed = parseLanguageModelName(name);
  if (parsed === null)
    throw new ModelNameError(
      `unknown model "${name}"; known: ${MODEL_NAME_FORMS} (test doubles: ${Object.keys(MODELS).join(", ")})`,
    );
  return parsed;
}

function languageModel(name: LanguageModelName, options: ModelOptions): LanguageModel {
  switch (name.kind) {
    case "segmented":
      return languageModel(name.inner, options);
    case "record":
      return recordingModel(name.dir, languageModel(name.inner, options));
    case "replay":
      return replayModel(name.dir);
    case "openai":
      if (!options.openAiApiKey && !options.openAiBaseUrl)
        throw new Error(
          `"openai:${name.model}" needs OPENAI_API_KEY in the environment (or OPENAI_BASE_URL for a local server such as Ollama)`,
        );
      return openAiModel(name.model, {
        baseURL: options.openAiBaseUrl,
        apiKey: options.openAiApiKey,
        ...(options.retry ? { retry: options.retry } : {}),
      });
    case "bedrock":
      return bedrockModel(name.modelId, {
        endpoint: options.bedrockEndpoint,
        region: options.bedrockRegion,
        ...(options.retry ? { retry: options.retry } : {}),
        ...(options.instrument ? { instrument: options.instrument } : {}),
      });
  }
}
