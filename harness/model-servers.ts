import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import {
  createServer as createHttp2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type Http2Session,
} from "node:http2";
import type { AddressInfo } from "node:net";

/**
 * Local HTTP servers that speak the model APIs for real, for the adapters' tests: OpenAI Chat
 * Completions (`POST /v1/chat/completions`, HTTP/1.1) and Bedrock Converse (`POST
 * /model/{id}/converse`, over HTTP/2 cleartext, as the Bedrock runtime SDK's default handler speaks).
 * The official SDKs are pointed at them; each request is recorded as received, and a script
 * decides each answer: a JSON answer, raw text, an API error, or never answering.
 */
export type Scripted =
  | { answer: unknown; inputTokens?: number; outputTokens?: number }
  | { text: string }
  | { error: number; type: string; message: string; code?: string }
  | { hang: true };

export interface ReceivedRequest {
  index: number;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  system: string;
  prompt: string;
  schema: unknown;
}

export type Script = (request: ReceivedRequest) => Scripted;

export interface ModelServer {
  url: string;
  requests: ReceivedRequest[];
  script: Script;
  close(): Promise<void>;
}

export type Protocol = "openai" | "bedrock";

export async function startModelServer(protocol: Protocol, script: Script): Promise<ModelServer> {
  const requests: ReceivedRequest[] = [];
  const hanging = new Set<() => void>();
  const state: ModelServer = {
    url: "",
    requests,
    script,
    close: async () => {
      for (const end of hanging) end();
      for (const session of sessions) session.destroy();
      if ("closeAllConnections" in server) server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const sessions = new Set<Http2Session>();
  const handle = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => {
    // One call per response kind: Node 24's types give the two writeHead overload sets no common signature.
    const writeHead = (status: number, headers: Record<string, string>) =>
      "stream" in res ? res.writeHead(status, headers) : res.writeHead(status, headers);
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Record<string, unknown>;
      const received = {
        index: requests.length,
        path: req.url ?? "",
        headers: req.headers,
        body,
        ...parts(protocol, body),
      };
      requests.push(received);
      const expected = protocol === "openai" ? /\/chat\/completions$/ : /^\/model\/[^/]+\/converse$/;
      if (req.method !== "POST" || !expected.test(received.path)) {
        writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ message: `no route ${req.method} ${received.path}` }));
        return;
      }
      const scripted = state.script(received);
      if ("hang" in scripted) {
        const end = () => ("stream" in res ? res.stream.destroy() : res.destroy());
        hanging.add(end);
        res.on("close", () => hanging.delete(end));
        return;
      }
      const { status, headers, payload } = respond(protocol, scripted, String(body.model ?? ""));
      writeHead(status, { "content-type": "application/json", ...headers });
      res.end(payload);
    });
  };
  const server = protocol === "openai" ? createServer(handle) : createHttp2Server(handle);
  if (protocol === "bedrock")
    server.on("session", (session: Http2Session) => {
      sessions.add(session);
      session.on("close", () => sessions.delete(session));
    });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  state.url = protocol === "openai" ? `http://127.0.0.1:${port}/v1` : `http://127.0.0.1:${port}`;
  return state;
}

function parts(
  protocol: Protocol,
  body: Record<string, unknown>,
): { system: string; prompt: string; schema: unknown } {
  if (protocol === "openai") {
    const messages = (body.messages ?? []) as Array<{ role: string; content: string }>;
    const format = body.response_format as { json_schema?: { schema?: unknown } } | undefined;
    return {
      system: messages.find((m) => m.role === "system")?.content ?? "",
      prompt: messages.find((m) => m.role === "user")?.content ?? "",
      schema: format?.json_schema?.schema,
    };
  }
  const system = (body.system ?? []) as Array<{ text: string }>;
  const messages = (body.messages ?? []) as Array<{ content: Array<{ text: string }> }>;
  const tools =
    (body.toolConfig as { tools?: Array<{ toolSpec: { inputSchema: { json: unknown } } }> }) ?? {};
  return {
    system: system.map((block) => block.text).join(""),
    prompt: messages[0]?.content.map((block) => block.text).join("") ?? "",
    schema: tools.tools?.[0]?.toolSpec.inputSchema.json,
  };
}

function respond(
  protocol: Protocol,
  scripted: Exclude<Scripted, { hang: true }>,
  model: string,
): { status: number; headers: Record<string, string>; payload: string } {
  if ("error" in scripted) {
    if (protocol === "openai")
      return {
        status: scripted.error,
        headers: {},
        payload: JSON.stringify({
          error: { message: scripted.message, type: scripted.type, code: scripted.code ?? null, param: null },
        }),
      };
    return {
      status: scripted.error,
      headers: {
        "x-amzn-errortype": `${scripted.type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
      },
      payload: JSON.stringify({ message: scripted.message }),
    };
  }
  const inputTokens = "answer" in scripted ? (scripted.inputTokens ?? 100) : 100;
  const outputTokens = "answer" in scripted ? (scripted.outputTokens ?? 50) : 50;
  if (protocol === "openai") {
    const content = "answer" in scripted ? JSON.stringify(scripted.answer) : scripted.text;
    return {
      status: 200,
      headers: {},
      payload: JSON.stringify({
        id: "chatcmpl-test",
        object: "chat.completion",
        created: 1_764_460_800,
        model,
        choices: [
          { index: 0, finish_reason: "stop", message: { role: "assistant", content, refusal: null } },
        ],
        usage: {
          prompt_tokens: inputTokens,
          completion_tokens: outputTokens,
          total_tokens: inputTokens + outputTokens,
        },
      }),
    };
  }
  const content =
    "answer" in scripted
      ? [{ toolUse: { toolUseId: "tooluse-1", name: "answer", input: scripted.answer } }]
      : [{ text: scripted.text }];
  return {
    status: 200,
    headers: {},
    payload: JSON.stringify({
      output: { message: { role: "assistant", content } },
      stopReason: "answer" in scripted ? "tool_use" : "end_turn",
      usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
      metrics: { latencyMs: 1 },
    }),
  };
}

/** The events a segment prompt lists (its "## Events" lines), as the model reads them. */
export function promptEvents(
  prompt: string,
): Array<{ id: string; kind: string; text?: string; taskStatus?: string }> {
  return prompt
    .split("\n")
    .filter((line) => line.startsWith("{") && line.includes('"id":'))
    .map((line) => JSON.parse(line));
}

/** The honest answer to a segment prompt: each event restated verbatim, open tasks as pending. */
export function honestSegmentAnswer(prompt: string): unknown {
  const events = promptEvents(prompt);
  return {
    claims: events
      .filter((event) => event.kind !== "task")
      .map((event) => ({ key: `memory:${event.id}`, text: event.text ?? "", derivedFrom: [event.id] })),
    pending: events
      .filter((event) => event.kind === "task")
      .map((event) => ({ text: event.text ?? "", derivedFrom: [event.id] })),
  };
}
