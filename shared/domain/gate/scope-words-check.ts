import { scopePhrases } from "../scope-phrases.ts";
import { contentWords, supportingWordsOf, supportsWord } from "../text-support.ts";
import type { CandidateCheck } from "./candidate-check.ts";
import { BINDING_KINDS } from "./text-support-check.ts";

/**
 * CONTRACT §4b "Scope words": a claim whose text restates a constraint or permission as a rule (it
 * holds a negation or modality cue its source also holds) keeps each of that source's scope
 * phrases: at least one content word of "for alpha", "on weekends", "outside business hours" is in
 * the claim's own words (its text, its value, or its key beyond what its scope says); otherwise
 * value-changed. "Vendor X must not be used" from "Never use vendor X for alpha" is refused, under
 * `project:alpha/vendor` and `project:alpha` too: a rule reads as its sentence says.
 */
export function checkScopeWords(check: CandidateCheck): void {
  check.output.claims.forEach((claim, index) => {
    const texts = [claim.text, "text" in claim.value ? claim.value.text : undefined].filter(
      (text): text is string => text !== undefined,
    );
    if (texts.length === 0) return;
    const cues = texts.map((text) => check.mentionsIn(text).cues);
    // Its sources that state a rule the texts restate as one (a cue class both hold).
    const rules = claim.derivedFrom.flatMap((id) => {
      const source = check.context.eventsById.get(id);
      if (source?.text === undefined || !BINDING_KINDS.has(source.kind)) return [];
      if (!check.context.selection.validIds.has(id)) return [];
      const sourceCues = check.mentionsIn(source.text).cues;
      return RULE_CUES.some((cls) => sourceCues[cls] > 0 && cues.some((c) => c[cls] > 0))
        ? [{ id, kind: source.kind, text: source.text }]
        : [];
    });
    if (rules.length === 0) return;
    // The claim's own words: its texts, its value, and what its key says beyond its scope.
    const scopeWords = new Set(wordsOfName(claim.scope));
    const held = new Set([
      ...[...texts, valueWords(claim.value)].flatMap((text) =>
        supportingWordsOf(text.replace(NAME_PUNCTUATION, " ")),
      ),
      ...wordsOfName(claim.key).filter((word) => !scopeWords.has(word)),
    ]);
    for (const rule of rules) {
      const dropped = scopePhrases(rule.text).filter(
        (phrase) => !phrase.words.some((word) => supportsWord(held, word)),
      );
      if (dropped.length > 0)
        check.add(
          "value-changed",
          claim.key,
          claim.scope,
          rule.id,
          `claims[${index}] restates ${rule.id}'s ${rule.kind} without its scope ${dropped.map((p) => `"${p.raw}"`).join(", ")}: none of its words is in the claim's text, its value or its key beyond its scope`,
        );
    }
  });
}

const RULE_CUES = ["negation", "strongModality", "weakModality"] as const;
/** Keys, scopes and ids read as words: `project:alpha/vendor` names project, alpha, vendor. */
const NAME_PUNCTUATION = /[._:/#@-]+/gu;

const wordsOfName = (text: string) => contentWords(text.replace(NAME_PUNCTUATION, " "));

function valueWords(value: object): string {
  return Object.values(value)
    .flat()
    .filter((part): part is string => typeof part === "string")
    .join(" ");
}
