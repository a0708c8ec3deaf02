import { assessCandidate, buildGateContext, countReasons, type GateReasonCode } from "#domain/gate/index.ts";
import { inputRoot, recomputedEventHash } from "#domain/hashing.ts";
import type { Manifest, SequencedEvent } from "#domain/schemas.ts";
import { seededRandom } from "#domain/seeded-random.ts";
import { type InvalidReason, selectInputs } from "#domain/selector.ts";
import { rawBeforeRecord, rawForRecord } from "#domain/serving.ts";
import { selectorNamed } from "#domain/validity.ts";
import type { TenantSettings } from "#ports/settings.ts";
import { requestRebuildIfNeeded } from "./append.ts";
import type { Deps } from "./deps.ts";
import { judgeUndecided } from "./judge.ts";
import { readSelection } from "./selection.ts";

/** Gate reasons that mean a served claim says something its events do not. */
export const FALSE_FACT_REASONS: ReadonlySet<GateReasonCode> = new Set<GateReasonCode>([
  "value-changed",
  "polarity-flipped",
  "unsupported-claim",
  "unknown-source",
  "provenance-missing",
  "conflict-invented",
  "conflict-settled",
  // An earlier reading (selector v3) served as current: a value a later reading replaced.
  "outdated-reading",
  "summary-foreign-token",
  // Only a judge's verdict (or a policy's summarySupport) gives this one: prose the events do not say.
  "summary-unsupported",
]);

export interface AuditFinding {
  subject: string;
  artifactId: string;
  /** stale-visible and false-fact are contained (raw recall, rebuild); lost is reported only. */
  kind: "stale-visible" | "false-fact" | "lost";
  detail: string;
}

export interface AuditReport {
  /** Subjects looked at. */
  subjects: number;
  /** Of them, subjects whose recall served a summary when audited. */
  served: number;
  /** Served summaries whose inputs or input root no longer match the raw layer. */
  staleVisible: number;
  /** Claims of served summaries the current gate finds unsupported by their events. */
  falseFact: number;
  findings: AuditFinding[];
  /** The current gate's reasons over every served summary, by code. */
  reasonCounts: Partial<Record<GateReasonCode, number>>;
  /** Artifacts taken out of service (marked STALE) and rebuilt. */
  contained: string[];
  /** Texts the deterministic rules could not decide that a model judge weighed (0 without a judge). */
  judged: number;
}

export interface AuditOptions {
  subjects?: readonly string[];
  /** Audit this many subjects, chosen by `seed` (the same seed, the same sample). */
  sample?: number;
  seed?: number;
  /** How long the judge may take over one summary (default JUDGE_TIMEOUT_MS, 120 s). */
  judgeTimeoutMs?: number;
}

/**
 * The daily independent check of what recall serves. For each subject whose recall would serve a
 * summary now, the inputs are selected again from the raw layer by the manifest's selector, with
 * every event up to the clock (what is valid now), each hashed again from its content (never the
 * hash its store kept), and the input root compared with the manifest's; the current gate is run
 * again on the stored answer against the current events.
 * A stale-visible or false-fact finding is contained at once: the artifact is marked STALE (recall
 * answers raw) and a rebuild is requested.
 */
export async function audit(deps: AuditDeps, options: AuditOptions = {}): Promise<AuditReport> {
  const all = options.subjects ? [...options.subjects] : await deps.events.listSubjects();
  const subjects = options.sample === undefined ? all : sampleOf(all, options.sample, options.seed ?? 0);
  const settings = await deps.settings.settings();
  const report: AuditReport = { subjects: 0, ...nothingFound() };
  for (const subject of subjects) addSubject(report, await auditSubject(deps, settings, subject, options));
  return report;
}

export type AuditDeps = Pick<
  Deps,
  "events" | "artifacts" | "settings" | "queue" | "progress" | "judge" | "now"
>;

/** What the audit found on one subject: the part of AuditReport it adds (`served` 0 or 1). */
export type SubjectAudit = Omit<AuditReport, "subjects">;

function nothingFound(): SubjectAudit {
  return {
    served: 0,
    staleVisible: 0,
    falseFact: 0,
    findings: [],
    reasonCounts: {},
    contained: [],
    judged: 0,
  };
}

/** Adds one subject's audit to a report. */
function addSubject(report: AuditReport, found: SubjectAudit): void {
  report.subjects++;
  report.served += found.served;
  report.staleVisible += found.staleVisible;
  report.falseFact += found.falseFact;
  report.findings.push(...found.findings);
  report.contained.push(...found.contained);
  report.judged += found.judged;
  for (const [code, count] of Object.entries(found.reasonCounts))
    report.reasonCounts[code as GateReasonCode] = (report.reasonCounts[code as GateReasonCode] ?? 0) + count;
}

/**
 * One subject of the audit: when its recall serves a summary now, the inputs are selected again
 * from the raw layer, hashed again, the input root compared and the gate run again on the stored
 * answer (the judge weighing what the rules cannot decide, within `judgeTimeoutMs`); what it
 * finds is contained at once.
 */
export async function auditSubject(
  deps: AuditDeps,
  settings: TenantSettings,
  subject: string,
  options: Pick<AuditOptions, "judgeTimeoutMs"> = {},
): Promise<SubjectAudit> {
  const found = nothingFound();
  const snapshot = await deps.events.snapshot(subject);
  const alias = snapshot.expectedAlias;
  if (alias === null || rawBeforeRecord(settings, snapshot) !== null) return found;
  const record = await deps.artifacts.getRecord(subject, alias.parentArtifactId);
  if (rawForRecord(alias.parentArtifactId, record) !== null) return found;
  found.served = 1;
  const artifactId = alias.parentArtifactId;
  const manifest = await deps.artifacts.readManifest(subject, artifactId);
  // Validity now: judged with every event up to the clock, so a revocation or supersession after
  // the coverage counts (a summary published before the switch refused coverage below the epoch's
  // start may cite what it revoked). The gate is run again on the events the summary covers.
  const selector = selectorNamed(manifest.selectorVersion);
  const { events, selection: now } = await readSelection(deps, subject, snapshot.highWater, selector);
  const covered = events.filter((event) => event.sequence <= alias.coversThrough);
  const context = buildGateContext(
    selectInputs(covered, alias.coversThrough, now.policy, selector),
    covered.length,
  );
  const stale = staleness(
    manifest,
    now.validInputs.filter((event) => event.sequence <= alias.coversThrough),
    now.invalid,
  );
  if (stale !== null) {
    found.staleVisible++;
    found.findings.push({ subject, artifactId, kind: "stale-visible", detail: stale });
  }
  const judged = assessCandidate(context, await deps.artifacts.readArtifact(subject, artifactId));
  const gate = judged.report;
  // What the rules cannot decide goes to the judge when one is configured (CONTRACT §4b's limits).
  if (deps.judge && judged.undecided.length > 0) {
    try {
      const verdicts = await judgeUndecided(
        context,
        judged,
        deps.judge,
        AbortSignal.timeout(options.judgeTimeoutMs ?? JUDGE_TIMEOUT_MS),
      );
      found.judged += judged.undecided.length;
      gate.reasons.push(...verdicts.reasons);
    } catch (error) {
      deps.progress(
        `audit: the judge could not weigh ${artifactId} (${error instanceof Error ? error.message : String(error)}); its texts are not measured`,
      );
    }
  }
  found.reasonCounts = countReasons(gate.reasons);
  for (const reason of gate.reasons) {
    const falseFact = FALSE_FACT_REASONS.has(reason.code);
    if (falseFact) found.falseFact++;
    found.findings.push({
      subject,
      artifactId,
      kind: falseFact ? "false-fact" : "lost",
      detail: `${reason.code}${reason.key ? ` ${reason.key}` : ""}${reason.eventId ? ` (${reason.eventId})` : ""}: ${reason.detail}`,
    });
  }
  if (found.findings.some((f) => f.kind !== "lost")) {
    // Containment: the same mark invalidation uses; recall answers raw from now on.
    if (await deps.artifacts.markStale(subject, artifactId, ["PUBLISHED"])) found.contained.push(artifactId);
    // The sweep rebuilds a STALE summary too (its backoff and cap apply) if this request comes
    // to nothing.
    await deps.events.markForCheck(subject);
    await requestRebuildIfNeeded(deps, subject, settings.rebuildAfterEvents);
    for (const finding of found.findings)
      deps.progress(`audit: ${finding.kind} in ${artifactId}: ${finding.detail}`);
  }
  return found;
}

/** How long the judge may take over one summary unless told (AuditOptions.judgeTimeoutMs). */
export const JUDGE_TIMEOUT_MS = 120_000;

/**
 * Why the manifest's inputs are not the raw layer's valid inputs now (null: they are): `valid`, the
 * events through its coverage valid now; `invalid`, why each other event is not.
 */
function staleness(
  manifest: Manifest,
  valid: readonly SequencedEvent[],
  invalid: ReadonlyMap<string, InvalidReason>,
): string | null {
  const now = new Set(valid.map((event) => event.eventId));
  const missing = manifest.inputIds.filter((id) => !now.has(id));
  const added = [...now].filter((id) => !manifest.inputIds.includes(id));
  if (missing.length > 0 || added.length > 0)
    return `inputs differ from the raw layer: ${[
      ...missing.map((id) => `-${id}${invalid.has(id) ? ` (${invalid.get(id)} now)` : ""}`),
      ...added.map((id) => `+${id}`),
    ]
      .slice(0, 10)
      .join(" ")}`;
  const refs = [...valid]
    .sort((a, b) => a.sequence - b.sequence)
    .map((event) => ({ eventId: event.eventId, sequence: event.sequence, hash: recomputedEventHash(event) }));
  const root = inputRoot(refs);
  return root === manifest.inputRoot
    ? null
    : `input root ${root} recomputed from the raw layer is not the manifest's ${manifest.inputRoot}`;
}

/** A deterministic sample: a seeded shuffle, the first `size`. */
function sampleOf(subjects: readonly string[], size: number, seed: number): string[] {
  const next = seededRandom(seed);
  const shuffled = [...subjects].sort();
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [shuffled[i], shuffled[j]] = [shuffled[j] as string, shuffled[i] as string];
  }
  return shuffled.slice(0, Math.max(0, size));
}
