/**
 * The runtime's settings in one place: the environment variables every runtime kind reads, the
 * grammar of model names, the review page's paths, the limits of one request and the bundling
 * options. The CDK stack imports this module (it names the variables it sets, checks a tenant's
 * model with the same grammar, leaves the same paths unauthenticated and bundles with the same
 * options), so it is pure: constants and parsers, no SDK, and nothing read at import.
 */

export { BUNDLE_TARGETS, CLI_BUNDLE, LAMBDA_BUNDLE, REQUIRE_BANNER, TEXT_LOADERS } from "./bundling.mjs";

/** The environment variables memgate reads (CONTRACT §5 and the tenant stack's functions). */
export const ENV = {
  home: "MEMGATE_HOME",
  failpoints: "MEMGATE_FAILPOINTS",
  tenant: "MEMGATE_TENANT",
  table: "MEMGATE_TABLE",
  bucket: "MEMGATE_BUCKET",
  queueUrl: "MEMGATE_QUEUE_URL",
  model: "MEMGATE_MODEL",
  prompt: "MEMGATE_PROMPT",
  generationTimeoutMs: "MEMGATE_GENERATION_TIMEOUT_MS",
  budgetTokens: "MEMGATE_BUDGET_TOKENS",
  token: "MEMGATE_TOKEN",
  roleTokens: "MEMGATE_ROLE_TOKENS",
  contextTokens: "MEMGATE_CONTEXT_TOKENS",
  maxOutputTokens: "MEMGATE_MAX_OUTPUT_TOKENS",
  repairAttempts: "MEMGATE_REPAIR_ATTEMPTS",
  judge: "MEMGATE_JUDGE",
  openAiKeySecret: "MEMGATE_OPENAI_KEY_SECRET",
  openAiBaseUrl: "OPENAI_BASE_URL",
  openAiApiKey: "OPENAI_API_KEY",
  debug: "MEMGATE_DEBUG",
} as const;

/** What a tenant stack sets on each of its functions (the Lambda root parses the same names). */
export interface LambdaEnvironmentValues {
  tenant: string;
  table: string;
  bucket: string;
  queueUrl: string;
  model: string;
  generationTimeoutMs: number;
  openAiBaseUrl?: string | undefined;
  contextTokens?: number | undefined;
  maxOutputTokens?: number | undefined;
  repairAttempts?: number | undefined;
  budgetTokens?: number | undefined;
  judge?: string | undefined;
  openAiKeySecret?: string | undefined;
}

const LAMBDA_SETTINGS = [
  "tenant",
  "table",
  "bucket",
  "queueUrl",
  "model",
  "generationTimeoutMs",
  "openAiBaseUrl",
  "contextTokens",
  "maxOutputTokens",
  "repairAttempts",
  "budgetTokens",
  "judge",
  "openAiKeySecret",
] as const satisfies ReadonlyArray<keyof LambdaEnvironmentValues>;

/** A Lambda's environment by the names above; settings left out are not set. */
export function lambdaEnvironment(values: LambdaEnvironmentValues): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const setting of LAMBDA_SETTINGS) {
    const value = values[setting];
    if (value !== undefined) environment[ENV[setting]] = String(value);
  }
  return environment;
}

/**
 * The review page's static files (`GET /review`): they hold no memory, so they are the only paths
 * served without a token (`memgate serve --token`) or an authorizer (the tenant stack).
 */
export const REVIEW_PAGE_PATHS = {
  page: "/review",
  script: "/review/app.js",
  style: "/review/app.css",
} as const;

/** CONTRACT §6's limits on one request. */
export const MAX_EVENTS_PER_REQUEST = 1000;
export const MAX_REQUEST_BYTES = 5 * 1024 * 1024;

// ---- Model names (CONTRACT §5) ----

/**
 * The model used when none is named: the deterministic consolidator, which names itself so
 * (`DETERMINISTIC_MODEL` in domain/consolidator.ts; the domain imports nothing from here).
 */
export const DEFAULT_MODEL = "deterministic-v1";

/** The forms a model name takes, as help texts and errors list them. */
export const MODEL_NAME_FORMS =
  "deterministic-v1, openai:MODEL, bedrock:MODEL_ID, segmented:INNER, replay:DIR, record:DIR:INNER";

/** A language model's name, parsed: what `--model`, MEMGATE_MODEL and MEMGATE_JUDGE name. */
export type LanguageModelName =
  | { kind: "openai"; model: string }
  | { kind: "bedrock"; modelId: string }
  | { kind: "replay"; dir: string }
  | { kind: "record"; dir: string; inner: LanguageModelName }
  | { kind: "segmented"; inner: LanguageModelName };

/** A model name that breaks the grammar; the message says how to write it. */
export class ModelNameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ModelNameError";
  }
}

/**
 * Parses `openai:MODEL`, `bedrock:MODEL_ID`, `replay:DIR`, `record:DIR:INNER` and
 * `segmented:INNER` (segmented once at most); null when the name has none of these prefixes (the
 * deterministic consolidator and the test doubles are names, not forms).
 */
export function parseLanguageModelName(name: string): LanguageModelName | null {
  const [prefix, ...restParts] = name.split(":");
  const rest = restParts.join(":");
  const needs = (what: string) => {
    if (rest === "") throw new ModelNameError(`"${name}" names no ${what}: write ${prefix}:<${what}>`);
  };
  switch (prefix) {
    case "segmented": {
      needs("model");
      const inner = mustParse(rest);
      if (isSegmented(inner)) throw new ModelNameError(`"${name}": segmented once is enough`);
      return { kind: "segmented", inner };
    }
    case "record": {
      const [dir, ...innerParts] = restParts;
      if (!dir || innerParts.length === 0)
        throw new ModelNameError(
          `"${name}" must be record:DIR:<model>, e.g. record:answers:openai:gpt-4o-mini`,
        );
      return { kind: "record", dir, inner: mustParse(innerParts.join(":")) };
    }
    case "replay":
      needs("folder");
      return { kind: "replay", dir: rest };
    case "openai":
      needs("model");
      return { kind: "openai", model: rest };
    case "bedrock":
      needs("model id");
      return { kind: "bedrock", modelId: rest };
    default:
      return null;
  }
}

function mustParse(name: string): LanguageModelName {
  const parsed = parseLanguageModelName(name);
  if (parsed === null) throw new ModelNameError(`unknown model "${name}"; known: ${MODEL_NAME_FORMS}`);
  return parsed;
}

/** Whether the name answers in segments (directly, or recorded from a segmented model). */
export function isSegmented(name: LanguageModelName): boolean {
  return name.kind === "segmented" || (name.kind === "record" && isSegmented(name.inner));
}

/** Bedrock ids and OpenAI model names a tenant may deploy: no spaces, quotes or other surprises. */
const DEPLOYABLE_BEDROCK_ID = /^[\w.:-]+$/;
const DEPLOYABLE_OPENAI_MODEL = /^[\w.:/-]+$/;

function parsedOrNull(name: string): LanguageModelName | null {
  try {
    return parseLanguageModelName(name);
  } catch {
    return null;
  }
}

function isDeployableLanguageModel(name: LanguageModelName): boolean {
  if (name.kind === "bedrock") return DEPLOYABLE_BEDROCK_ID.test(name.modelId);
  if (name.kind === "openai") return DEPLOYABLE_OPENAI_MODEL.test(name.model);
  return false;
}

/** A tenant's writer: deterministic-v1, or bedrock:MODEL_ID / openai:MODEL, segmented or not. */
export function isDeployableModel(name: string): boolean {
  if (name === DEFAULT_MODEL) return true;
  const parsed = parsedOrNull(name);
  if (parsed === null) return false;
  return isDeployableLanguageModel(parsed.kind === "segmented" ? parsed.inner : parsed);
}

/** A tenant's judge: one language model, bedrock:MODEL_ID or openai:MODEL (never segmented). */
export function isDeployableJudge(name: string): boolean {
  const parsed = parsedOrNull(name);
  return parsed !== null && isDeployableLanguageModel(parsed);
}

/** The Bedrock model id a (possibly segmented) model name calls, if it calls one. */
export function bedrockModelId(name: string | undefined): string | undefined {
  const parsed = name === undefined ? null : parsedOrNull(name);
  const model = parsed?.kind === "segmented" ? parsed.inner : parsed;
  return model?.kind === "bedrock" ? model.modelId : undefined;
}

/** Whether a (possibly segmented) model name calls an OpenAI-compatible endpoint. */
export function callsOpenAiModel(name: string | undefined): boolean {
  const parsed = name === undefined ? null : parsedOrNull(name);
  const model = parsed?.kind === "segmented" ? parsed.inner : parsed;
  return model?.kind === "openai";
}
