import { setTimeout as sleep } from "node:timers/promises";
import { GenerationFailedError } from "#ports/model.ts";

/** How a model API's error is handled: asked again after a pause, or failed with a reason. */
export type Failure = { retry: true; why: string } | { retry: false; why: string };

export interface RetryOptions {
  /** Attempts in all, the first included. */
  attempts: number;
  /** The first pause; each next one doubles, with full jitter. */
  baseDelayMs: number;
  maxDelayMs: number;
  random?: () => number;
}

export const DEFAULT_RETRY: RetryOptions = { attempts: 6, baseDelayMs: 250, maxDelayMs: 8_000 };

/**
 * Calls `attempt` until it answers, retrying throttling, 5xx and dropped connections with
 * exponential backoff and full jitter. The signal is the generation's deadline: a pause never
 * outlives it, and once it fires the deadline's own error is what the caller sees. Anything the
 * classifier says not to retry (a 4xx, a context-length refusal) fails at once, saying why.
 */
export async function withRetries<T>(
  model: string,
  attempt: () => Promise<T>,
  classify: (error: unknown) => Failure,
  signal: AbortSignal,
  options: RetryOptions = DEFAULT_RETRY,
): Promise<T> {
  const random = options.random ?? Math.random;
  for (let tried = 1; ; tried++) {
    try {
      return await attempt();
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      const failure = classify(error);
      if (!failure.retry) throw new GenerationFailedError(`${model}: ${failure.why}`, { cause: error });
      if (tried >= options.attempts)
        throw new GenerationFailedError(`${model}: ${failure.why}, still after ${tried} attempts`, {
          cause: error,
        });
      const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (tried - 1));
      await sleep(Math.floor(random() * ceiling), undefined, { signal }).catch(() => {
        throw new GenerationFailedError(
          `${model}: ${failure.why}; the generation's deadline ended the retries after ${tried} attempts`,
          { cause: error },
        );
      });
    }
  }
}

/** Words model APIs use when a prompt does not fit the context window (OpenAI, vLLM, llama.cpp, Bedrock). */
const CONTEXT_LENGTH =
  /context[_ ]length|context window|maximum context|too many (input )?tokens|input is too long|prompt is too long|exceeds? the (model's )?(maximum|max)/i;

/** A 4xx that says the prompt was too long, told apart from other refusals. */
export function clientFailure(status: number, message: string, code?: string | null): Failure {
  if (code === "context_length_exceeded" || CONTEXT_LENGTH.test(message))
    return {
      retry: false,
      why: `the prompt does not fit the model's context window (${status}: ${message}); use segmented:<model> or a model with a larger context`,
    };
  return {
    retry: false,
    why: `the model API refused the request (${status}${code ? ` ${code}` : ""}: ${message})`,
  };
}
