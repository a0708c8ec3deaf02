import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { appendEvents, revokeEvents } from "#app/append.ts";
import type { Deps } from "#app/deps.ts";
import { explainClaims } from "#app/explain.ts";
import { recall } from "#app/recall.ts";
import { MAX_QUERY_CHARACTERS, MAX_QUERY_WORDS, RecallQuery } from "#app/recall-options.ts";
import { renderServedRecallText } from "#app/recall-text.ts";
import { run } from "#app/run.ts";
import { takeSnapshot } from "#app/snapshot.ts";
import { EventId, MemoryEvent, MemoryEventObject, Subject } from "#domain/schemas.ts";
import { InputError, NotFoundError } from "#ports/errors.ts";
import { classifyError } from "#runtime/errors.ts";
import { firstIssue } from "#runtime/issues.ts";
import { MAX_EVENTS_PER_REQUEST } from "#runtime/settings.ts";

export interface McpOptions {
  deps: Deps;
  /** The subject a tool call means when it names none. */
  defaultSubject?: string | undefined;
  version: string;
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

  const tools: Record<string, McpTool> = {
    remember: tool({
      description:
        "Append memory events for a subject (facts, preferences, constraints, decisions, tasks, permissions, notes). Each event is write-once by its eventId; re-sending the same event is harmless.",
      input: rememberFields(MemoryEvent),
      described: rememberFields(MemoryEventObject),
      call: async ({ subject, events }) => {
        const outcome = await appendEvents(
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
          // Said as it is: this server runs no worker, so a queued rebuild waits for a consumer.
          ...(outcome.rebuildRequested
            ? {
                rebuild:
                  "queued in the store: it runs when the consolidate tool is called, or by memgate serve or memgate sweep over the same store; until then recall answers the raw valid events",
              }
            : {}),
        };
      },
    }),
    recall: tool({
      description:
        "What to remember about a subject: the current summary (claims with their source events, open tasks, unresolved conflicts) and newer events, or the raw valid events when no current summary exists, as compact text with one line per item (format json for the JSON answer). Optional scope, token budget (counted on the rendering asked for), and a query over the summary's cold layer (the text's `# cold:` note says how many inputs stay cold).",
      input: z
        .object({
          subject: subjectField,
          scope: z.string().min(1).max(128).optional().describe("that scope's items and the global ones"),
          budget: z.number().int().min(0).max(100_000_000).optional().describe("at most this many tokens"),
          query: z
            .string()
            .max(MAX_QUERY_CHARACTERS)
            .optional()
            .describe(`words to find among cold events (at most ${MAX_QUERY_WORDS})`),
          cursor: z.string().max(200).optional().describe("nextCursor of the previous answer"),
          format: z
            .enum(["text", "json"])
            .default("text")
            .describe("text (default): one line per item, CONTRACT §5a; json: the JSON recall"),
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
        if (answer.highWater === 0)
          throw new NotFoundError(`subject: no events for "${named}"; remember some first`, {
            field: "subject",
          });
        return format === "text" ? new TextAnswer(renderServedRecallText(answer, options).text) : answer;
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
        const outcome = await revokeEvents(deps, subjectOf(subject), eventIds, reason);
        const already = new Set(outcome.alreadyRevoked);
        return {
          revoked: eventIds.filter((id) => !already.has(id)),
          alreadyRevoked: outcome.alreadyRevoked,
          inputEpoch: outcome.inputEpoch,
          staled: outcome.staled,
        };
      },
    }),
    consolidate: tool({
      description:
        "Consolidate a subject's memory now: select the valid events, summarise them, run the loss gate, and publish the summary if it passes (shadow mode waits for review).",
      input: z.object({ subject: subjectField }).strict(),
      call: async ({ subject }) => {
        const outcome = await run(deps, await takeSnapshot(deps, subjectOf(subject)));
        return outcome.status === "dropped"
          ? outcome
          : {
              status: outcome.status,
              artifactId: outcome.artifactId,
              gate: { verdict: outcome.gate.verdict, reasons: outcome.gate.reasons.slice(0, 20) },
            };
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
        explainClaims(deps, subjectOf(subject), { artifactId, key }),
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
        // The same classification as the command line's exit codes and the HTTP API's statuses.
        const { kind, code, message, field } = classifyError(error);
        if (kind === "unexpected") process.stderr.write(`memgate mcp: unexpected error: ${String(error)}\n`);
        return toolError(field ?? code, message);
      }
    },
  };
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
