import type { TextMentions } from "../mentions.ts";
import { extractMentions } from "../mentions.ts";
import type { MustPreserveItem } from "../must-preserve.ts";
import type { Claim, ConsolidationOutput, ValueData } from "../schemas.ts";
import type { InvalidReason } from "../selector.ts";
import { canonicalValue } from "../values.ts";
import { checkClaim } from "./claim-check.ts";
import { checkConflictList } from "./conflict-check.ts";
import type { GateContext } from "./context.ts";
import { checkForeignTokens } from "./foreign-token-check.ts";
import { checkColdRefs, checkMustPreserve } from "./must-preserve-check.ts";
import { checkPending } from "./pending-check.ts";
import { type GateReason, type GateReasonCode, type GateWarning, reason } from "./report.ts";
import { checkRestatementParts, type Restatement } from "./restatement-check.ts";
import { checkScopeWords } from "./scope-words-check.ts";
import { checkSummaryProse } from "./summary-cue-check.ts";
import { checkSummaryMeaning } from "./summary-meaning-check.ts";
import { checkTextSupport, type UndecidedText } from "./text-support-check.ts";
import { checkTimeAnchors } from "./time-anchor-check.ts";
import { checkWholeEventTexts } from "./whole-event-check.ts";

/** What a check is asked for beyond the contract's defaults. */
export interface GateOptions {
  /** Token budget for the candidate's canonical JSON without coldRefs; no check when absent. */
  budget?: number;
  /** Share of a claim text's content words its own sources must hold (default 0.8; 0 turns it off). */
  textSupport?: number;
  /** A summary sentence below this support is summary-unsupported (default 0: warnings only). */
  summarySupport?: number;
  /**
   * Share of a whole event's content words what derives from it must keep (default 0: below 0.5
   * a `thin-restatement` warning only; above 0, below it is `missing`).
   */
  restatementSupport?: number;
  /** A judge weighs the prose: every summary sentence becomes an undecided text (CONTRACT §4b). */
  judgeSummary?: boolean;
}

/**
 * One check of one schema-valid candidate against a snapshot's context (CONTRACT §4, §4a, §4b).
 * `run` takes the check families in turn (claims, pending items, cold references, restatements,
 * must-preserve items, the conflict list, foreign tokens, text support); each is a module of this
 * folder that reads the context's indexes and records what it found here: the reasons, what keeps
 * each must-preserve item, and the texts for a model judge. Linear in inputs plus candidate: every
 * lookup is in an index built once per snapshot or once per check, never a scan inside a scan.
 */
export class CandidateCheck {
  readonly reasons: GateReason[] = [];
  /** Must-preserve items some claim keeps (by identity: no string hashing on the hot path), and where. */
  readonly keptItems = new Map<MustPreserveItem, string>();
  /** Open tasks kept by a pending item, and text sources restated by a text, and where. */
  readonly pendingKept = new Map<string, string>();
  readonly textCovered = new Map<string, string>();
  /** Texts restating text-only sources, checked together per connected part after the claims. */
  readonly restatements: Restatement[] = [];
  /** A claim's `text` restating its sources beside its `{text}` value, by the value's restatement. */
  readonly alternates = new Map<Restatement, Restatement>();
  readonly warnings: GateWarning[] = [];
  readonly undecided: UndecidedText[] = [];
  /** Each candidate text is read once, whichever checks look at it. */
  private readonly textMentions = new Map<string, TextMentions>();
  /** Claims by key, built on first need: an honest candidate keeps every item and never asks. */
  private claimsByKey: Map<string, Claim[]> | undefined;
  /** Canonical value keys of claims, computed only when a plain comparison cannot decide. */
  private readonly claimValueKeys = new WeakMap<Claim, string>();
  /** Where each cited event is first derived from (`claims[i]`, `pending[i]`), built on first need. */
  private derivations: Map<string, string> | undefined;

  constructor(
    readonly context: GateContext,
    readonly output: ConsolidationOutput,
    readonly options: GateOptions = {},
  ) {}

  /** Every reason the candidate fails the gate for (empty when it keeps everything). */
  run(): GateReason[] {
    for (const [index, claim] of this.output.claims.entries()) checkClaim(this, claim, index);
    for (const [index, item] of this.output.pending.entries()) checkPending(this, item, index);
    checkColdRefs(this);
    checkRestatementParts(this);
    checkMustPreserve(this);
    checkWholeEventTexts(this);
    checkConflictList(this);
    checkForeignTokens(this);
    checkTextSupport(this);
    checkTimeAnchors(this);
    checkScopeWords(this);
    checkSummaryProse(this);
    checkSummaryMeaning(this);
    return this.reasons;
  }

  add(
    code: GateReasonCode,
    key: string | null,
    scope: string | null,
    eventId: string | null,
    detail: string,
  ): void {
    this.reasons.push(reason(code, key, scope, eventId, detail));
  }

  /** Reports a cited id that is not a valid input of the snapshot, and why it is not. */
  reportUnknownSource(id: string, where: string, key: string | null, scope: string | null): void {
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
  validSources(ids: readonly string[], where: string, key: string | null, scope: string | null): string[] {
    const valid: string[] = [];
    for (const [i, id] of ids.entries()) {
      if (this.context.selection.validIds.has(id)) valid.push(id);
      else this.reportUnknownSource(id, `${where}.derivedFrom[${i}]`, key, scope);
    }
    return valid;
  }

  mentionsIn(text: string): TextMentions {
    let mentions = this.textMentions.get(text);
    if (!mentions) {
      mentions = extractMentions(text);
      this.textMentions.set(text, mentions);
    }
    return mentions;
  }

  /** Where each cited event is first derived from: `claims[i]` or `pending[i]`. */
  derivedFrom(): Map<string, string> {
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

  sequenceOf(eventId: string): number {
    return this.context.eventsById.get(eventId)?.sequence ?? 0;
  }

  claimsOn(key: string, scope: string): Claim[] {
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
  holdsValue(claim: Claim, value: ValueData, valueKey: string): boolean {
    return writtenAlike(claim.value, value) || this.valueKeyOf(claim) === valueKey;
  }

  valueKeyOf(claim: Claim): string {
    let valueKey = this.claimValueKeys.get(claim);
    if (valueKey === undefined) {
      valueKey = canonicalValue(claim.value);
      this.claimValueKeys.set(claim, valueKey);
    }
    return valueKey;
  }
}

const INVALID_WORDS: Record<InvalidReason, string> = {
  "after-high-water": "comes after the snapshot's high-water mark",
  revoked: "was revoked",
  superseded: "was superseded",
  untrusted: "is below the trust policy's minTrust",
  "blocked-source": "comes from a blocked source",
  "control-event": "is a revocation (a control event, never content)",
};

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
