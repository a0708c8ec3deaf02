import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evaluateLocomo } from "#eval/locomo.ts";
import { memgate } from "#harness/cli.ts";
import { type ModelServer, type ReceivedRequest, startModelServer } from "#harness/model-servers.ts";
import { depsOverStore, temporaryStore } from "#harness/pipeline-builders.ts";
import { locomoDateTime, locomoTranscript, parseLocomo } from "#io/locomo-file.ts";
import { InputError } from "#ports/errors.ts";
import type { LanguageModel, ModelCall } from "#ports/model.ts";

/**
 * The LoCoMo evaluation: a LoCoMo file read as notes and questions, recall's text for each question
 * beside the whole conversation, both answered by one model and graded blind by another, and the
 * figures the report gives counted from the answers.
 */
const SAMPLE = join(import.meta.dirname, "../fixtures/locomo/sample.json");
const sampleText = readFileSync(SAMPLE, "utf8");

describe("a LoCoMo file", () => {
  const [conversation] = parseLocomo(sampleText, "sample.json");
  if (!conversation) throw new Error("the sample holds one conversation");

  it("is read as notes: dia_id, the session's date-time, the speaker, a shared photo's caption", () => {
    expect(conversation.events).toHaveLength(8);
    expect(conversation.events[2]).toEqual({
      eventId: "D1:3",
      kind: "note",
      text: "Nice! I started a ceramics course this month. [shares a photo: a photo of a blue clay bowl]",
      trust: "user",
      source: "Ines",
      occurredAt: "2023-01-20T16:04:00",
    });
    expect(conversation.events[5]?.occurredAt).toBe("2023-03-03T10:30:00");
  });

  it("keeps the questions of categories 1-4 with their evidence turns, however the dataset wrote them", () => {
    expect(conversation.questions.map((q) => [q.id, q.category, q.evidence])).toEqual([
      ["conv-sample/q1", 2, ["D1:2"]],
      ["conv-sample/q2", 4, ["D1:5"]],
      ["conv-sample/q3", 1, ["D1:5", "D2:2"]],
      ["conv-sample/q4", 3, ["D2:1"]],
    ]);
  });

  it("reads the dataset's date-times, and no impossible one", () => {
    expect(locomoDateTime("1:56 pm on 8 May, 2023")).toBe("2023-05-08T13:56:00");
    expect(locomoDateTime("12:09 am on 1 January, 2024")).toBe("2024-01-01T00:09:00");
    expect(locomoDateTime("12:30 pm on 29 February, 2024")).toBe("2024-02-29T12:30:00");
    expect(locomoDateTime("4:04 pm on 29 February, 2023")).toBeNull();
    expect(locomoDateTime("13:04 pm on 8 May, 2023")).toBeNull();
  });

  it("is refused with the sample and the field named when it is not one", () => {
    expect(() => parseLocomo("{", "x.json")).toThrow(InputError);
    const broken = JSON.parse(sampleText);
    delete broken[0].conversation.session_2_date_time;
    expect(() => parseLocomo(JSON.stringify(broken), "x.json")).toThrow(/conv-sample: session_2_date_time/);
  });

  it("reads whole as a transcript: each session under its date, each turn with its speaker", () => {
    const transcript = locomoTranscript(conversation);
    expect(transcript.split("\n").slice(0, 2)).toEqual([
      "Session 1, 4:04 pm on 20 January, 2023:",
      "Ines: Hi Tomas! Anything new?",
    ]);
  });
});

/** An extractive reader: the material's line sharing the most words with the question. */
const reader: LanguageModel = {
  name: "reader",
  async complete(call: ModelCall) {
    const material = /## Material\n\n([\s\S]*)\n\n## Question/.exec(call.prompt)?.[1] ?? "";
    const question = /## Question\n\n(.*)/.exec(call.prompt)?.[1] ?? "";
    const words = new Set(question.toLowerCase().match(/\p{L}{4,}/gu) ?? []);
    const best = material
      .split("\n")
      .map((line) => ({
        line,
        shared: (line.toLowerCase().match(/\p{L}{4,}/gu) ?? []).filter((w) => words.has(w)).length,
      }))
      .sort((a, b) => b.shared - a.shared)[0];
    return { text: JSON.stringify({ answer: best?.line ?? "" }), inputTokens: 1, outputTokens: 1 };
  },
};
const gradeCalls: ModelCall[] = [];
/** A grader: CORRECT when the answer holds the gold answer's first word. */
const grader: LanguageModel = {
  name: "grader",
  async complete(call: ModelCall) {
    gradeCalls.push(call);
    const grades = [...call.prompt.matchAll(/### (\S+)\nQuestion: .*\nGold answer: (.*)\nAnswer: (.*)/g)].map(
      ([, id, gold, answer]) => ({
        id,
        label: (answer ?? "").toLowerCase().includes((gold ?? "").split(" ")[0]?.toLowerCase() ?? "?")
          ? "CORRECT"
          : "WRONG",
        reason: "first word",
      }),
    );
    return { text: JSON.stringify({ grades }), inputTokens: 1, outputTokens: 1 };
  },
};

describe("the evaluation", () => {
  const store = temporaryStore("locomo");
  afterAll(() => store.close());

  it("asks each question from memory and from the whole conversation, grades blind, and counts what it says", async () => {
    const deps = depsOverStore(store);
    const report = await evaluateLocomo(deps, parseLocomo(sampleText, "sample.json"), {
      budget: 300,
      answerModel: reader,
      gradeModel: grader,
      settings: { contextTokens: 100_000, maxOutputTokens: 500 },
      concurrency: 3,
    });
    expect(report.consolidations).toEqual([
      expect.objectContaining({ conversation: "conv-sample", status: "PUBLISHED", events: 8 }),
    ]);
    expect(report.perQuestion).toHaveLength(4);
    for (const answer of report.perQuestion) {
      expect(answer.answers.memory).toBeDefined();
      expect(answer.answers.full).toBeDefined();
      expect(answer.memoryTokens).toBeLessThanOrEqual(300);
      expect(answer.fullTokens).toBeGreaterThan(100);
    }
    // The grader saw both modes mixed, under ids that do not say which is which.
    expect(gradeCalls.length).toBe(1);
    expect(gradeCalls[0]?.prompt).not.toMatch(/memory|full|conv-sample\/q/);
    const overall = report.byCategory.overall;
    const correct = (mode: "memory" | "full") =>
      report.perQuestion.filter((a) => a.labels[mode] === "CORRECT").length / report.perQuestion.length;
    expect(overall.memoryAccuracy).toBe(correct("memory"));
    expect(overall.fullAccuracy).toBe(correct("full"));
    expect(overall.evidenceServed).toBe(report.perQuestion.filter((a) => a.evidenceServed).length / 4);
    expect(report.byCategory.temporal.questions).toBe(1);
    // The served text for "Where does Ines's grandmother live?" holds the turn that answers it.
    expect(report.perQuestion[1]?.evidenceServed).toBe(true);
    expect(report.perQuestion[1]?.labels.memory).toBe("CORRECT");
  });
});

describe("memgate eval --locomo", () => {
  let server: ModelServer;
  const answerFor = (request: ReceivedRequest) => {
    if (request.system.includes("grade-v1")) {
      const ids = [...request.prompt.matchAll(/### (\S+)/g)].map((m) => m[1]);
      return { answer: { grades: ids.map((id) => ({ id, label: "CORRECT", reason: "scripted" })) } };
    }
    return { answer: { answer: "Porto" } };
  };
  beforeAll(async () => {
    server = await startModelServer("openai", answerFor);
  });
  afterAll(() => server.close());

  it("records every answer over the OpenAI wire, replays them offline, and prints the figures", async () => {
    const recordings = mkdtempSync(join(tmpdir(), "memgate-locomo-recorded-"));
    const env = { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-test" };
    const args = ["eval", "--locomo", SAMPLE, "--budget", "300", "--json"];
    const recorded = await memgate(
      [
        ...args,
        "--answer-model",
        `record:${recordings}:openai:stand-in`,
        "--judge-model",
        `record:${recordings}:openai:stand-in`,
      ],
      { env },
    );
    expect(recorded.code, recorded.stderr).toBe(0);
    const first = JSON.parse(recorded.stdout);
    expect(first.byCategory.overall).toMatchObject({ questions: 4, memoryAccuracy: 1, fullAccuracy: 1 });
    // Eight answers and one grading call, each kept under its prompt's hash.
    expect(readdirSync(recordings)).toHaveLength(9);
    const sent = server.requests.length;
    const replayed = await memgate(
      [...args, "--answer-model", `replay:${recordings}`, "--judge-model", `replay:${recordings}`],
      { env: { OPENAI_BASE_URL: "http://127.0.0.1:9", OPENAI_API_KEY: "" } },
    );
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(JSON.parse(replayed.stdout)).toEqual(first);
    expect(server.requests.length).toBe(sent);
    expect(first.prompt).toBe("consolidate-v8");
    const v4 = await memgate([...args, "--prompt", "consolidate-v4"]);
    expect(JSON.parse(v4.stdout).prompt).toBe("consolidate-v4");
    const table = await memgate(["eval", "--locomo", SAMPLE, "--budget", "300"]);
    expect(table.stdout).toMatch(/overall +4 +0 +— +— +\d+ +\d+ +[\d.]+ +[\d.]+/);
  });

  it("with --every, answers and judges only every Nth question and measures evidence over all", async () => {
    const recordings = mkdtempSync(join(tmpdir(), "memgate-locomo-every-"));
    const model = `record:${recordings}:openai:stand-in`;
    const env = { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-test" };
    const sent = server.requests.length;
    const run = await memgate(
      ["eval", "--locomo", SAMPLE, "--every", "3", "--answer-model", model, "--judge-model", model, "--json"],
      { env },
    );
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.every).toBe(3);
    // Questions 1 and 4 of the sample: two answers each, one grading call.
    expect(server.requests.length - sent).toBe(5);
    expect(report.byCategory.overall).toMatchObject({ questions: 4, judged: 2, memoryAccuracy: 1 });
    expect(report.byCategory.temporal).toMatchObject({ questions: 1, judged: 1 });
    expect(report.byCategory["single-hop"]).toMatchObject({ questions: 1, judged: 0, memoryAccuracy: null });
    const answered = report.perQuestion.filter((q: { labels: object }) => Object.keys(q.labels).length > 0);
    expect(answered.map((q: { id: string }) => q.id)).toEqual(["conv-sample/q1", "conv-sample/q4"]);
    const zero = await memgate(["eval", "--locomo", SAMPLE, "--every", "0"]);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toMatch(/--every must be 1 or more/);
  });

  it("refuses an answering model without a judge, and an unknown conversation", async () => {
    const alone = await memgate(["eval", "--locomo", SAMPLE, "--answer-model", "replay:/nowhere"]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/--answer-model and --judge-model go together/);
    const unknown = await memgate(["eval", "--locomo", SAMPLE, "--conversations", "conv-99"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/conv-99 not in/);
  });
});
