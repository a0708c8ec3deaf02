// A stand-in for a language model: an OpenAI-compatible Chat Completions server on loopback that
// parks each request it receives until a person (or another model) writes the answer by hand.
//
//   npx tsx scripts/stand-in-model.ts DIR [--port 8788]
//   OPENAI_BASE_URL=http://127.0.0.1:8788/v1 MEMGATE_GENERATION_TIMEOUT_MS=14400000 \
//     memgate generate snapshot.json --model record:answers:openai:by-hand
//
// Each request is written as received to DIR/requests/<n>.json (n = 1, 2, …; the messages, the
// model, response_format with its JSON Schema), with DIR/requests/<n>.md beside it for reading (the
// system and user messages as text, then the schema). The server answers when DIR/answers/<n>.json
// (or <n>.txt) appears and stops changing: that file's text, unchanged, is the assistant message's
// content (write it elsewhere and move it in, or save it once), and usage
// is counted with the project's tokenizer (cl100k_base). A request sent again with the same body (a
// client's retry) is the same n. While a request waits, the response's headers are sent at once and
// a space follows every 20 s (JSON allows leading white space): a client's idle timeouts (Node's
// fetch gives up after 5 minutes without a byte) never end a wait; only the caller's deadline does.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { countTokens } from "#domain/tokens.ts";

export interface StandInOptions {
  /** Where requests/ and answers/ live (created when missing). */
  dir: string;
  /** On 127.0.0.1 (the server has no authentication); default: any free port. */
  port?: number;
  /** How often the answers folder is looked at (default 500 ms). */
  pollMs?: number;
  /** How often a waiting response gets a space (default 20 s). */
  keepAliveMs?: number;
  /** Progress lines (default: stderr). */
  log?: (line: string) => void;
}

export interface StandInModel {
  /** The base URL to give the OpenAI SDK (OPENAI_BASE_URL), ending in /v1. */
  url: string;
  close(): Promise<void>;
}

interface ChatMessage {
  role: string;
  content: unknown;
}

export async function startStandInModel(options: StandInOptions): Promise<StandInModel> {
  const dir = resolve(options.dir);
  const requests = join(dir, "requests");
  const answers = join(dir, "answers");
  mkdirSync(requests, { recursive: true });
  mkdirSync(answers, { recursive: true });
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const pollMs = options.pollMs ?? 500;
  const keepAliveMs = options.keepAliveMs ?? 20_000;

  // The numbers already given (a restarted server keeps them): body hash → n.
  const numbers = new Map<string, number>();
  for (const name of readdirSync(requests)) {
    const match = /^(\d+)\.json$/.exec(name);
    if (match) numbers.set(digest(readFileSync(join(requests, name))), Number(match[1]));
  }
  const waiting = new Set<() => void>();

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req);
    if (req.method !== "POST" || !/\/chat\/completions$/.test(req.url ?? "")) {
      sendJson(res, 404, {
        error: { message: `no route ${req.method} ${req.url}`, type: "invalid_request_error" },
      });
      return;
    }
    let parsed: { model?: unknown; messages?: ChatMessage[] };
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch {
      sendJson(res, 400, { error: { message: "the body is not JSON", type: "invalid_request_error" } });
      return;
    }
    const key = digest(body);
    let n = numbers.get(key);
    if (n === undefined) {
      n = Math.max(0, ...numbers.values()) + 1;
      numbers.set(key, n);
      writeFileSync(join(requests, `${n}.json`), body);
      writeFileSync(join(requests, `${n}.md`), readable(n, parsed));
      log(`request ${n} parked: answer it in ${join(answers, `${n}.json`)} (or ${n}.txt)`);
    } else log(`request ${n} again (same body): waiting for the same answer`);

    res.writeHead(200, { "content-type": "application/json" });
    res.flushHeaders();
    const answer = await answerOf(answers, n, pollMs, keepAliveMs, res, waiting);
    if (answer === null) {
      log(`request ${n}: the client went away before the answer`);
      return;
    }
    const messages = parsed.messages ?? [];
    const promptTokens = messages.reduce((sum, message) => sum + countTokens(textOf(message.content)), 0);
    const completionTokens = countTokens(answer);
    res.end(
      JSON.stringify({
        id: `chatcmpl-stand-in-${n}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: String(parsed.model ?? "stand-in"),
        choices: [
          { index: 0, finish_reason: "stop", message: { role: "assistant", content: answer, refusal: null } },
        ],
        usage: {
          prompt_tokens: promptTokens,
          completion_tokens: completionTokens,
          total_tokens: promptTokens + completionTokens,
        },
      }),
    );
    log(`request ${n} answered (${completionTokens} tokens)`);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      log(`stand-in model: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent)
        sendJson(res, 500, { error: { message: "stand-in failure", type: "server_error" } });
      else res.destroy();
    });
  });
  // A parked request may wait for hours: no server-side timeout may end it.
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  server.timeout = 0;
  await new Promise<void>((done) => server.listen(options.port ?? 0, "127.0.0.1", done));
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${address}:${port}/v1`,
    close: async () => {
      for (const stop of waiting) stop();
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

/**
 * Waits for answers/<n>.json or answers/<n>.txt to appear and read the same at two looks in a row
 * (a file still being written is not sent half done), sending a space every `keepAliveMs`
 * meanwhile; null when the client closed the connection (or the server is closing) first.
 */
function answerOf(
  answers: string,
  n: number,
  pollMs: number,
  keepAliveMs: number,
  res: ServerResponse,
  waiting: Set<() => void>,
): Promise<string | null> {
  const files = [join(answers, `${n}.json`), join(answers, `${n}.txt`)];
  return new Promise((done) => {
    let lastByte = Date.now();
    let seen: string | undefined;
    const finish = (answer: string | null) => {
      clearInterval(timer);
      waiting.delete(stop);
      res.off("close", stop);
      done(answer);
    };
    const stop = () => finish(null);
    const look = () => {
      const file = files.find((path) => existsSync(path));
      if (file !== undefined) {
        const text = readFileSync(file, "utf8");
        if (text === seen) return finish(text);
        seen = text;
      }
      if (Date.now() - lastByte >= keepAliveMs) {
        res.write(" ");
        lastByte = Date.now();
      }
    };
    const timer = setInterval(look, pollMs);
    waiting.add(stop);
    res.on("close", stop);
    look();
  });
}

/** The request for a person to read: each message as text, then the response schema. */
function readable(n: number, request: Record<string, unknown>): string {
  const messages = (request.messages ?? []) as ChatMessage[];
  const format = request.response_format as { json_schema?: { name?: string; schema?: unknown } } | undefined;
  return [
    `# Request ${n} (model ${String(request.model ?? "?")})`,
    "",
    ...messages.flatMap((message) => [`## ${message.role}`, "", textOf(message.content), ""]),
    ...(format?.json_schema
      ? [
          `## The answer: one JSON object of the schema ${format.json_schema.name ?? ""} (strict)`,
          "",
          "```json",
          JSON.stringify(format.json_schema.schema, null, 2),
          "```",
          "",
        ]
      : []),
    `Write the answer to answers/${n}.json: its text is sent as the assistant's message, unchanged.`,
    "",
  ].join("\n");
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content.map((part) => (typeof part?.text === "string" ? part.text : "")).join("");
  return "";
}

function digest(body: Buffer): string {
  return createHash("sha256").update(body).digest("hex");
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((done, fail) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => done(Buffer.concat(chunks)));
    req.on("error", fail);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { port: { type: "string", default: "8788" } },
  });
  const dir = positionals[0];
  if (dir === undefined || positionals.length > 1 || !/^\d{1,5}$/.test(values.port)) {
    process.stderr.write("usage: npx tsx scripts/stand-in-model.ts DIR [--port 8788]\n");
    process.exit(2);
  }
  const model = await startStandInModel({ dir, port: Number(values.port) });
  process.stderr.write(
    `stand-in model listening: OPENAI_BASE_URL=${model.url}; requests in ${join(resolve(dir), "requests")}, answers in ${join(resolve(dir), "answers")}\n`,
  );
  const stop = () => {
    model.close().then(() => process.exit(0));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
