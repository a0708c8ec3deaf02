import type { AuditCheckpoint, AuditRounds } from "#ports/audit-rounds.ts";
import { type AuditDeps, auditSubject, JUDGE_TIMEOUT_MS, type SubjectAudit } from "./audit.ts";

/**
 * The scheduled audit in rounds: one round a UTC day over every subject, in the subject index's
 * order, a page at a time, carried over as many invocations as it takes. Each invocation resumes
 * after the last subject the checkpoint names, audits subjects while its time allows one more
 * (a judge's deadline and a margin), and writes the checkpoint after each; the invocation that
 * audits the last subject completes the round. No invocation has to get through every subject
 * before its timeout, and what one finds is reported subject by subject (`onSubject`), never lost
 * with a timeout.
 */
export interface AuditRoundDeps extends AuditDeps {
  rounds: AuditRounds;
}

export interface AuditRoundOptions {
  /** The invocation's time left (Lambda's getRemainingTimeInMillis). */
  remainingMs: () => number;
  /** Subjects read from the index a Query (default 25). */
  pageSize?: number;
  /** How long the judge may take over one summary (default 120 s): also what one subject may need. */
  judgeTimeoutMs?: number;
  /** Told each subject as soon as it is audited (the Lambda flushes its metrics there). */
  onSubject?: (subject: string, found: SubjectAudit) => void;
}

export interface AuditRoundReport {
  /**
   * complete: this invocation finished the round; paused: time ran short, the next one resumes;
   * idle: today's round is already complete; overtaken: another invocation wrote the checkpoint
   * first (it carries on).
   */
  status: "complete" | "paused" | "idle" | "overtaken";
  /** Subjects this invocation audited. */
  audited: number;
  /** The checkpoint as this invocation left it (the round's totals so far). */
  checkpoint: AuditCheckpoint | null;
}

/** Time kept back beyond a judge's deadline for one subject's reads, containment and checkpoint. */
export const SUBJECT_MARGIN_MS = 30_000;

export async function auditRound(
  deps: AuditRoundDeps,
  options: AuditRoundOptions,
): Promise<AuditRoundReport> {
  const judgeTimeoutMs = options.judgeTimeoutMs ?? JUDGE_TIMEOUT_MS;
  const enoughFor = () => options.remainingMs() > judgeTimeoutMs + SUBJECT_MARGIN_MS;
  let checkpoint = await deps.rounds.checkpoint();
  const now = deps.now();
  const today = now.toISOString().slice(0, 10);
  if (checkpoint?.complete && checkpoint.round === today) return { status: "idle", audited: 0, checkpoint };
  if (checkpoint === null || checkpoint.complete) {
    // A new day after a complete round: a new round from the first subject. An incomplete round
    // is finished first, whatever its day (its heartbeat is late, and the alarm says so).
    const fresh: AuditCheckpoint = {
      round: today,
      after: null,
      complete: false,
      startedAt: now.toISOString(),
      subjects: 0,
      served: 0,
      staleVisible: 0,
      falseFact: 0,
      version: (checkpoint?.version ?? 0) + 1,
    };
    if (!(await deps.rounds.saveCheckpoint(fresh, checkpoint?.version ?? null)))
      return { status: "overtaken", audited: 0, checkpoint };
    deps.progress(`audit: round ${today} started`);
    checkpoint = fresh;
  }
  const settings = await deps.settings.settings();
  let audited = 0;
  for (;;) {
    if (!enoughFor()) return { status: "paused", audited, checkpoint };
    const page = await deps.events.subjectsPage(checkpoint.after, options.pageSize ?? 25);
    for (const subject of page.subjects) {
      if (!enoughFor()) return { status: "paused", audited, checkpoint };
      const found = await auditSubject(deps, settings, subject, { judgeTimeoutMs });
      audited++;
      options.onSubject?.(subject, found);
      const next: AuditCheckpoint = {
        ...checkpoint,
        after: subject,
        subjects: checkpoint.subjects + 1,
        served: checkpoint.served + found.served,
        staleVisible: checkpoint.staleVisible + found.staleVisible,
        falseFact: checkpoint.falseFact + found.falseFact,
        version: checkpoint.version + 1,
      };
      if (!(await deps.rounds.saveCheckpoint(next, checkpoint.version)))
        return { status: "overtaken", audited, checkpoint };
      checkpoint = next;
    }
    if (page.more) continue;
    const complete: AuditCheckpoint = {
      ...checkpoint,
      complete: true,
      completedAt: deps.now().toISOString(),
      version: checkpoint.version + 1,
    };
    if (!(await deps.rounds.saveCheckpoint(complete, checkpoint.version)))
      return { status: "overtaken", audited, checkpoint };
    deps.progress(`audit: round ${complete.round} complete, ${complete.subjects} subjects`);
    return { status: "complete", audited, checkpoint: complete };
  }
}
