import { requestRebuildIfNeeded, sweep } from "#app/append.ts";
import type { Deps } from "#app/deps.ts";
import { takeSnapshot } from "#app/snapshot.ts";
import { type WorkOutcome, workOnMessage } from "#app/worker.ts";
import type { Snapshot } from "#domain/schemas.ts";
import {
  ConsolidationThread,
  consolidationThreadEntry,
  type ThreadRuntimeOptions,
} from "./consolidation-thread.ts";
import { type LoadMeter, type LoadReading, measureLoad } from "./machine-load.ts";

/** Runs the worker's use case on one queue message; `close` once no message is outstanding. */
export interface Consolidations {
  work(body: unknown): Promise<WorkOutcome>;
  close(): Promise<void>;
  /** Whether the work runs on a thread of its own, so this thread's load is requests' alone. */
  readonly offThread?: boolean;
}

/** The worker's use case on this thread, over `deps` (from source, and when nothing else is given). */
export function consolidationsHere(deps: Deps): Consolidations {
  return { work: (body) => workOnMessage(deps, body), close: async () => undefined };
}

/**
 * Where a long-running process (`memgate serve`, `memgate mcp`) runs its consolidations: on a
 * thread of its own over the same runtime options when it runs the built command line (requests
 * never wait on one), on this thread over `deps` when it runs from source. The thread starts with
 * its first message, or now with `startNow` (a server, which will consolidate: loading the thread,
 * opening its runtime and building its tokenizer take about two seconds of CPU, better spent while
 * the server starts than at the first burst of writes and by the first summary).
 */
export function processConsolidations(
  deps: Deps,
  options: ThreadRuntimeOptions,
  progress: (line: string) => void,
  { startNow = false }: { startNow?: boolean } = {},
): Consolidations {
  const entry = consolidationThreadEntry();
  if (!entry) return consolidationsHere(deps);
  const thread = new ConsolidationThread(entry, options, progress);
  if (startNow) thread.start();
  return thread;
}

export interface InProcessWorkerOptions {
  /** Where each consolidation runs (default this thread, over `deps`). */
  consolidations?: Consolidations | undefined;
  /** How often the sweep requests the rebuilds committed state calls for (default one minute). */
  sweepEveryMs?: number | undefined;
  /**
   * How often an idle worker looks at the queue (default 250 ms); a queue in this process (the
   * embedded one) wakes it as soon as a message is sent.
   */
  pollEveryMs?: number | undefined;
  /** The worker's and the sweep's lines. */
  log: (line: string) => void;
  /** How loaded the serving thread and the machine were over a consolidation (default: measured). */
  load?: LoadMeter | undefined;
}

/** Above this share of its time busy, the serving thread counts as loaded by requests. */
export const SERVING_BUSY = 0.5;
/** The share of the time consolidations take while they compete with requests for the CPU. */
export const SHARE_UNDER_LOAD = 0.25;
/** The longest rest after one consolidation. */
export const MAX_REST_MS = 1_000;

/**
 * How long the worker rests after a consolidation that took `tookMs`, given the load over it. When
 * requests kept the serving thread busy and the machine had less than one idle core, the
 * consolidation took CPU the requests needed: the worker rests so that consolidations take
 * SHARE_UNDER_LOAD of the time (three times as long as it took, at most MAX_REST_MS). With an
 * idle core, or a quiet server, there is no rest: the summary would only come later for nothing.
 */
export function restAfterConsolidation(tookMs: number, load: LoadReading): number {
  if (load.servingBusy <= SERVING_BUSY || load.idleCores >= 1) return 0;
  return Math.min(MAX_REST_MS, Math.max(0, tookMs) * (1 / SHARE_UNDER_LOAD - 1));
}

/**
 * The consolidation worker of a process that holds the store (`memgate serve`, `memgate mcp` over
 * the embedded store): it consumes the store's queue and runs a sweep at start and every
 * `sweepEveryMs`, so a rebuild a write requests is built and published without anything else
 * running. One consolidation at a time (the embedded store has one writer per process): the queue's
 * messages and those asked for with `consolidate` take turns. A message that only appends
 * overtook is built at the subject's newest high water (`newest`). `ack` outcomes are acknowledged,
 * `retry` ones released for another try later (dead-lettered after the queue's maximum receives).
 */
export class InProcessWorker {
  private stopped = false;
  private loop: Promise<void> = Promise.resolve();
  private wakeUp: (() => void) | null = null;
  private woken = false;
  /** Ends the rest under way at once (stop). */
  private endRest: (() => void) | null = null;
  private turn: Promise<unknown> = Promise.resolve();
  private sweeper: ReturnType<typeof setInterval> | undefined;
  /** Stops the queue's calls when a message is sent (a queue in this process makes them). */
  private stopListening: (() => void) | null = null;
  private readonly consolidations: Consolidations;

  private constructor(
    private readonly deps: Deps,
    private readonly options: InProcessWorkerOptions,
  ) {
    this.consolidations = options.consolidations ?? consolidationsHere(deps);
  }

  /** Sweeps once (what committed state already calls for is queued), then consumes the queue. */
  static async start(deps: Deps, options: InProcessWorkerOptions): Promise<InProcessWorker> {
    const worker = new InProcessWorker(deps, options);
    worker.stopListening = deps.queue.onSent?.(() => worker.wake()) ?? null;
    await worker.sweepOnce();
    worker.sweeper = setInterval(() => void worker.sweepOnce(), options.sweepEveryMs ?? 60_000);
    worker.loop = worker.run();
    return worker;
  }

  /** Looks at the queue now rather than at the next poll (a write has just requested a rebuild). */
  wake(): void {
    if (this.wakeUp) this.wakeUp();
    // Woken while it looked at the queue: it looks again before it waits.
    else this.woken = true;
  }

  /**
   * The subject consolidated now, in turn with the queue's messages: its snapshot is taken when its
   * turn comes, so it sees what the turns before it published (a summary that already covers it is
   * not built again, and the switch does not race the queue's).
   */
  async consolidate(subject: string): Promise<{ snapshot: Snapshot; outcome: WorkOutcome }> {
    const done = await this.inTurn(async () => {
      const snapshot = await takeSnapshot(this.deps, subject);
      return { snapshot, outcome: await this.consolidations.work(snapshot) };
    });
    await this.requestWhatFollowed(done.snapshot);
    return done;
  }

  /** Stops sweeping and taking messages, lets the current consolidation finish, closes where they ran. */
  async stop(): Promise<void> {
    clearInterval(this.sweeper);
    this.stopListening?.();
    this.stopped = true;
    this.wake();
    this.endRest?.();
    await this.loop;
    await this.turn.catch(() => undefined);
    await this.consolidations.close();
  }

  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const done = this.turn.then(work, work);
    this.turn = done.catch(() => undefined);
    return done;
  }

  /**
   * Writes committed while `built` was being consolidated ask for the next rebuild now, not at the
   * next sweep: an append requests one only when it is the write that makes the subject need it,
   * and while a first summary was being built every append found the subject needing one already.
   * Answers the subject's high water now (null when it could not be read).
   */
  private async requestWhatFollowed(built: Snapshot): Promise<number | null> {
    try {
      const now = await this.deps.events.snapshot(built.subject);
      if (now.highWater === built.highWater && now.inputEpoch === built.inputEpoch) return now.highWater;
      const { rebuildAfterEvents } = await this.deps.settings.settings();
      const decision = await requestRebuildIfNeeded(this.deps, built.subject, rebuildAfterEvents);
      if (decision.action === "request") {
        this.options.log(`worker: rebuild requested for ${built.subject}: ${decision.reason}`);
        this.wake();
      }
      return now.highWater;
    } catch (error) {
      this.options.log(
        `worker: checking ${built.subject} after its consolidation failed (the sweep checks again): ${error instanceof Error ? error.message : String(error)}`,
      );
      return null;
    }
  }

  /**
   * What to build for a queued snapshot: the subject's newest snapshot when only appends came after
   * it (the same epoch and alias, a higher high water), else the message as it is. This queue holds
   * this process's own requests (appends, the sweep, `requestWhatFollowed`), so building the newest
   * covers what the next request would ask for: after a burst, one build per subject, not two.
   */
  private async newest(queued: Snapshot): Promise<Snapshot> {
    try {
      const now = await this.deps.events.snapshot(queued.subject);
      return now.highWater > queued.highWater &&
        now.inputEpoch === queued.inputEpoch &&
        // An alias is its artifact (as in the queue's dedup id): the same id, the same alias.
        now.expectedAlias?.parentArtifactId === queued.expectedAlias?.parentArtifactId
        ? now
        : queued;
    } catch {
      // Not a snapshot (the use case acknowledges it as poison), or the store failed: as queued.
      return queued;
    }
  }

  /** Waits `ms` unless the worker stops first; a wake does not end it. */
  private async rest(ms: number): Promise<void> {
    await delay(ms, (end) => {
      this.endRest = end;
    });
    this.endRest = null;
  }

  private async sweepOnce(): Promise<void> {
    try {
      const { requested, left } = await sweep(this.deps);
      for (const { subject, reason } of requested)
        this.options.log(`sweep: rebuild requested for ${subject}: ${reason}`);
      for (const { subject, reason } of left)
        this.options.log(`sweep: ${subject} left for a person: ${reason}`);
      this.wake();
    } catch (error) {
      this.options.log(
        `sweep failed (next one in a minute): ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  private async run(): Promise<void> {
    const { queue } = this.deps;
    while (!this.stopped) {
      let messages: Awaited<ReturnType<Deps["queue"]["receive"]>> = [];
      this.woken = false;
      try {
        messages = await queue.receive(1);
      } catch (error) {
        this.options.log(
          `worker: the queue failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      if (messages.length === 0) {
        if (this.woken) continue;
        await delay(this.options.pollEveryMs ?? 250, (end) => {
          this.wakeUp = end;
        });
        this.wakeUp = null;
        continue;
      }
      for (const message of messages) {
        let outcome: WorkOutcome;
        // Requests' load over the consolidation, when it runs off this thread (one here would count
        // as the requests' load).
        const load = this.consolidations.offThread ? (this.options.load ?? measureLoad)() : null;
        const started = performance.now();
        const snapshot = await this.newest(message.body);
        try {
          outcome = await this.inTurn(() => this.consolidations.work(snapshot));
        } catch (error) {
          // The consolidation thread died under it: the message comes back for another try.
          this.options.log(
            `worker: ${error instanceof Error ? error.message : String(error)}; released for a retry`,
          );
          await queue.release(message.receipt);
          continue;
        }
        this.options.log(`worker: ${snapshot.subject} at ${snapshot.highWater}: ${describeOutcome(outcome)}`);
        if (outcome.action === "ack") await queue.ack(message.receipt);
        else await queue.release(message.receipt);
        const after =
          outcome.action === "ack" && outcome.status !== "poison"
            ? await this.requestWhatFollowed(snapshot)
            : null;
        // Writes came while it was built: a burst is under way, and the summary is behind already.
        const overtaken = after !== null && after > snapshot.highWater;
        const rest = load && overtaken ? restAfterConsolidation(performance.now() - started, load()) : 0;
        if (rest > 0 && !this.stopped) await this.rest(rest);
      }
    }
  }
}

/** Waits `ms`; `onStart` receives a function that ends the wait at once. */
function delay(ms: number, onStart: (end: () => void) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    onStart(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** An outcome in one phrase: `PUBLISHED <id>`, `refused (<why>)`, `dropped: <why>`. */
export function describeOutcome(outcome: WorkOutcome): string {
  return outcome.status === "refused"
    ? `refused (${outcome.refusal})`
    : "artifactId" in outcome
      ? `${outcome.status} ${outcome.artifactId}`
      : `${outcome.status}: ${outcome.detail}`;
}
