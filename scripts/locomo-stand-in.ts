// Hands the requests `memgate eval --locomo` parks at the stand-in model (scripts/stand-in-model.ts)
// to stand-ins in batches, and puts their answers back, each under its own request's number.
//
//   npx tsx scripts/locomo-stand-in.ts batch STAND_IN_DIR LOCOMO.json BATCH_DIR [--every N] [--skip BATCH_FILE,…] [--from N]
//   npx tsx scripts/locomo-stand-in.ts collect BATCH_DIR STAND_IN_DIR
//
// `batch` writes one file a stand-in reads whole (BATCH_DIR/<name>.md) for the requests not answered
// yet: an answering request from memory is batched only with requests about other conversations (at
// most one a conversation, so no request's material can answer another's question); the requests
// that answer from the whole conversation are batched per conversation, the conversation written
// once (every such request holds it whole, and only its question differs); every other request
// (a consolidation, a grading batch) is a file of its own. Each file says where the answer goes:
// BATCH_DIR/answers/<name>.json, one JSON object mapping each request's number to its answer object.
// With --every N, an answering request is batched only when its question is one `memgate eval
// --every N` asks (the 1st, 1 + N-th, … of its conversation); the others wait. --skip leaves out
// the requests of batch files already handed out (their answers are on the way); --from N the
// requests parked before the N-th (an earlier run's, which no run waits for any more).
// `collect` writes each answer, as the stand-in wrote it, to STAND_IN_DIR/answers/<n>.json.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseLocomo } from "#io/locomo-file.ts";

interface Parked {
  n: number;
  system: string;
  user: string;
  schema: unknown;
  schemaName: string;
}

const MEMORY_PER_BATCH = 5;
const FULL_PER_BATCH = 40;

function parked(dir: string): Parked[] {
  const answered = new Set(
    existsSync(join(dir, "answers"))
      ? readdirSync(join(dir, "answers")).map((name) => name.split(".")[0])
      : [],
  );
  return readdirSync(join(dir, "requests"))
    .filter((name) => /^\d+\.json$/.test(name) && !answered.has(name.split(".")[0]))
    .map((name) => {
      const body = JSON.parse(readFileSync(join(dir, "requests", name), "utf8"));
      const messages = body.messages as Array<{ role: string; content: string }>;
      return {
        n: Number(name.split(".")[0]),
        system: messages.find((m) => m.role === "system")?.content ?? "",
        user: messages.find((m) => m.role === "user")?.content ?? "",
        schema: body.response_format?.json_schema?.schema,
        schemaName: body.response_format?.json_schema?.name ?? "",
      };
    })
    .sort((a, b) => a.n - b.n);
}

function section(user: string, name: string): string {
  const start = user.indexOf(`## ${name}\n\n`);
  if (start < 0) return "";
  const from = start + name.length + 5;
  const end = user.indexOf("\n\n## ", from);
  return user.slice(from, end < 0 ? undefined : end);
}

const schemaBlock = (request: Parked) =>
  `The answer is one JSON object of the schema ${request.schemaName} (strict):\n\n\`\`\`json\n${JSON.stringify(request.schema, null, 2)}\n\`\`\``;

function whole(request: Parked): string {
  return [
    `## Request ${request.n}`,
    "",
    "### System message",
    "",
    request.system,
    "",
    "### User message",
    "",
    request.user,
    "",
    schemaBlock(request),
  ].join("\n");
}

function batchCommand(
  standIn: string,
  locomoFile: string,
  out: string,
  every: number,
  skip: Set<number>,
  from: number,
) {
  const conversations = parseLocomo(readFileSync(locomoFile, "utf8"), locomoFile);
  const conversationOf = (material: string) =>
    conversations.find((c) => c.speakers.every((speaker) => material.includes(speaker)));
  const asked = (id: string, question: string) =>
    (conversations.find((c) => c.id === id)?.questions ?? []).some(
      (q, index) => index % every === 0 && q.question.trim() === question,
    );
  const requests = parked(standIn).filter((request) => request.n >= from && !skip.has(request.n));
  mkdirSync(join(out, "answers"), { recursive: true });
  const memory = new Map<string, Parked[]>();
  const full = new Map<string, Parked[]>();
  const alone: Parked[] = [];
  for (const request of requests) {
    if (!request.system.includes("answer-v1")) {
      alone.push(request);
      continue;
    }
    const material = section(request.user, "Material");
    const target = material.startsWith("# memgate recall") ? memory : full;
    const id = conversationOf(material)?.id ?? "?";
    if (!asked(id, section(request.user, "Question").trim())) continue;
    target.set(id, [...(target.get(id) ?? []), request]);
  }
  const files: Array<{ name: string; text: string }> = [];
  const answerNote = (name: string, ns: number[]) =>
    `Write your answers to ${join(out, "answers", `${name}.json`)}: one JSON object whose keys are the request numbers (${ns.join(", ")}) and whose values are your answer objects, each exactly as you would answer that request alone.`;
  // Memory: round-robin over conversations, at most one request of each per file.
  const queues = [...memory.values()];
  for (let k = 0; queues.some((q) => q.length > 0); k++) {
    const batch: Parked[] = [];
    for (const queue of queues) {
      const next = queue.shift();
      if (next) batch.push(next);
      if (batch.length === MEMORY_PER_BATCH) break;
    }
    const name = `memory-${String(k + 1).padStart(3, "0")}`;
    files.push({
      name,
      text: [
        `# ${batch.length} separate requests`,
        "",
        "Each request below is separate: answer each one only from what that request itself gives you, as if you saw no other.",
        answerNote(
          name,
          batch.map((r) => r.n),
        ),
        "",
        ...batch.map(whole),
      ].join("\n"),
    });
  }
  for (const [id, list] of full) {
    for (let i = 0; i < list.length; i += FULL_PER_BATCH) {
      const batch = list.slice(i, i + FULL_PER_BATCH);
      const first = batch[0] as Parked;
      const name = `full-${id}-${String(i / FULL_PER_BATCH + 1).padStart(2, "0")}`;
      const template = first.user.replace(section(first.user, "Question"), "{{question}}");
      files.push({
        name,
        text: [
          `# ${batch.length} requests that differ only in their question`,
          "",
          "Every request below has the same system message and the same user message, but for its question, which replaces {{question}} in the user message; answer each one on its own.",
          answerNote(
            name,
            batch.map((r) => r.n),
          ),
          "",
          "### System message",
          "",
          first.system,
          "",
          "### User message",
          "",
          template,
          "",
          schemaBlock(first),
          "",
          "## The questions",
          "",
          ...batch.map((r) => `- Request ${r.n}: ${section(r.user, "Question").trim()}`),
        ].join("\n"),
      });
    }
  }
  for (const request of alone) {
    const name = `request-${request.n}`;
    files.push({ name, text: [answerNote(name, [request.n]), "", whole(request)].join("\n") });
  }
  for (const file of files) writeFileSync(join(out, `${file.name}.md`), `${file.text}\n`);
  process.stdout.write(`${files.length} batch files for ${requests.length} requests in ${out}\n`);
}

function collectCommand(out: string, standIn: string) {
  mkdirSync(join(standIn, "answers"), { recursive: true });
  let written = 0;
  for (const name of readdirSync(join(out, "answers")).filter((f) => f.endsWith(".json"))) {
    const answers = JSON.parse(readFileSync(join(out, "answers", name), "utf8")) as Record<string, unknown>;
    for (const [n, answer] of Object.entries(answers)) {
      if (!/^\d+$/.test(n)) throw new Error(`${name}: "${n}" is not a request number`);
      const target = join(standIn, "answers", `${n}.json`);
      if (existsSync(target)) continue;
      writeFileSync(target, typeof answer === "string" ? answer : JSON.stringify(answer));
      written++;
    }
  }
  process.stdout.write(`${written} answers written to ${join(standIn, "answers")}\n`);
}

/** The request numbers a batch file hands out (its answer note lists them). */
function requestNumbersIn(batch: string): number[] {
  const listed = /whose keys are the request numbers \(([\d, ]+)\)/u.exec(batch)?.[1];
  if (listed === undefined) throw new Error("not a batch file: it lists no request numbers");
  return listed.split(",").map((n) => Number(n.trim()));
}

const [command, ...args] = process.argv.slice(2);
const everyAt = args.indexOf("--every");
const every = everyAt >= 0 ? Number(args.splice(everyAt, 2)[1]) : 1;
const fromAt = args.indexOf("--from");
const from = fromAt >= 0 ? Number(args.splice(fromAt, 2)[1]) : 1;
const skipAt = args.indexOf("--skip");
const skip = new Set(
  (skipAt >= 0 ? (args.splice(skipAt, 2)[1] ?? "").split(",") : [])
    .filter((file) => file !== "")
    .flatMap((file) => requestNumbersIn(readFileSync(file, "utf8"))),
);
if (command === "batch" && args.length === 3 && Number.isInteger(every) && every >= 1)
  batchCommand(args[0] as string, args[1] as string, args[2] as string, every, skip, from);
else if (command === "collect" && args.length === 2) collectCommand(args[0] as string, args[1] as string);
else {
  process.stderr.write(
    "usage: npx tsx scripts/locomo-stand-in.ts batch STAND_IN_DIR LOCOMO.json BATCH_DIR [--every N] [--skip BATCH_FILE,…] [--from N] | collect BATCH_DIR STAND_IN_DIR\n",
  );
  process.exit(2);
}
