import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { appendEvents } from "#app/append.ts";
import { run } from "#app/run.ts";
import { readInputs, takeSnapshot } from "#app/snapshot.ts";
import { countTokens } from "#domain/tokens.ts";
import { type StandInModel, startStandInModel } from "../../scripts/stand-in-model.ts";
import { honestAnswer, modelDeps, SUBJECT_EVENTS } from "./fixtures.ts";

/**
 * The stand-in model (scripts/stand-in-model.ts) parks each request until an answer file appears:
 * the official openai SDK talks to it unchanged, memgate's own request is written exactly as sent
 * (the prompt `memgate prompt` shows, the strict schema), and `record:` keeps the hand-written answer
 * for `replay:`.
 */
const started: StandInModel[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((model) => model.close()));
});

async function standIn(dir: string, keepAliveMs = 20): Promise<StandInModel> {
  const model = await startStandInModel({ dir, pollMs: 10, keepAliveMs, log: () => {} });
  started.push(model);
  return model;
}

async function parked(dir: string, n: number): Promise<Record<string, unknown>> {
  const file = join(dir, "requests", `${n}.json`);
  await expect.poll(() => existsSync(file), { timeout: 10_000, interval: 10 }).toBe(true);
  return JSON.parse(readFileSync(file, "utf8"));
}

describe("the stand-in model", () => {
  it("parks a request from the openai SDK, writes it as received, and answers with the answer file's text", async () => {
    const dir = mkdtempSync(join(tmpdir(), "memgate-stand-in-"));
    const model = await standIn(dir);
    const client = new OpenAI({ baseURL: model.url, apiKey: "no-key", maxRetries: 0 });
    const schema = {
      type: "object",
      properties: { summary: { type: "string" } },
      required: ["summary"],
      additionalProperties: false,
    };
    const completion = client.chat.completions.create({
      model: "by-hand",
      temperature: 0,
      messages: [
        { role: "system", content: "answer with one JSON object" },
        { role: "user", content: "Summarise: the budget is 12,500 USD." },
      ],
      response_format: { type: "json_schema", json_schema: { name: "SummaryAnswer", strict: true, schema } },
    });

    const request = await parked(dir, 1);
    expect(request.messages).toEqual([
      { role: "system", content: "answer with one JSON object" },
      { role: "user", content: "Summarise: the budget is 12,500 USD." },
    ]);
    expect(request.response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "SummaryAnswer", strict: true, schema },
    });
    expect(readFileSync(join(dir, "requests", "1.md"), "utf8")).toContain(
      "Summarise: the budget is 12,500 USD.",
    );
    // Spaces keep the connection alive while the answer is written; the SDK still reads the JSON.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const answer = '{"summary": "The budget is 12,500 USD."}\n';
    writeFileSync(join(dir, "answers", "1.json"), answer);

    const received = await completion;
    expect(received.choices[0]?.message.content).toBe(answer);
    expect(received.usage?.completion_tokens).toBe(countTokens(answer));
    expect(received.usage?.prompt_tokens).toBe(
      countTokens("answer with one JSON object") + countTokens("Summarise: the budget is 12,500 USD."),
    );
  });

  it("a request sent again (a retry) is the same request, also after a restart; a new one gets the next number", async () => {
    const dir = mkdtempSync(join(tmpdir(), "memgate-stand-in-"));
    const first = await standIn(dir);
    const ask = (url: string, content: string) =>
      new OpenAI({ baseURL: url, apiKey: "no-key", maxRetries: 0 }).chat.completions.create({
        model: "by-hand",
        messages: [{ role: "user", content }],
      });
    const pending = ask(first.url, "one");
    await parked(dir, 1);
    writeFileSync(join(dir, "answers", "1.txt"), "first answer");
    expect((await pending).choices[0]?.message.content).toBe("first answer");

    const restarted = await standIn(dir);
    expect((await ask(restarted.url, "one")).choices[0]?.message.content).toBe("first answer");
    const second = ask(restarted.url, "two");
    await parked(dir, 2);
    writeFileSync(join(dir, "answers", "2.txt"), "second answer");
    expect((await second).choices[0]?.message.content).toBe("second answer");
    expect(readdirSync(join(dir, "requests")).sort()).toEqual(["1.json", "1.md", "2.json", "2.md"]);
  });

  it("memgate's own request is parked as sent, record: keeps the hand-written answer, and replay: gives it back", async () => {
    const dir = mkdtempSync(join(tmpdir(), "memgate-stand-in-"));
    const recordings = mkdtempSync(join(tmpdir(), "memgate-recorded-"));
    const model = await standIn(dir);
    const { deps } = modelDeps(
      `record:${recordings}:openai:by-hand`,
      { openAiBaseUrl: model.url },
      { generationTimeoutMs: 30_000 },
    );
    await appendEvents(deps, "alpha", SUBJECT_EVENTS);
    const snapshot = await takeSnapshot(deps, "alpha");
    const preview = deps.model.preview?.({
      snapshot,
      context: (await readInputs(deps, "alpha", snapshot.highWater)).context,
      prompt: deps.prompt,
    });
    const outcome = run(deps, snapshot);

    const request = (await parked(dir, 1)) as {
      model: string;
      messages: Array<{ role: string; content: string }>;
      response_format: { json_schema: { name: string; strict: boolean } };
    };
    expect(request.model).toBe("by-hand");
    expect(request.messages).toEqual([
      { role: "system", content: preview?.[0]?.system },
      { role: "user", content: preview?.[0]?.prompt },
    ]);
    expect(request.response_format.json_schema).toMatchObject({ name: "ConsolidationOutput", strict: true });
    writeFileSync(join(dir, "answers", "1.json"), JSON.stringify(await honestAnswer(deps, "alpha")));

    const published = await outcome;
    expect(published.status).toBe("PUBLISHED");
    const recorded = readdirSync(recordings);
    expect(recorded).toEqual([`${preview?.[0]?.hash.replace("sha256:", "")}.json`]);

    const replayed = modelDeps(`replay:${recordings}`);
    await appendEvents(replayed.deps, "alpha", SUBJECT_EVENTS);
    const again = await run(replayed.deps, await takeSnapshot(replayed.deps, "alpha"));
    expect(again.status).toBe("PUBLISHED");
  });
});
