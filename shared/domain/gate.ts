import { positionKey } from "./conflicts.ts";
import {
  type AssertionEntry,
  buildGateContext,
  type ConflictEntry,
  eventHeldTokens,
  type GateContext,
  holdsMention,
} from "./gate-context.ts";
import {
  type GateReason,
  type GateReasonCode,
  type GateReport,
  type GateWarning,
  reason,
  report,
} from "./gate-report.ts";
import { canonicalJson } from "./hashing.ts";
import {
  CUE_CLASS_NAMES,
  CUE_CLASSES,
  extractMentions,
  mentionKey,
  monthDayOf,
  noCues,
  type TextMentions,
} from "./mentions.ts";
import type { MustPreserveItem } from "./must-preserve.ts";
import { contributesMentions, eventMentions, isWholeEvent } from "./must-preserve.ts";
import type {
  Claim,
  ConsolidationOutput,
  PendingItem,
  SequencedEvent,
  TrustPolicy,
  ValueData,
} from "./schemas.ts";
import { ConsolidationOutput as ConsolidationOutputSchema } from "./schemas.ts";
import type { InvalidReason } from "./selector.ts";
import { checkEventLog, compareStrings, isOpenTask, isTextOnly, keyScope, selectInputs } from "./selector.ts";
import { parseStrictJson } from "./strict-json.ts";
import { eventWords, sentencesOf, supportOf } from "./text-support.ts";
import { countTokens } from "./tokens.ts";
import { canonicalValue, describeValue } from "./values.ts";

export * from "./gate-context.ts";
export * from "./gate-report.ts";

/**
 * The loss gate (CONTRACT §4, §4a). Deterministic: parse the candidate, then check every
 * must-preserve item, every claim, every pending item, the conflicts and the summary text, and
 * report every applicable reason with its stable code. Linear in inputs plus candidate: each check
 * is a lookup in an index built once per snapshot, never a scan inside a scan.
 */
export interface GateOptions {
  /** Token budget for the candidate's canonical JSON without coldRefs; no check when absent. */
  budget?: number;
  /** Share of a claim text's content words its own sources must hold (default 0.8; 0 turns it off). */
  textSupport?: number;
  /** A summary sentence below this support is summary-unsupported (default 0: warnings only). */
  summarySupport?: number;
}

export const DEFAULT_TEXT_SUPPORT = 0.8;
/** Summary sentences below this support are reported as `low-support` warnings. */
export const LOW_SUPPORT_WARNING = 0.5;

/** A verdict with what the gate read: the parsed candidate and, from the same check, its checklist. */
export interface Judgement {
  report: GateReport;
  /** The candidate as the schema parsed it; null when it is not valid JSON or not of the schema. */
  output: ConsolidationOutput | null;
  /** What keeps each must-preserve item, from the same check (null when it never reached the checks). */
  checklist: (() => ChecklistEntry[]) | null;
  /** Texts the deterministic rules passed without full support: for a model judge to weigh. */
  undecided: UndecidedText[];
}

/**
 * A text the gate let through but could not fully support: a claim or pending text with some
 * content word its sources lack (support below 1), or a summary sentence reported `low-support`.
 */
export interface UndecidedText {
  kind: "claim" | "summary";
  /** Where it stands in the candidate: `claims[3]`, `pending[0]`, `summary`. */
  where: string;
  text: string;
  /** The events it cites (for the summary: every valid input). */
  derivedFrom: readonly string[];
  key: string | null;
  scope: string | null;
  support: number;
}

/** Runs the gate on a candidate given as the model's raw text (it may be truncated or not JSON). */
export function gateCandidateText(
  context: GateContext,
  candidateText: string,
  options: GateOptions = {},
): GateReport {
  return judgeCandidateText(context, candidateText, options).report;
}

/** gateCandidateText, keeping the parsed candidate and its checklist for the caller (one check). */
export function judgeCandidateText(
  context: GateContext,
  candidateText: string,
  options: GateOptions = {},
): Judgement {
  const parsed = parseStrictJson(candidateText);
  if (!parsed.ok)
    return {
      report: report(
        context,
        [reason("schema-invalid", null, null, null, `candidate is ${parsed.problem}`)],
        null,
        options,
      ),
      output: null,
      checklist: null,
      undecided: [],
    };
  return judgeCandidate(context, parsed.value, options);
}

/** Runs the gate on a candidate already parsed from JSON (not yet checked against the schema). */
export function gateCandidate(context: GateContext, raw: unknown, options: GateOptions = {}): GateReport {
  return judgeCandidate(context, raw, options).report;
}

/** gateCandidate, keeping the parsed candidate, its checklist and the undecided texts (one check). */
export function judgeCandidate(context: GateContext, raw: unknown, options: GateOptions = {}): Judgement {
  const parsed = ConsolidationOutputSchema.safeParse(raw);
  if (!parsed.success) {
    const reasons = parsed.error.issues.map((issue) =>
      reason(
        "schema-invalid",
        null,
        null,
        null,
        `${issue.path.length > 0 ? issue.path.join(".") : "candidate"}: ${issue.message}`,
      ),
    );
    return { report: report(context, reasons, null, options), output: null, checklist: null, undecided: [] };
  }
  const check = new GateCheck(context, parsed.data, options);
  const reasons = check.run();
  let tokens: number | null = null;
  if (options.budget !== undefined) {
    tokens = budgetTokens(raw);
    if (tokens > options.budget)
      reasons.push(
        reason(
          "over-budget",
          null,
          null,
          null,
          `candidate is ${tokens} tokens, budget is ${options.budget}; move low-value inputs to coldRefs`,
        ),
      );
  }
  return {
    report: report(context, reasons, parsed.data, options, tokens, check.warnings),
    output: parsed.data,
    checklist: () => check.checklist(),
    undecided: check.undecided,
  };
}

/** Every reason a schema-valid output fails the gate for (empty when it keeps everything). */
export function checkConsolidationOutput(context: GateContext, output: ConsolidationOutput): GateReason[] {
  return new GateCheck(context, output).run();
}

/** A must-preserve item and the part of a candidate that keeps it (null: not kept). */
export interface ChecklistEntry {
  item: MustPreserveItem;
  keptBy: string | null;
}

/** The gate's reasons and, from the same check, what keeps each must-preserve item. */
export function gateChecklist(
  context: GateContext,
  output: ConsolidationOutput,
): { reasons: GateReason[]; checklist: ChecklistEntry[] } {
  const check = new GateCheck(context, output);
  const reasons = check.run();
  return { reasons, checklist: check.checklist() };
}

/** Tokens of the candidate as the budget counts them: canonical JSON without coldRefs. */
export function budgetTokens(raw: unknown): number {
  const { coldRefs: _coldRefs, ...rest } = raw as Record<string, unknown>;
  return countTokens(canonicalJson(rest));
}

const INVALID_WORDS: Record<InvalidReason, string> = {
  "after-high-water": "comes after the snapshot's high-water mark",
  revoked: "was revoked",
  superseded: "was superseded",
  untrusted: "is below the trust policy's minTrust",
  "blocked-source": "comes from a blocked source",
  "control-event": "is a revocation (a control event, never content)",
};

/** A claim's `{text}` value or a pending item's text over the text-only sources it names. */
interface Restatement {
  text: string;
  written: TextMentions;
  sources: readonly SequencedEvent[];
  where: string;
  key: string | null;
  scope: string | null;
}

/** One pass over a parsed candidate; collects reasons. */
class GateCheck {
  private readonly reasons: GateReason[] = [];
  /** Must-preserve items some claim keeps (by identity: no string hashing on the hot path), and where. */
  private readonly keptItems = new Map<MustPreserveItem, string>();
  /** Open tasks kept by a pending item, and text sources restated by a text, and where. */
  private readonly pendingKept = new Map<string, string>();
  private readonly textCovered = new Map<string, string>();
  /** Texts restating text-only sources, judged together per connected part after the claims. */
  private readonly restatements: Restatement[] = [];
  /** A claim's `text` restating its sources beside its `{text}` value, by the value's restatement. */
  private readonly alternates = new Map<Restatement, Restatement>();
  /** Mentions a restating text was already refused for (a changed value): not reported twice. */
  private readonly replacedMentions = new Set<string>();
  readonly warnings: GateWarning[] = [];
  readonly undecided: UndecidedText[] = [];
  /** Each candidate text is read once, whichever checks look at it. */
  private readonly textMentions = new Map<string, TextMentions>();
  /** Claims by key, built on first need: an honest candidate keeps every item and never asks. */
  private claimsByKey: Map<string, Claim[]> | undefined;
  /** Canonical value keys of claims, computed only when a plain comparison cannot decide. */
  private readonly claimValueKeys = new WeakMap<Claim, string>();

  constructor(
    private readonly context: GateContext,
    private readonly output: ConsolidationOutput,
    private readonly options: GateOptions = {},
  ) {}

  run(): GateReason[] {
    for (const [index, claim] of this.output.claims.entries()) this.checkClaim(claim, index);
    for (const [index, item] of this.output.pending.entries()) this.checkPending(item, index);
    for (const [index, id] of this.output.coldRefs.entries()) {
      const event = this.context.eventsById.get(id);
      if (!this.context.selection.validIds.has(id))
        this.reportUnknownSource(id, `coldRefs[${index}]`, null, null);
      else if (event && (isWholeEvent(event) || isOpenTask(event)))
        this.add(
          "missing",
          null,
          null,
          id,
          `coldRefs[${index}] leaves ${event.kind === "task" ? "open task" : event.kind} ${id} cold; it must be restated, never left cold`,
        );
    }
    this.checkRestatementParts();
    this.checkMustPreserve();
    this.checkConflictList();
    this.checkForeignTokens();
    this.checkTextSupport();
    return this.reasons;
  }

  /**
   * After `run`: each must-preserve item with the part of the candidate that keeps it, exactly as
   * this check judged it (null when the item is not kept). Reviewers see the gate's own verdict.
   */
  checklist(): ChecklistEntry[] {
    const conflictMissing = new Set(
      this.reasons
        .filter((r) => r.code === "conflict-missing")
        .map((r) => keyScope(r.key ?? "", r.scope ?? "")),
    );
    const keptBy = (item: MustPreserveItem): string | null => {
      if (item.kind === "assertion") return this.keptItems.get(item) ?? null;
      if (item.kind === "pending") return this.pendingKept.get(item.eventId) ?? null;
      if (item.kind === "text")
        return this.textCovered.get(item.eventId) ?? this.pendingKept.get(item.eventId) ?? null;
      if (item.kind === "event") return this.derivedFrom().get(item.eventId) ?? null;
      const index = this.output.unresolvedConflicts.findIndex(
        (c) => c.key === item.key && c.scope === item.scope,
      );
      return index >= 0 && !conflictMissing.has(keyScope(item.key, item.scope))
        ? `unresolvedConflicts[${index}]`
        : null;
    };
    return this.context.mustPreserve.map((item) => ({ item, keptBy: keptBy(item) }));
  }

  private add(
    code: GateReasonCode,
    key: string | null,
    scope: string | null,
    eventId: string | null,
    detail: string,
  ): void {
    this.reasons.push(reason(code, key, scope, eventId, detail));
  }

  /** Reports a cited id that is not a valid input of the snapshot, and why it is not. */
  private reportUnknownSource(id: string, where: string, key: string | null, scope: string | null): void {
    const why = this.context.selection.invalid.get(id);
    this.add(
      "unknown-source",
      key,
      scope,
      id,
      `${where} names ${id}, which ${why ? INVALID_WORDS[why] : "is not an event of this snapshot"}`,
    );
  }

  /** The valid ids among `ids`; each other one is reported (the location text is built only then). */
  private validSources(
    ids: readonly string[],
    where: string,
    key: string | null,
    scope: string | null,
  ): string[] {
    const valid: string[] = [];
    for (const [i, id] of ids.entries()) {
      if (this.context.selection.validIds.has(id)) valid.push(id);
      else this.reportUnknownSource(id, `${where}.derivedFrom[${i}]`, key, scope);
    }
    return valid;
  }

  private checkClaim(claim: Claim, index: number): void {
    const { key, scope, polarity } = claim;

    this.checkClaimStatus(claim, index);
    let matched = false;
    let sameKeySeen = false;
    for (let i = 0; i < claim.derivedFrom.length; i++) {
      const source = claim.derivedFrom[i] as string;
      if (!this.context.selection.validIds.has(source)) {
        this.reportUnknownSource(source, `claims[${index}].derivedFrom[${i}]`, key, scope);
        continue;
      }
      const entries = this.context.assertionsByEvent.get(source) ?? [];
      let sawKey = false;
      let exact = false;
      for (const entry of entries) {
        if (entry.key !== key || entry.scope !== scope) continue;
        sawKey = true;
        if (entry.polarity === polarity && this.holdsValue(claim, entry.value, entry.valueKey)) {
          exact = true;
          if (entry.item !== null && !this.keptItems.has(entry.item))
            this.keptItems.set(entry.item, `claims[${index}]`);
        }
      }
      sameKeySeen ||= sawKey;
      matched ||= exact;
      if (sawKey && !exact) this.reportBentSource(claim, index, source, entries);
    }
    if (matched || sameKeySeen) return;
    const where = `claims[${index}]`;
    // In log order, so the event a reason names never depends on how derivedFrom was ordered.
    const sources = claim.derivedFrom
      .filter((id) => this.context.selection.validIds.has(id))
      .sort((a, b) => this.sequenceOf(a) - this.sequenceOf(b));

    const holders = this.context.holdersByKeyScope
      .get(key, scope)
      ?.get(positionKey(polarity, this.valueKeyOf(claim)));
    if (holders) {
      this.add(
        "provenance-missing",
        key,
        scope,
        holders[0] ?? null,
        `${where} is asserted by ${holders.join(", ")}, which derivedFrom does not name`,
      );
      return;
    }
    const textSources = sources
      .map((id) => this.context.eventsById.get(id))
      .filter((event) => event !== undefined && isTextOnly(event)) as SequencedEvent[];
    if (textSources.length > 0 && "text" in claim.value) {
      if (polarity !== "affirmed") {
        this.add(
          "polarity-flipped",
          key,
          scope,
          textSources[0]?.eventId ?? null,
          `${where} is negated; a claim over free text carries its negations in the text and is affirmed`,
        );
        return;
      }
      const restatement = this.checkTextFidelity(claim.value.text, textSources, where, key, scope);
      // Its `text`, when it says another sentence, restates the same sources in the value's place.
      if (restatement && claim.text !== undefined && claim.text.trim() !== claim.value.text.trim())
        this.alternates.set(restatement, {
          ...restatement,
          text: claim.text,
          written: this.mentionsIn(claim.text),
          where: `${where}.text`,
        });
      return;
    }
    const basis =
      textSources.length > 0
        ? "its sources are free text, which a structured claim cannot restate"
        : "no source in derivedFrom asserts it";
    this.add(
      "unsupported-claim",
      key,
      scope,
      sources[0] ?? null,
      `${where} (${key} = ${describeValue(claim.value)}, ${polarity}): ${basis}`,
    );
  }

  /**
   * Status against the conflicts (selector v2): a contradicting position must be contested; a
   * position on a conflicted key that contradicts nothing is a settled fact, and contested where
   * no conflict exists is invented.
   */
  private checkClaimStatus(claim: Claim, index: number): void {
    const { key, scope } = claim;
    const conflict = this.context.conflictsByKeyScope.get(key, scope);
    if (!conflict) {
      if (claim.status === "contested")
        this.add(
          "conflict-invented",
          key,
          scope,
          null,
          `claims[${index}] marks ${key} contested, but no valid inputs contradict each other on it`,
        );
      return;
    }
    const contradicting = this.isContradictingPosition(claim, conflict);
    if (claim.status === "settled" && contradicting !== false)
      this.add(
        "conflict-settled",
        key,
        scope,
        null,
        `claims[${index}] states ${key} as settled, but ${conflict.members.join(", ")} contradict each other on it; mark it contested`,
      );
    if (claim.status === "contested" && contradicting === false)
      this.add(
        "conflict-invented",
        key,
        scope,
        null,
        `claims[${index}] marks ${describeValue(claim.value)} (${claim.polarity}) on ${key} contested, but that position contradicts no other source; state it as settled`,
      );
  }

  /**
   * Whether the claim restates one of the conflict's contradicting positions (true), a held
   * position that contradicts nothing (false), or no held position at all (null).
   */
  private isContradictingPosition(claim: Claim, conflict: ConflictEntry): boolean | null {
    for (const position of conflict.contradicting.values())
      if (position.polarity === claim.polarity && this.holdsValue(claim, position.value, position.valueKey))
        return true;
    const held = this.context.holdersByKeyScope
      .get(claim.key, claim.scope)
      ?.has(positionKey(claim.polarity, this.valueKeyOf(claim)));
    if (held) return false;
    return null;
  }

  /** The source says something else on the claim's (key, scope): the claim bent it. */
  private reportBentSource(
    claim: Claim,
    index: number,
    source: string,
    entries: readonly AssertionEntry[],
  ): void {
    const { key, scope, polarity } = claim;
    for (const entry of entries) {
      if (entry.key !== key || entry.scope !== scope) continue;
      if (!this.holdsValue(claim, entry.value, entry.valueKey))
        this.add(
          "value-changed",
          key,
          scope,
          source,
          `claims[${index}] says ${describeValue(claim.value)}, ${source} says ${describeValue(entry.value)}`,
        );
      else
        this.add(
          "polarity-flipped",
          key,
          scope,
          source,
          `claims[${index}] is ${polarity}, ${source} is ${entry.polarity}`,
        );
    }
  }

  /**
   * Records a text restating text-only sources (a claim's `{text}` value, a pending item's text);
   * restatements are judged together by `checkRestatementParts`, since honest models split one
   * source into several texts and merge several sources into one.
   */
  private checkTextFidelity(
    text: string,
    sources: readonly SequencedEvent[],
    where: string,
    key: string | null,
    scope: string | null,
  ): Restatement | null {
    const contributing = sources.filter(contributesMentions);
    for (const source of contributing)
      if (!this.textCovered.has(source.eventId)) this.textCovered.set(source.eventId, where);
    if (contributing.length === 0) return null;
    const restatement = { text, written: this.mentionsIn(text), sources: contributing, where, key, scope };
    this.restatements.push(restatement);
    return restatement;
  }

  /**
   * CONTRACT §4b "Split and merged restatements": in each connected part of the graph of text-only
   * sources and the texts restating them, every mention of every source is kept by some text of
   * the part (a text holding another value of its kind changed it: value-changed; none: missing),
   * and for each cue class the texts' counts sum to the sources' counts (negation:
   * polarity-flipped; the other classes: value-changed naming the class).
   */
  private checkRestatementParts(): void {
    this.checkRestatementGraph(this.restatements);
    // Claims whose `text` says another sentence than their value: the graph again with those texts
    // in the values' places (each rendering must keep the meaning; they are never summed).
    if (this.alternates.size > 0)
      this.checkRestatementGraph(this.restatements.map((r) => this.alternates.get(r) ?? r));
  }

  private checkRestatementGraph(restatements: readonly Restatement[]): void {
    const parent = new Map<string, string>();
    const find = (node: string): string => {
      let root = node;
      while (parent.get(root) !== root) root = parent.get(root) ?? root;
      parent.set(node, root);
      return root;
    };
    const union = (a: string, b: string) => {
      if (!parent.has(a)) parent.set(a, a);
      if (!parent.has(b)) parent.set(b, b);
      parent.set(find(a), find(b));
    };
    restatements.forEach((restatement, index) => {
      for (const source of restatement.sources) union(`text:${index}`, `event:${source.eventId}`);
    });
    const parts = new Map<string, { texts: Restatement[]; sources: Map<string, SequencedEvent> }>();
    restatements.forEach((restatement, index) => {
      const root = find(`text:${index}`);
      let part = parts.get(root);
      if (!part) {
        part = { texts: [], sources: new Map() };
        parts.set(root, part);
      }
      part.texts.push(restatement);
      for (const source of restatement.sources) part.sources.set(source.eventId, source);
    });
    for (const { texts, sources } of parts.values()) this.checkPart(texts, [...sources.values()]);
  }

  private checkPart(texts: readonly Restatement[], unordered: readonly SequencedEvent[]): void {
    const sources = [...unordered].sort((a, b) => a.sequence - b.sequence);
    const first = texts[0] as Restatement;
    const writtenKeys = new Set<string>();
    for (const { written } of texts)
      for (const mention of written.mentions) {
        writtenKeys.add(mentionKey(mention));
        // A full date written in the claim also keeps a source's year-less "Dec 3".
        const monthDay = mention.kind === "date" ? monthDayOf(mention.key) : null;
        if (monthDay !== null) writtenKeys.add(`date:${monthDay}`);
      }
    const requiredKeys = new Set<string>();
    const required = noCues();
    for (const source of sources) {
      const { mentions, cues } = eventMentions(source);
      for (const mention of mentions) requiredKeys.add(mentionKey(mention));
      for (const cls of CUE_CLASSES) required[cls] += cues[cls];
    }
    for (const source of sources) {
      const restating = texts.find((text) => text.sources.includes(source)) ?? first;
      for (const mention of eventMentions(source).mentions) {
        if (writtenKeys.has(mentionKey(mention))) continue;
        const changed = texts
          .filter((text) => text.sources.includes(source))
          .flatMap((text) => text.written.mentions.map((other) => ({ text, other })))
          .find(({ other }) => other.kind === mention.kind && !requiredKeys.has(mentionKey(other)));
        if (changed) this.replacedMentions.add(`${changed.text.where}|${mentionKey(changed.other)}`);
        if (changed)
          this.add(
            "value-changed",
            changed.text.key,
            changed.text.scope,
            source.eventId,
            `${changed.text.where} turns ${source.eventId}'s "${mention.raw}" into "${changed.other.raw}"`,
          );
        else
          this.add(
            "missing",
            restating.key,
            restating.scope,
            source.eventId,
            `${source.eventId}'s ${mention.kind} "${mention.raw}" is kept by no restatement (${texts.map((t) => t.where).join(", ")})`,
          );
      }
    }
    const written = noCues();
    for (const text of texts) for (const cls of CUE_CLASSES) written[cls] += text.written.cues[cls];
    const where = texts.map((text) => text.where).join(", ");
    for (const cls of CUE_CLASSES) {
      if (written[cls] === required[cls]) continue;
      this.add(
        cls === "negation" ? "polarity-flipped" : "value-changed",
        first.key,
        first.scope,
        sources[0]?.eventId ?? null,
        `${where} ${texts.length > 1 ? "have" : "has"} ${written[cls]} ${CUE_CLASS_NAMES[cls]} cue(s); ${sources.length > 1 ? "their source texts have" : "its source text has"} ${required[cls]}`,
      );
    }
  }

  private checkPending(item: PendingItem, index: number): void {
    const where = `pending[${index}]`;
    const sources = this.validSources(item.derivedFrom, where, null, null)
      .map((id) => this.context.eventsById.get(id) as SequencedEvent)
      .sort((a, b) => a.sequence - b.sequence);
    const tasks = sources.filter(isOpenTask);
    if (tasks.length === 0) {
      if (sources.length > 0)
        this.add(
          "unsupported-claim",
          null,
          null,
          sources[0]?.eventId ?? null,
          `${where} is pending, but none of its sources is an open task`,
        );
      return;
    }
    for (const task of tasks)
      if (!this.pendingKept.has(task.eventId)) this.pendingKept.set(task.eventId, where);
    const textTasks = tasks.filter(isTextOnly);
    if (textTasks.length > 0) this.checkTextFidelity(item.text, textTasks, where, null, null);
  }

  private checkMustPreserve(): void {
    for (const item of this.context.mustPreserve) {
      switch (item.kind) {
        case "assertion": {
          if (this.keptItems.has(item)) break;
          const claims = this.claimsOn(item.key, item.scope);
          if (claims.length === 0)
            this.add(
              "missing",
              item.key,
              item.scope,
              item.eventId,
              `no claim keeps ${item.key} = ${describeValue(item.value)} (${item.polarity})`,
            );
          else if (
            claims.some(
              (claim) =>
                claim.polarity === item.polarity && this.holdsValue(claim, item.value, item.valueKey),
            )
          )
            this.add(
              "provenance-missing",
              item.key,
              item.scope,
              item.eventId,
              `the claim of ${item.key} = ${describeValue(item.value)} does not name ${item.eventId}`,
            );
          // Otherwise a claim speaks to (key, scope) with another value: its own check reported
          // it, unless that claim matched another assertion of the same event exactly (an event
          // holding both polarities of one value): then nothing else says the item was lost.
          else if (this.restatesOnlyOtherAssertions(claims, item))
            this.add(
              "missing",
              item.key,
              item.scope,
              item.eventId,
              `no claim keeps ${item.key} = ${describeValue(item.value)} (${item.polarity}) of ${item.eventId}`,
            );
          break;
        }
        case "pending":
          if (!this.pendingKept.has(item.eventId))
            this.add(
              "pending-missing",
              null,
              null,
              item.eventId,
              `open task ${item.eventId} has no pending item: "${shorten(item.text)}"`,
            );
          break;
        case "text":
          // An open task's text is kept by its pending item; without one it is pending-missing. A
          // whole event nothing derives from is reported once, by its own item.
          if (
            !this.textCovered.has(item.eventId) &&
            !this.pendingItemExpected(item.eventId) &&
            !this.wholeEventUnkept(item.eventId)
          )
            this.add(
              "missing",
              null,
              null,
              item.eventId,
              `no claim restates ${item.eventId}, whose ${describeMentions(item)} must be kept`,
            );
          break;
        case "conflict":
          this.checkConflictPositions(item);
          break;
        case "event":
          // A constraint, permission or decision no claim derives from (and not already reported
          // missing through one of its assertions or mentions).
          if (
            !this.derivedFrom().has(item.eventId) &&
            !this.reasons.some((r) => r.code === "missing" && r.eventId === item.eventId)
          )
            this.add(
              "missing",
              null,
              null,
              item.eventId,
              `no claim derives from ${item.eventKind} ${item.eventId}; a ${item.eventKind} is never left cold`,
            );
          break;
      }
    }
  }

  /** Where each cited event is first derived from (`claims[i]`, `pending[i]`), built on first need. */
  private derivations: Map<string, string> | undefined;
  private mentionsIn(text: string): TextMentions {
    let mentions = this.textMentions.get(text);
    if (!mentions) {
      mentions = extractMentions(text);
      this.textMentions.set(text, mentions);
    }
    return mentions;
  }

  private wholeEventUnkept(eventId: string): boolean {
    const event = this.context.eventsById.get(eventId);
    return event !== undefined && isWholeEvent(event) && !this.derivedFrom().has(eventId);
  }

  private derivedFrom(): Map<string, string> {
    if (!this.derivations) {
      this.derivations = new Map();
      for (const [index, claim] of this.output.claims.entries())
        for (const id of claim.derivedFrom)
          if (!this.derivations.has(id)) this.derivations.set(id, `claims[${index}]`);
      for (const [index, item] of this.output.pending.entries())
        for (const id of item.derivedFrom)
          if (!this.derivations.has(id)) this.derivations.set(id, `pending[${index}]`);
    }
    return this.derivations;
  }

  /**
   * Whether the claims on an item's (key, scope) that name its event all restate another of that
   * event's assertions exactly (so none of them was reported), leaving the item itself unkept.
   */
  private restatesOnlyOtherAssertions(
    claims: readonly Claim[],
    item: MustPreserveItem & { kind: "assertion" },
  ): boolean {
    const naming = claims.filter((claim) => claim.derivedFrom.includes(item.eventId));
    const entries = (this.context.assertionsByEvent.get(item.eventId) ?? []).filter(
      (entry) => entry.key === item.key && entry.scope === item.scope,
    );
    return (
      naming.length > 0 &&
      naming.every((claim) =>
        entries.some(
          (entry) => entry.polarity === claim.polarity && this.holdsValue(claim, entry.value, entry.valueKey),
        ),
      )
    );
  }

  private sequenceOf(eventId: string): number {
    return this.context.eventsById.get(eventId)?.sequence ?? 0;
  }

  private claimsOn(key: string, scope: string): Claim[] {
    if (!this.claimsByKey) {
      this.claimsByKey = new Map();
      for (const claim of this.output.claims) {
        const claims = this.claimsByKey.get(claim.key);
        if (claims) claims.push(claim);
        else this.claimsByKey.set(claim.key, [claim]);
      }
    }
    return (this.claimsByKey.get(key) ?? []).filter((claim) => claim.scope === scope);
  }

  /** Whether a claim's value equals a source value: written alike, or canonically equal. */
  private holdsValue(claim: Claim, value: ValueData, valueKey: string): boolean {
    return writtenAlike(claim.value, value) || this.valueKeyOf(claim) === valueKey;
  }

  private valueKeyOf(claim: Claim): string {
    let valueKey = this.claimValueKeys.get(claim);
    if (valueKey === undefined) {
      valueKey = canonicalValue(claim.value);
      this.claimValueKeys.set(claim, valueKey);
    }
    return valueKey;
  }

  private pendingItemExpected(eventId: string): boolean {
    const event = this.context.eventsById.get(eventId);
    return event !== undefined && isOpenTask(event);
  }

  /** Every contradicting position of a conflict appears as a contested claim. */
  private checkConflictPositions(item: MustPreserveItem & { kind: "conflict" }): void {
    const contested = this.claimsOn(item.key, item.scope).filter((claim) => claim.status === "contested");
    for (const position of this.context.conflictsByKeyScope
      .get(item.key, item.scope)
      ?.contradicting.values() ?? []) {
      if (
        !contested.some(
          (claim) =>
            claim.polarity === position.polarity && this.holdsValue(claim, position.value, position.valueKey),
        )
      )
        this.add(
          "conflict-missing",
          item.key,
          item.scope,
          position.eventId,
          `${position.eventId}'s ${describeValue(position.value)} (${position.polarity}) is not kept as a contested claim`,
        );
    }
  }

  /** unresolvedConflicts equals the snapshot's conflicts as a set (members order-free). */
  private checkConflictList(): void {
    const conflictId = (key: string, scope: string, members: readonly string[]) =>
      `${keyScope(key, scope)}\u0000${[...new Set(members)].sort(compareStrings).join(",")}`;
    const listed = new Set(this.output.unresolvedConflicts.map((c) => conflictId(c.key, c.scope, c.members)));
    const expected = new Set<string>();
    for (const conflict of this.context.selection.conflicts) {
      const id = conflictId(conflict.key, conflict.scope, conflict.members);
      expected.add(id);
      if (!listed.has(id))
        this.add(
          "conflict-missing",
          conflict.key,
          conflict.scope,
          conflict.members[0] ?? null,
          `unresolvedConflicts lacks ${conflict.key} between ${conflict.members.join(", ")}`,
        );
    }
    for (const conflict of this.output.unresolvedConflicts) {
      if (!expected.has(conflictId(conflict.key, conflict.scope, conflict.members)))
        this.add(
          "conflict-invented",
          conflict.key,
          conflict.scope,
          conflict.members[0] ?? null,
          `unresolvedConflicts names ${conflict.key} between ${conflict.members.join(", ")}, which is not an unresolved conflict of the valid inputs`,
        );
    }
  }

  /**
   * CONTRACT §4b "Text support": every claim's text, `{text}` value and pending text is supported
   * by the events in its own derivedFrom: (a) each number, date and id in it is held by them (an
   * identifier token too), (b) at least `textSupport` of its content words occur among their
   * words; otherwise unsupported-claim naming what is not supported. Summary sentences are scored
   * against all valid inputs: below 0.5 a `low-support` warning, below `summarySupport` (when set)
   * summary-unsupported.
   */
  private checkTextSupport(): void {
    const threshold = this.options.textSupport ?? DEFAULT_TEXT_SUPPORT;
    const texts: Array<{
      where: string;
      text: string;
      derivedFrom: readonly string[];
      key: string | null;
      scope: string | null;
    }> = [];
    this.output.claims.forEach((claim, index) => {
      const value = "text" in claim.value ? claim.value.text : undefined;
      if (value !== undefined)
        texts.push({
          where: `claims[${index}]`,
          text: value,
          derivedFrom: claim.derivedFrom,
          key: claim.key,
          scope: claim.scope,
        });
      if (claim.text !== undefined && claim.text !== value)
        texts.push({
          where: `claims[${index}].text`,
          text: claim.text,
          derivedFrom: claim.derivedFrom,
          key: claim.key,
          scope: claim.scope,
        });
    });
    this.output.pending.forEach((item, index) => {
      texts.push({
        where: `pending[${index}]`,
        text: item.text,
        derivedFrom: item.derivedFrom,
        key: null,
        scope: null,
      });
    });
    for (const { where, text, derivedFrom, key, scope } of texts) {
      const sources = derivedFrom
        .filter((id) => this.context.selection.validIds.has(id))
        .map((id) => this.context.eventsById.get(id) as SequencedEvent);
      if (sources.length === 0) continue; // its citations are refused already
      const foreign = this.mentionsIn(text)
        .mentions.filter((mention) => !this.replacedMentions.has(`${where}|${mentionKey(mention)}`))
        .filter((mention) => !sources.some((source) => holdsMention(eventHeldTokens(source), mention)))
        .map((mention) => `${mention.kind} "${mention.raw}"`);
      for (const token of identifierTokens(text))
        if (!sources.some((source) => eventHeldTokens(source).ids.has(token) || writtenIn(source, token)))
          foreign.push(`id "${token}"`);
      if (foreign.length > 0)
        this.add(
          "unsupported-claim",
          key,
          scope,
          sources[0]?.eventId ?? null,
          `${where} holds ${[...new Set(foreign)].join(", ")}, which its sources (${derivedFrom.join(", ")}) do not hold`,
        );
      if (threshold <= 0) continue;
      const support = supportOf(
        text,
        sources.length === 1 ? eventWords(sources[0] as SequencedEvent) : unionOf(sources.map(eventWords)),
        this.mentionsIn(text).mentions,
      );
      if (support.ratio < threshold)
        this.add(
          "unsupported-claim",
          key,
          scope,
          sources[0]?.eventId ?? null,
          `${where}: ${support.unsupported.length} of its content words are in none of its sources (${derivedFrom.join(", ")}): ${support.unsupported.slice(0, 8).join(", ")} (support ${support.ratio.toFixed(2)}, needed ${threshold})`,
        );
      else if (support.ratio < 1 && foreign.length === 0)
        this.undecided.push({ kind: "claim", where, text, derivedFrom, key, scope, support: support.ratio });
    }
    this.checkSummarySupport();
  }

  private checkSummarySupport(): void {
    const sentences = sentencesOf(this.output.summary);
    if (sentences.length === 0) return;
    const words = inputWordsOf(this.context);
    const required = this.options.summarySupport ?? 0;
    for (const sentence of sentences) {
      const support = supportOf(sentence, words);
      const detail = `summary sentence "${shorten(sentence)}" has support ${support.ratio.toFixed(2)}: ${support.unsupported.slice(0, 8).join(", ")} in no valid input`;
      if (required > 0 && support.ratio < required) this.add("summary-unsupported", null, null, null, detail);
      else if (support.ratio < LOW_SUPPORT_WARNING) {
        this.warnings.push({ code: "low-support", detail });
        this.undecided.push({
          kind: "summary",
          where: "summary",
          text: sentence,
          derivedFrom: this.context.selection.validInputs.map((event) => event.eventId),
          key: null,
          scope: null,
          support: support.ratio,
        });
      }
    }
  }

  private checkForeignTokens(): void {
    const texts: Array<[string, string]> = [["summary", this.output.summary]];
    this.output.claims.forEach((claim, index) => {
      if (claim.text !== undefined) texts.push([`claims[${index}].text`, claim.text]);
      if ("text" in claim.value) texts.push([`claims[${index}].value.text`, claim.value.text]);
    });
    for (const [index, item] of this.output.pending.entries())
      texts.push([`pending[${index}].text`, item.text]);
    const { held } = this.context;
    for (const [where, text] of texts) {
      for (const mention of this.mentionsIn(text).mentions) {
        if (!holdsMention(held, mention))
          this.add(
            "summary-foreign-token",
            null,
            null,
            null,
            `${where} holds ${mention.kind} "${mention.raw}", which no valid input holds`,
          );
      }
    }
  }
}

/** Same kind and same written fields: then equal without canonicalising (the common, honest case). */
function writtenAlike(a: ValueData, b: ValueData): boolean {
  if ("quantity" in a) return "quantity" in b && a.quantity === b.quantity && a.unit === b.unit;
  if ("text" in a) return "text" in b && a.text === b.text;
  if ("date" in a) return "date" in b && a.date === b.date;
  if ("entity" in a) return "entity" in b && a.entity === b.entity;
  if ("bool" in a) return "bool" in b && a.bool === b.bool;
  return (
    "scopes" in b &&
    a.scopes.length === b.scopes.length &&
    a.scopes.every((scope, i) => scope === b.scopes[i])
  );
}

/** Whether an event writes `token` anywhere: its text, eventId, source, keys, scopes or values. */
function writtenIn(event: SequencedEvent, token: string): boolean {
  if ((event.text ?? "").includes(token) || event.eventId === token || event.source?.includes(token))
    return true;
  return (event.assertions ?? []).some(
    (assertion) =>
      assertion.key.includes(token) ||
      assertion.scope.includes(token) ||
      JSON.stringify(assertion.value).includes(token),
  );
}

const inputWords = new WeakMap<GateContext, Set<string>>();
/** The words of every valid input of a snapshot, built once per context (summary support). */
function inputWordsOf(context: GateContext): Set<string> {
  let words = inputWords.get(context);
  if (!words) {
    words = unionOf(context.selection.validInputs.map(eventWords));
    inputWords.set(context, words);
  }
  return words;
}

function unionOf(sets: ReadonlyArray<ReadonlySet<string>>): Set<string> {
  const union = new Set<string>();
  for (const set of sets) for (const item of set) union.add(item);
  return union;
}

/**
 * Identifier tokens (CONTRACT §4b): ASCII letters or digits joined by `:` or `@` (`repo:web:read`,
 * `alex@proj-a`), holding a letter (`14:55` is a time, not an id).
 */
function identifierTokens(text: string): string[] {
  return [...text.normalize("NFKC").matchAll(IDENTIFIER_TOKEN)].map((match) =>
    match[0].replace(/[.,;:]+$/u, ""),
  );
}
const IDENTIFIER_TOKEN =
  /(?<![A-Za-z0-9])(?=[A-Za-z0-9._/-]*[A-Za-z])[A-Za-z0-9][A-Za-z0-9._-]*(?:[:@][A-Za-z0-9][A-Za-z0-9._/-]*)+/gu;

function shorten(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function describeMentions(item: MustPreserveItem & { kind: "text" }): string {
  const parts = item.mentions.map((mention) => `"${mention.raw}"`);
  for (const cls of CUE_CLASSES)
    if (item.cues[cls] > 0) parts.push(`${item.cues[cls]} ${CUE_CLASS_NAMES[cls]} cue(s)`);
  return parts.join(", ");
}

/**
 * The offline gate in one call: check the log, select its valid inputs up to its last sequence
 * (or `highWater`), index them and judge the candidate text. Throws EventLogError on a bad log.
 */
export function gateEventLog(
  events: readonly SequencedEvent[],
  policy: TrustPolicy,
  candidateText: string,
  options: GateOptions & { highWater?: number } = {},
): GateReport {
  const log = checkEventLog(events);
  const highWater = options.highWater ?? log.reduce((max, event) => Math.max(max, event.sequence), 0);
  const context = buildGateContext(selectInputs(log, highWater, policy), log.length);
  return gateCandidateText(context, candidateText, options);
}
