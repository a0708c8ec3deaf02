import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { appendValidEvents, revokeEvents } from "#app/append.ts";
import { currentSummary } from "#app/current-summary.ts";
import type { Deps } from "#app/deps.ts";
import { explainClaims } from "#app/explain.ts";
import { recall, textVersionOf } from "#app/recall.ts";
import { MAX_QUERY_CHARACTERS, RecallQuery } from "#app/recall-options.ts";
import { renderServedRecallText } from "#app/recall-text.ts";
import { knownSubjectSnapshot, unknownSubjectError } from "#app/snapshot.ts";
import { type WorkOutcome, workOnMessage } from "#app/worker.ts";
import { EventId, MemoryEvent, MemoryEventObject, type Snapshot, Subject } from "#domain/schemas.ts";
import { InputError } from "#ports/errors.ts";
import { classifyError } from "#runtime/errors.ts";
import type { InProcessWorker } from "#runtime/in-process-worker.ts";
import { firstIssue } from "#runtime/issues.ts";
import { MAX_EVENTS_PER_REQUEST } from "#runtime/settings.ts";

export interface McpOptions {
  deps: Deps;
  /** The subject a tool call means when it names none. */
  defaultSubject?: string | undefined;
  version: string;
  /**
   * The consolidation worker of this process (`memgate mcp` over the embedded store, as `memgate
   * serve` runs it): it builds the rebuilds remember and forget request, and consolidate runs in
   * turn with it. Without one (the AWS store, whose worker Lambda consumes the queue) consolidate
   * runs on this thread and a requested rebuild waits for the queue's consumer.
   */
  worker?: Pick<InProcessWorker, "consolidate"> | undefined;
}

/** A tool: its zod schema parses the call; the JSON Schema listed to clients is generated from it. */
interface Tool<T> {
  description: string;
  input: z.ZodType<T>;
  /** The schema to describe (the same fields; events described by their object schema). */
  described?: z.ZodType;
  call(args: T): Promise<unknown>;
}

/** A tool's answer that is text only (what an agent reads), not JSON. */
class TextAnswer {
  constructor(readonly text: string) {}
}

/** A tool call that did not succeed, said as the tool's error: the field (or code) and why. */
class ToolFailureError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = "ToolFailureError";
  }
}

/** How an MCP reader searches the cold layer (CONTRACT §5a's HINT). */
const MCP_SEARCH_HINT = "the recall tool's query argument";

const subjectField = Subject.optional().describe("whose memory (default: the server's --subject)");
const rememberFields = <E extends z.ZodType>(event: E) =>
  z
    .object({
      subject: subjectField,
      events: z
        .array(event)
        .min(1, { error: "send at least one event" })
        .max(MAX_EVENTS_PER_REQUEST, { error: `at most ${MAX_EVENTS_PER_REQUEST} events a call` })
        .describe("MemoryEvents (CONTRACT §1): write-once by eventId"),
    })
    .strict();

/**
 * The MCP server: memgate as an agent's memory tool over the Model Context Protocol. Every tool is
 * one of the use cases the CLI and the HTTP API call (append, recall, revoke, snapshot + run,
 * lineage); arguments are parsed with the contract's zod schemas and a bad one comes back as a
 * tool error naming the field, as the HTTP API's 400 does.
 */
export function createMcpServer(options: McpOptions): Server {
  const { deps } = options;
  const subjectOf = (given: string | undefined): string => {
    const subject = given ?? options.defaultSubject;
    if (subject === undefined)
      throw new InputError("subject: name the subject (or start memgate mcp with --subject)", {
        field: "subject",
      });
    return subject;
  };

  // Said as it is: who builds a rebuild a write requests, and what recall answers until then.
  const rebuildNote = options.worker
    ? "queued: this server's worker builds it and publishes it if the gate passes (its lines go to stderr); until then recall answers the raw valid events"
    : "queued in the store: the queue's consumer builds it (the tenant's worker); until then recall answers the raw valid events";

  const tools: Record<string, McpTool> = {
    remember: tool({
      description:
        "Append memory events for a subject (facts, preferences, constraints, decisions, tasks, permissions, notes). Each event is write-once by its eventId; re-sending the same event is harmless.",
      input: rememberFields(MemoryEvent),
      described: rememberFields(MemoryEventObject),
      call: async ({ subject, events }) => {
        const outcome = await appendValidEvents(
          deps,
          subjectOf(subject),
          events.map(({ sequence: _sequence, ...event }) => event),
        );
        return {
          appended: outcome.appended,
          duplicates: outcome.duplicates,
          highWater: outcome.highWater,
          inputEpoch: outcome.inputEpoch,
          rebuildRequested: outcome.rebuildRequested,
          ...(outcome.rebuildRequested ? { rebuild: rebuildNote } : {}),
        };
      },
    }),
    recall: tool({
      description:
        "What to remember about a subject: the current summary (claims with their source events, open tasks, unresolved conflicts) and newer events, or the raw valid events when no current summary exists, as compact text with one line per item (format json for the JSON answer). Pass the question you need answered as `query`, as you would ask it (English or Chinese): the claims and the events that answer it are ranked first and served within the token budget (counted on the rendering asked for), each event with its day. Optional scope.",
      input: z
        .object({
          subject: subjectField,
          scope: z.string().min(1).max(128).optional().describe("that scope's items and the global ones"),
          budget: z.number().int().min(0).max(100_000_000).optional().describe("at most this many tokens"),
          query: z
            .string()
            .max(MAX_QUERY_CHARACTERS)
            .optional()
            .describe(
              `the question to answer from memory, as you would ask it (at most ${MAX_QUERY_CHARACTERS} characters; its most informative words are searched)`,
            ),
          cursor: z.string().max(200).optional().describe("nextCursor of the previous answer"),
          format: z
            .enum(["text", "json", "text-v1"])
            .default("text")
            .describe(
              "text (default): one line per item, CONTRACT §5a; json: the JSON recall; text-v1: the text's first version",
            ),
        })
        .strict(),
      call: async ({ subject, budget, format, ...rest }) => {
        const parsed = RecallQuery.parse({
          ...rest,
          format,
          ...(budget === undefined ? {} : { budget: String(budget) }),
        });
        const named = subjectOf(subject);
        const options = { ...parsed, searchHint: MCP_SEARCH_HINT };
        const answer = await recall(deps, named, options);
        // As the HTTP API's 404: a subject with no events is unknown, not an empty memory.
        if (answer.highWater === 0) throw unknownSubjectError(named);
        const version = textVersionOf(format);
        return version === null
          ? answer
          : new TextAnswer(renderServedRecallText(answer, { ...options, version }).text);
      },
    }),
    forget: tool({
      description:
        "Revoke events (they were wrong or must be forgotten): summaries that used them stop being served at once, and a rebuild is requested.",
      input: z
        .object({
          subject: subjectField,
          eventIds: z.array(EventId).min(1, { error: "name at least one event" }).max(MAX_EVENTS_PER_REQUEST),
          reason: z
            .string()
            .max(16 * 1024)
            .optional(),
        })
        .strict(),
      call: async ({ subject, eventIds, reason }) => {
        const named = (await knownSubjectSnapshot(deps, subjectOf(subject))).subject;
        const outcome = await revokeEvents(deps, named, eventIds, reason);
        const already = new Set(outcome.alreadyRevoked);
        return {
          revoked: eventIds.filter((id) => !already.has(id)),
          alreadyRevoked: outcome.alreadyRevoked,
          inputEpoch: outcome.inputEpoch,
          staled: outcome.staled,
          rebuildRequested: outcome.rebuildRequested,
          ...(outcome.rebuildRequested ? { rebuild: rebuildNote } : {}),
        };
      },
    }),
    consolidate: tool({
      description:
        "Consolidate a subject's memory now: select the valid events, summarise them, run the loss gate, and publish the summary if it passes (shadow mode waits for review). Over the embedded store the server's worker already does this after remember and forget; a subject its published summary covers is not built again.",
      input: z.object({ subject: subjectField }).strict(),
      call: async ({ subject }) => {
        const known = await knownSubjectSnapshot(deps, subjectOf(subject));
        const { snapshot, outcome } = options.worker
          ? await options.worker.consolidate(known.subject)
          : { snapshot: known, outcome: await workOnMessage(deps, known) };
        return consolidationAnswer(deps, snapshot, outcome);
      },
    }),
    explain: tool({
      description:
        "Where a summary's claims came from: each claim (all, or those of one key) with the events it was derived from. Defaults to the summary recall serves.",
      input: z
        .object({
          subject: subjectField,
          artifactId: z.string().min(1).max(400).optional(),
          key: z.string().min(1).max(400).optional(),
        })
        .strict(),
      call: async ({ subject, artifactId, key }) =>
        explainClaims(deps, (await knownSubjectSnapshot(deps, subjectOf(subject))).subject, {
          artifactId,
          key,
        }),
    }),
  };

  const server = new Server({ name: "memgate", version: options.version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: Object.entries(tools).map(([name, definition]) => ({
      name,
      description: definition.description,
      inputSchema: definition.inputSchema,
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const definition = tools[request.params.name];
    if (!definition)
      return toolError("name", `no tool "${request.params.name}"; tools: ${Object.keys(tools).join(", ")}`);
    return definition.answer(request.params.arguments ?? {});
  });
  return server;
}

/** A tool as the server lists and calls it: its arguments parsed by its own schema. */
interface McpTool {
  description: string;
  inputSchema: { type: "object"; [key: string]: unknown };
  answer(args: unknown): Promise<CallToolResult>;
}

function tool<T>(definition: Tool<T>): McpTool {
  return {
    description: definition.description,
    inputSchema: inputSchemaOf(definition.described ?? definition.input),
    async answer(args) {
      const parsed = definition.input.safeParse(args);
      if (!parsed.success) {
        const { field, message } = firstIssue(parsed.error, "arguments");
        return toolError(field, message);
      }
      try {
        const result = await definition.call(parsed.data);
        if (result instanceof TextAnswer) return { content: [{ type: "text", text: result.text }] };
        return {
          content: [{ type: "text", text: JSON.stringify(result) }],
          structuredContent: result as Record<string, unknown>,
        };
      } catch (error) {
        if (error instanceof ToolFailureError) return toolError(error.field, error.message);
        // The same classification as the command line's exit codes and the HTTP API's statuses.
        const { kind, code, message, field } = classifyError(error);
        if (kind === "unexpected") process.stderr.write(`memgate mcp: unexpected error: ${String(error)}\n`);
        return toolError(field ?? code, message);
      }
    },
  };
}

/**
 * What the consolidate tool answers for the worker's outcome on its snapshot: the artifact it
 * generated with the gate's verdict; the published summary when that already covers the snapshot
 * (as HTTP's `queued: false`: nothing was generated, whether this call or the worker's queue found
 * it so); `dropped` when the epoch moved. A refused publish or a consolidation that did not finish
 * is the tool's error, classified as the command line and HTTP classify the errors behind them.
 */
async function consolidationAnswer(deps: Deps, snapshot: Snapshot, outcome: WorkOutcome) {
  if ("artifactId" in outcome)
    return {
      status: outcome.status,
      artifactId: outcome.artifactId,
      generated: true,
      gate: { verdict: outcome.gate.verdict, reasons: outcome.gate.reasons.slice(0, 20) },
    };
  switch (outcome.status) {
    case "dropped": {
      const current = await currentSummary(deps, snapshot);
      return current
        ? {
            status: "PUBLISHED",
            artifactId: current.artifactId,
            generated: false,
            detail: `${current.reason}; nothing was generated`,
          }
        : { status: "dropped", reason: outcome.detail };
    }
    case "refused":
      throw new ToolFailureError("artifactId", outcome.detail);
    case "generation-failed":
    case "contention":
      throw new ToolFailureError(outcome.status, outcome.detail);
    default:
      process.stderr.write(`memgate mcp: unexpected error: ${outcome.detail}\n`);
      throw new ToolFailureError("internal", "unexpected error; it was logged");
  }
}

function toolError(field: string, message: string): CallToolResult {
  const text = message.startsWith(`${field}:`) ? message : `${field}: ${message}`;
  return { content: [{ type: "text", text }], isError: true };
}

function inputSchemaOf(schema: z.ZodType): { type: "object"; [key: string]: unknown } {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, {
    io: "input",
    unrepresentable: "any",
  }) as Record<string, unknown>;
  return { ...json, type: "object" };
}
