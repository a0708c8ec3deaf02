// The consolidation thread of `memgate serve` (see ConsolidationThread): opens the runtime it is
// given and runs the worker's use case on each message, one after the other.
import { readlinkSync } from "node:fs";
import { setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import { type WorkOutcome, workOnMessage } from "#app/worker.ts";
import { prepareTokenizer } from "#domain/tokens.ts";
import type {
  FromConsolidationThread,
  ThreadRuntimeOptions,
  ToConsolidationThread,
} from "./consolidation-thread.ts";
import { openEmbeddedRuntime } from "./embedded.ts";

const port = parentPort;
if (!port) throw new Error("consolidation-thread runs as a worker thread of memgate serve");
const post = (message: FromConsolidationThread) => port.postMessage(message);

// Background work yields to requests: on Linux a thread has its own task id, whose nice value this
// thread raises, so when the CPUs are contended the serving thread runs first. Elsewhere, as is.
try {
  const task = Number(readlinkSync("/proc/thread-self").split("/").pop());
  if (Number.isInteger(task) && task > 0) setPriority(task, 10);
} catch {
  // No /proc/thread-self (not Linux), or not allowed: the thread keeps the process's priority.
}

// The serving thread's own options (a structured clone of them), not outside input.
// The serving thread's store checkpoints the log on its own thread; this one's commits are its own.
const runtime = openEmbeddedRuntime({
  ...(workerData as ThreadRuntimeOptions),
  longRunning: false,
  progress: (line) => post({ kind: "progress", line }),
});
// Kept from rejecting unobserved: a runtime that cannot open fails each message that needs it.
// Once it is open, the tokenizer's rank table is built before the first message needs it.
runtime.then(() => prepareTokenizer()).catch(() => undefined);

/** An outcome that crosses the thread boundary: a retried one's error travels as its message. */
function cloneable(outcome: WorkOutcome): WorkOutcome {
  return outcome.action === "retry" ? { ...outcome, error: outcome.detail } : outcome;
}

let turn = Promise.resolve();
port.on("message", (message: ToConsolidationThread) => {
  turn = turn.then(async () => {
    if (message.kind === "close") {
      await runtime.then((open) => open.close()).catch(() => undefined);
      port.close();
      return;
    }
    try {
      post({
        kind: "outcome",
        id: message.id,
        outcome: cloneable(await workOnMessage((await runtime).deps, message.body)),
      });
    } catch (error) {
      post({
        kind: "failed",
        id: message.id,
        message: error instanceof Error ? error.message : String(error),
      });
    }
  });
});
