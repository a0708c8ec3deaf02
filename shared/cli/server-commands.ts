import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { startLocalServer } from "#http/local-server.ts";
import { type RoleToken, RoleTokenError, roleTokens } from "#http/role-tokens.ts";
import { createMcpServer } from "#mcp/server.ts";
import { InputError } from "#ports/errors.ts";
import { env } from "#runtime/config.ts";
import { InProcessWorker, processConsolidations } from "#runtime/in-process-worker.ts";
import { boundedInt, type Command, storeCommand, subjectArg, text, texts, withRuntime } from "./command.ts";
import { batchedLines, EXIT, MEMGATE_VERSION, UsageError } from "./output.ts";

/**
 * serve and mcp hold the store for as long as they run: its log is checkpointed on a thread of its
 * own and its commits are synced off the serving thread.
 */
const LONG_RUNNING = { longRunning: true } as const;

/** The long-running entry points over the same runtime: the HTTP API and the MCP server. */
export const SERVER_COMMANDS: Record<string, Command> = {
  serve: storeCommand(
    "memgate serve [--port 8787] [--host 127.0.0.1] [--token T] [--role-token ROLE=T]... [--allowed-host NAME …] [--home DIR] [--store aws] [--model NAME]\n\nThe HTTP API (CONTRACT §6) over the store, with the consolidation worker in process and a sweep\nat start and every minute. Binds loopback by default; with --token (or $MEMGATE_TOKEN) every\nroute but /healthz needs Authorization: Bearer <token>. --token holds every role; each\n--role-token agent=T, reviewer=T or admin=T (or $MEMGATE_ROLE_TOKENS, comma-separated) adds a\ntoken holding that role alone, and a route its role may not call answers 403. It answers\nrequests addressed to an IP address, localhost or a name given with --allowed-host (repeatable),\nand refuses writes a browser sends from another origin. Prints its URL; one log line per request\ngoes to stderr. SIGINT or SIGTERM stops it after the current generation.",
    {
      port: { type: "string" },
      host: { type: "string" },
      token: { type: "string" },
      "allowed-host": { type: "string", multiple: true },
      "role-token": { type: "string", multiple: true },
    },
    async (values, _positionals, io) => {
      const port = boundedInt(values, "port", 65_535) ?? 8787;
      const host = text(values, "host") ?? "127.0.0.1";
      if (host.trim() === "")
        throw new UsageError("--host is empty: name an address to bind (default 127.0.0.1)");
      const token = text(values, "token") ?? env.MEMGATE_TOKEN;
      const byRole = texts(values, "role-token");
      let tokens: RoleToken[];
      try {
        tokens = roleTokens(token, byRole.length > 0 ? byRole : (env.MEMGATE_ROLE_TOKENS?.split(",") ?? []));
      } catch (error) {
        if (error instanceof RoleTokenError) throw new UsageError(error.message);
        throw error;
      }
      const allowedHosts = texts(values, "allowed-host").map((name) => {
        if (!/^[A-Za-z0-9][A-Za-z0-9.-]{0,252}$/.test(name))
          throw new UsageError(
            "--allowed-host must be a host name (letters, digits, . and -), without a port",
          );
        return name;
      });
      return withRuntime(
        values,
        io,
        async (deps, { progress, ...runtimeOptions }) => {
          // Consolidations on a thread of their own, over the same options: requests never wait on one.
          const consolidations = processConsolidations(deps, runtimeOptions, progress, { startNow: true });
          const log = batchedLines((lines) => io.err(lines));
          let server: Awaited<ReturnType<typeof startLocalServer>>;
          try {
            server = await startLocalServer(deps, {
              port,
              host,
              roleTokens: tokens,
              allowedHosts,
              consolidations,
              out: (line) => io.out(line),
              log: (line) => log(`memgate: ${line}`),
            });
          } catch (error) {
            // The consolidation thread started with the command; it ends with it.
            await consolidations.close();
            const code = (error as NodeJS.ErrnoException).code;
            if (code === "EADDRINUSE" || code === "EADDRNOTAVAIL" || code === "EACCES")
              throw new InputError(
                `--host ${host} --port ${port}: cannot listen there (${code}); choose another`,
              );
            throw error;
          }
          if (tokens.length === 0 && !["127.0.0.1", "::1", "localhost"].includes(host))
            io.err(
              `memgate: warning: listening on ${host} without --token: anyone who can reach it reads and writes memory`,
            );
          await new Promise<void>((resolve) => {
            process.once("SIGINT", resolve);
            process.once("SIGTERM", resolve);
          });
          io.err("memgate: stopping: no new requests; finishing the current generation");
          await server.close();
          io.err("memgate: stopped");
          return EXIT.ok;
        },
        LONG_RUNNING,
      );
    },
  ),

  mcp: storeCommand(
    "memgate mcp [--subject SUBJECT] [--home DIR] [--store aws] [--model NAME]\n\nmemgate as a Model Context Protocol server over stdio: tools remember, recall, forget,\nconsolidate and explain, the same use cases as the CLI and the HTTP API. Over the embedded store it\nruns serve's consolidation worker and sweep, so a rebuild remember or forget requests is built\nand published here. Add it to an MCP client's configuration as the command\n`npx memgate mcp --home <DIR>`. Logs go to stderr.",
    { subject: { type: "string" } },
    async (values, _positionals, io) => {
      const given = text(values, "subject");
      const subject = given === undefined ? undefined : subjectArg([given]);
      return withRuntime(
        values,
        io,
        async (deps, { progress, ...runtimeOptions }) => {
          // Over the embedded store this process holds the store: it runs serve's worker, so a rebuild
          // a tool requests is built here (on AWS the tenant's worker consumes the queue).
          const worker =
            runtimeOptions.store === "embedded"
              ? await InProcessWorker.start(deps, {
                  consolidations: processConsolidations(deps, runtimeOptions, progress),
                  log: (line) => io.err(`memgate: ${line}`),
                })
              : undefined;
          try {
            const server = createMcpServer({
              deps,
              defaultSubject: subject,
              version: MEMGATE_VERSION,
              worker,
            });
            const closed = new Promise<void>((resolve) => {
              server.onclose = resolve;
            });
            await server.connect(new StdioServerTransport());
            // The client closing our stdin ends the session.
            process.stdin.once("end", () => void server.close());
            io.err(`memgate: MCP server ready on stdio${subject ? ` (default subject ${subject})` : ""}`);
            await closed;
            return EXIT.ok;
          } finally {
            // The consolidation under way finishes (bounded by its deadline) before the store closes.
            await worker?.stop();
          }
        },
        LONG_RUNNING,
      );
    },
  ),
};
