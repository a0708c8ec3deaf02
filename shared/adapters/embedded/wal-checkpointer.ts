import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/**
 * Checkpoints of the store's write-ahead log on a thread of their own, for a process that serves
 * requests (`memgate serve`, `memgate mcp`). SQLite otherwise checkpoints inside the commit that
 * grows the log past 1,000 pages: after a batch of megabytes that commit copies it all into the
 * database and syncs it on the serving thread, tens of milliseconds no other request gets. Here
 * the serving connection never checkpoints (`wal_autocheckpoint = 0`) and this thread's own
 * connection runs a PASSIVE checkpoint every EVERY_MS, which never waits on readers or the writer.
 * If the thread cannot run, the serving connection checkpoints as before, so the log never grows
 * without bound.
 */
export class WalCheckpointer {
  private readonly worker: Worker;
  private stopped = false;

  constructor(file: string, onFailure: (error: Error) => void) {
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    this.worker = new Worker(THREAD, { eval: true, workerData: { file, driver, everyMs: EVERY_MS } });
    this.worker.unref();
    this.worker.on("error", (error) => onFailure(error));
    this.worker.on("exit", (code) => {
      if (!this.stopped) onFailure(new Error(`the checkpoint thread ended (exit code ${code})`));
    });
  }

  /** Ends the thread after one last checkpoint (the process may exit before it runs: SQLite recovers the log on open). */
  stop(): void {
    this.stopped = true;
    this.worker.postMessage("stop");
  }
}

const EVERY_MS = 200;

/** The thread: its own connection, a PASSIVE checkpoint on a timer, one more when stopped. */
const THREAD = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.file);
const checkpoint = () => {
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
  } catch {
    // Busy or locked this time: the next tick tries again.
  }
};
const timer = setInterval(checkpoint, workerData.everyMs);
parentPort.on("message", () => {
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.close();
});
`;
