import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { z } from "zod";
import { GenerationFailedError, type LanguageModel, type ModelAnswer, type ModelCall } from "#ports/model.ts";

/**
 * Recorded answers, keyed by the rendered prompt's hash: `record:DIR:<model>` asks the model and
 * keeps each answer as DIR/<hash>.json; `replay:DIR` answers from those files alone, so a real
 * model's answers can be recorded once and replayed in tests, and a user debugging a rejection
 * can replay exactly what the model said. A prompt that renders differently finds no answer.
 */
const Recording = z.object({
  promptHash: z.string(),
  kind: z.string(),
  model: z.string(),
  answer: z.object({
    text: z.string(),
    inputTokens: z.number().int().nonnegative(),
    outputTokens: z.number().int().nonnegative(),
  }),
});

function fileOf(dir: string, promptHash: string): string {
  return join(resolve(dir), `${promptHash.replace(/^sha256:/, "")}.json`);
}

export function replayModel(dir: string): LanguageModel {
  const name = `replay:${dir}`;
  return {
    name,
    async complete(call: ModelCall): Promise<ModelAnswer> {
      const file = fileOf(dir, call.promptHash);
      let text: string;
      try {
        text = await readFile(file, "utf8");
      } catch (error) {
        throw new GenerationFailedError(
          `${name}: no recorded answer for the ${call.kind} prompt ${call.promptHash} (${file}); record one with record:${dir}:<model>`,
          { cause: error },
        );
      }
      const recording = Recording.safeParse(JSON.parse(text));
      if (!recording.success)
        throw new GenerationFailedError(
          `${name}: ${file} is not a recorded answer (${recording.error.message})`,
        );
      return recording.data.answer;
    },
  };
}

export function recordingModel(dir: string, inner: LanguageModel): LanguageModel {
  return {
    name: inner.name,
    async complete(call: ModelCall, signal: AbortSignal): Promise<ModelAnswer> {
      const answer = await inner.complete(call, signal);
      await mkdir(resolve(dir), { recursive: true });
      const recording = { promptHash: call.promptHash, kind: call.kind, model: inner.name, answer };
      try {
        // The first answer to a prompt is the one kept: a recording is never overwritten.
        await writeFile(fileOf(dir, call.promptHash), `${JSON.stringify(recording, null, 2)}\n`, {
          flag: "wx",
        });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      return answer;
    },
  };
}
