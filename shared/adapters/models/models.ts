import { modelJudge } from "#app/judge.ts";
import { DEFAULT_MODEL_SETTINGS, type ModelSettings, onePromptGenerator } from "#app/one-prompt.ts";
import { segmentedGenerator } from "#app/segmented.ts";
import { consolidate, DETERMINISTIC_MODEL } from "#domain/consolidator.ts";
import type { ConsolidationOutput } from "#domain/schemas.ts";
import type { JudgePort } from "#ports/judge.ts";
import type { Generation, LanguageModel, ModelPort, ModelRequest } from "#ports/model.ts";
import { env } from "#runtime/config.ts";
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

const MODEL_NAMES =
  "deterministic-v1, openai:MODEL, bedrock:MODEL_ID, segmented:INNER, replay:DIR, record:DIR:INNER";

/**
 * A generator by its name (CONTRACT §5): the deterministic consolidator and the test doubles by
 * their names; `openai:MODEL`, `bedrock:MODEL_ID` and `replay:DIR` as one prompt with every input;
 * `segmented:INNER` as segments; `record:DIR:INNER` keeps every answer of INNER in DIR.
 */
export function modelNamed(name: string, options: ModelOptions = modelOptionsFromEnv()): ModelPort {
  const double = MODELS[name];
  if (double) return double;
  const { segmented, model } = languageModel(name, options);
  return segmented
    ? segmentedGenerator(model, options.settings)
    : onePromptGenerator(model, options.settings);
}

/** The judge a model name gives (MEMGATE_JUDGE): one language model, never segmented or a double. */
export function judgeNamed(name: string, options: ModelOptions = modelOptionsFromEnv()): JudgePort {
  const { segmented, model } = languageModel(name, options);
  if (segmented)
    throw new Error(`"${name}": a judge is one model (openai:, bedrock:, replay:, record:), not segmented`);
  return modelJudge(model, options.settings);
}

function languageModel(name: string, options: ModelOptions): { segmented: boolean; model: LanguageModel } {
  const [prefix, ...restParts] = name.split(":");
  const rest = restParts.join(":");
  const needs = (what: string) => {
    if (rest === "") throw new Error(`"${name}" names no ${what}: write ${prefix}:<${what}>`);
  };
  switch (prefix) {
    case "segmented": {
      needs("model");
      const inner = languageModel(rest, options);
      if (inner.segmented) throw new Error(`"${name}": segmented once is enough`);
      return { segmented: true, model: inner.model };
    }
    case "record": {
      const [dir, ...innerParts] = restParts;
      if (!dir || innerParts.length === 0)
        throw new Error(`"${name}" must be record:DIR:<model>, e.g. record:answers:openai:gpt-4o-mini`);
      const inner = languageModel(innerParts.join(":"), options);
      return { segmented: inner.segmented, model: recordingModel(dir, inner.model) };
    }
    case "replay":
      needs("folder");
      return { segmented: false, model: replayModel(rest) };
    case "openai":
      needs("model");
      if (!options.openAiApiKey && !options.openAiBaseUrl)
        throw new Error(
          `"${name}" needs OPENAI_API_KEY in the environment (or OPENAI_BASE_URL for a local server such as Ollama)`,
        );
      return {
        segmented: false,
        model: openAiModel(rest, {
          baseURL: options.openAiBaseUrl,
          apiKey: options.openAiApiKey,
          ...(options.retry ? { retry: options.retry } : {}),
        }),
      };
    case "bedrock":
      needs("model id");
      return {
        segmented: false,
        model: bedrockModel(rest, {
          endpoint: options.bedrockEndpoint,
          region: options.bedrockRegion,
          ...(options.retry ? { retry: options.retry } : {}),
          ...(options.instrument ? { instrument: options.instrument } : {}),
        }),
      };
    default:
      throw new Error(
        `unknown model "${name}"; known: ${MODEL_NAMES} (test doubles: ${Object.keys(MODELS).join(", ")})`,
      );
  }
}
