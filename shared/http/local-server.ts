import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import type { Deps } from "#app/deps.ts";
import { prepareTokenizer } from "#domain/tokens.ts";
import { type Consolidations, InProcessWorker } from "#runtime/in-process-worker.ts";
import { createApi } from "./api.ts";
import type { RoleToken } from "./role-tokens.ts";

export interface LocalServerOptions {
  port: number;
  host: string;
  /**
   * Host names it answers to besides IP addresses and localhost (DNS rebinding); writes a browser
   * sends from another origin are refused whatever this holds.
   */
  allowedHosts?: readonly string[];
  /** The bearer tokens and their roles (`--token` holds every role); none: no token asked. */
  roleTokens?: readonly RoleToken[] | undefined;
  /** How often the sweep requests the rebuilds committed state calls for (default one minute). */
  sweepEveryMs?: number;
  /**
   * Where the worker's use case runs on each queue message (`memgate serve`: a thread of its own
   * from the bundle, runtime/in-process-worker.ts); default this thread, over `deps`.
   */
  consolidations?: Consolidations;
  /** Results (the URL) go out, one line per request and the worker's lines go to log. */
  out: (line: string) => void;
  log: (line: string) => void;
}

export interface RunningServer {
  url: string;
  /** Stops taking requests, lets the current generation finish (bounded by its deadline), stops. */
  close(): Promise<void>;
}

/**
 * `memgate serve`: the HTTP API of CONTRACT §6 over one store, with the worker in process (it
 * consumes the store's queue) and a sweep at start and every minute, so a subject that needs a
 * rebuild gets one without anything else running.
 */
export async function startLocalServer(deps: Deps, options: LocalServerOptions): Promise<RunningServer> {
  const app = createApi({
    deps,
    allowedHosts: options.allowedHosts ?? [],
    roleTokens: options.roleTokens,
    logRequest: options.log,
    logUnexpected: (error) =>
      options.log(
        `unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      ),
  });
  // Built before the first request, not inside the first budgeted recall (every request would wait).
  prepareTokenizer();
  const server = serve({ fetch: app.fetch, port: options.port, hostname: options.host });
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  const url = `http://${host}:${port}`;

  const worker = await InProcessWorker.start(deps, {
    consolidations: options.consolidations,
    sweepEveryMs: options.sweepEveryMs,
    log: options.log,
  });
  options.out(`memgate serve: listening on ${url}`);

  return {
    url,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await worker.stop();
    },
  };
}
