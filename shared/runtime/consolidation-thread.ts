import { once } from "node:events";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { WorkOutcome } from "#app/worker.ts";
import type { EmbeddedRuntimeOptions } from "./embedded.ts";

/** What a consolidation thread opens: the runtime options of the process, without the progress callback (lines come back as messages). */
export type ThreadRuntimeOptions = Omit<EmbeddedRuntimeOptions, "progress">;

/** From the serving thread to the consolidation thread. */
export type ToConsolidationThread = { kind: "work"; id: number; body: unknown } | { kind: "close" };

/** From the consolidation thread back: a progress line, a message's outcome, or why it has none. */
export type FromConsolidationThread =
  | { kind: "progress"; line: string }
  | { kind: "outcome"; id: number; outcome: WorkOutcome }
  | { kind: "failed"; id: number; message: string };

/** The thread's entry, built beside the command line's bundle (scripts/bundle.mjs). */
const ENTRY = new URL("./consolidation-thread.mjs", import.meta.url);

/**
 * The thread's entry when this process runs the built command line; null when it runs from
 * source (tests, tsx), where a thread would get the TypeScript files without the transform tsx or
 * the test runner applies (Node 24 strips types, not parameter properties): consolidations then
 * run on the serving thread.
 */
export function consolidationThreadEntry(): URL | null {
  return import.meta.url.endsWith(".mjs") && existsSync(fileURLToPath(ENTRY)) ? ENTRY : null;
}

/**
 * The worker's use case on a thread of its own, over its own runtime (its own connections to the
 * same store): consolidation, the gate and the recall index it builds never run on the thread that
 * answers requests, so none of them stalls one. One message at a time, as the embedded store has
 * one writer per process. A thread that dies fails the message it held (the queue retries it) and
 * the next message starts a fresh one.
 */
export class ConsolidationThread {
  private worker: Worker | null = null;
  private nextId = 0;
  private readonly pending = new Map<
    number,
    { resolve: (outcome: WorkOutcome) => void; reject: (error: Error) => void }
  >();
  readonly offThread = true;

  constructor(
    private readonly entry: URL,
    private readonly options: ThreadRuntimeOptions,
    private readonly progress: (line: string) => void,
  ) {}

  /** Starts the thread now rather than with the first message. */
  start(): void {
    this.started();
  }

  /** `workOnMessage` on the thread: resolves with its outcome, rejects if the thread could not give one. */
  work(body: unknown): Promise<WorkOutcome> {
    const worker = this.started();
    const id = this.nextId++;
    return new Promise<WorkOutcome>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ kind: "work", id, body } satisfies ToConsolidationThread);
    });
  }

  /** Lets the thread close its runtime and end; call once no work is outstanding. */
  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.worker = null;
    const exited = once(worker, "exit");
    worker.postMessage({ kind: "close" } satisfies ToConsolidationThread);
    // A thread that something still holds open after its runtime closed is ended.
    const ending = setTimeout(() => void worker.terminate(), 10_000);
    await exited;
    clearTimeout(ending);
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.entry, { workerData: this.options });
    const failPending = (error: Error) => {
      for (const { reject } of this.pending.values()) reject(error);
      this.pending.clear();
    };
    worker.on("message", (message: FromConsolidationThread) => {
      if (message.kind === "progress") return this.progress(message.line);
      const waiting = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.kind === "outcome") waiting?.resolve(message.outcome);
      else waiting?.reject(new Error(message.message));
    });
    worker.on("error", (error) => failPending(error));
    worker.on("exit", (code) => {
      if (this.worker === worker) this.worker = null;
      failPending(new Error(`the consolidation thread ended (exit code ${code})`));
    });
    this.worker = worker;
    return worker;
  }
}
