import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { sweep } from "#app/append.ts";
import type { Deps } from "#app/deps.ts";
import { type WorkOutcome, workOnMessage } from "#app/worker.ts";
import { prepareTokenizer } from "#domain/tokens.ts";
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
   * Where the worker's use case runs on each queue message (`memgate serve`: a thread of its own,
   * runtime/consolidation-thread.ts); default this thread, over `deps`.
   */
  consolidations?: Consolidations;
  /** Results (the URL) go out, one line per request and the worker's lines go to log. */
  out: (line: string) => void;
  log: (line: string) => void;
}

/** Runs the worker's use case on one queue message; `close` once no message is outstanding. */
export interface Consolidations {
  work(body: unknown): Promise<WorkOutcome>;
  close(): Promise<void>;
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

  const consolidations = options.consolidations ?? {
    work: (body: unknown) => workOnMessage(deps, body),
    close: async () => undefined,
  };
  const worker = new LocalWorker(deps, consolidations, options.log);
  const runSweep = async () => {
    try {
      const { requested, left } = await sweep(deps);
      for (const { subject, reason } of requested)
        options.log(`sweep: rebuild requested for ${subject}: ${reason}`);
      for (const { subject, reason } of left) options.log(`sweep: ${subject} left for a person: ${reason}`);
      worker.wake();
    } catch (error) {
      options.log(
        `sweep failed (next one in a minute): ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  };
  await runSweep();
  const sweeper = setInterval(runSweep, options.sweepEveryMs ?? 60_000);
  worker.start();
  options.out(`memgate serve: listening on ${url}`);

  return {
    url,
    async close() {
      clearInterval(sweeper);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await worker.stop();
      await consolidations.close();
    },
  };
}

/**
 * Consumes the queue in process: one message at a time (the embedded store is one writer), each
 * through the worker's use case where `consolidations` runs it; `ack` outcomes are acknowledged, `retry` ones released for another
 * try later (and dead-lettered after the queue's maximum receives).
 */
class LocalWorker {
  private stopped = false;
  private loop: Promise<void> = Promise.resolve();
  private wakeUp: (() => void) | null = null;

  constructor(
    private readonly deps: Deps,
    private readonly consolidations: Consolidations,
    private readonly log: (line: string) => void,
  ) {}

  start(): void {
    this.loop = this.run();
  }

  wake(): void {
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let messages: Awaited<ReturnType<Deps["queue"]["receive"]>> = [];
      try {
        messages = await this.deps.queue.receive(1);
      } catch (error) {
        this.log(`worker: the queue failed: ${error instanceof Error ? error.message : String(error)}`);
      }
      if (messages.length === 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 250);
          this.wakeUp = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wakeUp = null;
        continue;
      }
      for (const message of messages) {
        let outcome: WorkOutcome;
        try {
          outcome = await this.consolidations.work(message.body);
        } catch (error) {
          // The consolidation thread died under it: the message comes back for another try.
          this.log(`worker: ${error instanceof Error ? error.message : String(error)}; released for a retry`);
          await this.deps.queue.release(message.receipt);
          continue;
        }
        const what =
          outcome.status === "refused"
            ? `refused (${outcome.refusal})`
            : "artifactId" in outcome
              ? `${outcome.status} ${outcome.artifactId}`
              : `${outcome.status}: ${outcome.detail}`;
        this.log(`worker: ${message.body.subject} at ${message.body.highWater}: ${what}`);
        if (outcome.action === "ack") await this.deps.queue.ack(message.receipt);
        else await this.deps.queue.release(message.receipt);
      }
    }
  }
}
