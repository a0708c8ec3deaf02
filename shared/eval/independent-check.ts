import type { Claim, SequencedEvent } from "#domain/schemas.ts";

/**
 * An independent reading of "a claim is supported by the events it cites", for the evaluation's
 * false-new-fact rate. It deliberately shares no code with the gate (no mention extractor, no
 * canonical values, no text support): a fault in the gate cannot hide itself here. It is cruder,
 * and says so: a structured claim is supported when a cited event asserts the same key, scope and
 * polarity with a value equal after plain normalisation (numbers compared as numbers with the same
 * unit, text trimmed and lower-cased); a text claim when every run of digits in it appears among
 * its cited events' digit runs (thousands separators dropped) and at least half of its words of
 * four letters or more appear in their texts.
 */
export function independentlySupported(claim: Claim, cited: readonly SequencedEvent[]): boolean {
  if (
    "text" in claim.value &&
    cited.every((event) => !(event.assertions ?? []).some((a) => a.key === claim.key))
  )
    return textSupported(claim.value.text, cited);
  return cited.some((event) =>
    (event.assertions ?? []).some(
      (assertion) =>
        assertion.key === claim.key &&
        assertion.scope === claim.scope &&
        assertion.polarity === claim.polarity &&
        sameValue(assertion.value as Record<string, unknown>, claim.value as Record<string, unknown>),
    ),
  );
}

function sameValue(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  if ("quantity" in a && "quantity" in b)
    return Number(a.quantity) === Number(b.quantity) && (a.unit ?? null) === (b.unit ?? null);
  if ("text" in a && "text" in b)
    return String(a.text).trim().toLowerCase() === String(b.text).trim().toLowerCase();
  return JSON.stringify(a) === JSON.stringify(b);
}

const digitRuns = (text: string) =>
  (text.replace(/(\d),(\d)/g, "$1$2").match(/\d+/g) ?? []).map((d) => String(Number(d)));
const longWords = (text: string) => text.toLowerCase().match(/[a-z]{4,}/g) ?? [];

function textSupported(text: string, cited: readonly SequencedEvent[]): boolean {
  const sourceText = cited.map((event) => event.text ?? "").join(" \n ");
  const sourceDigits = new Set(digitRuns(sourceText));
  if (!digitRuns(text).every((run) => sourceDigits.has(run))) return false;
  const words = longWords(text);
  if (words.length === 0) return true;
  const sourceWords = new Set(longWords(sourceText));
  return words.filter((word) => sourceWords.has(word)).length * 2 >= words.length;
}
