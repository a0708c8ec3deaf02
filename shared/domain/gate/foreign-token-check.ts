import type { CandidateCheck } from "./candidate-check.ts";
import { holdsMention } from "./context.ts";

/**
 * Foreign tokens (CONTRACT §4a): the summary, every claim's `text` and `{text}` value and every
 * pending item's text hold only numbers, dates and ids some valid input holds.
 */
export function checkForeignTokens(check: CandidateCheck): void {
  const texts: Array<[string, string]> = [["summary", check.output.summary]];
  check.output.claims.forEach((claim, index) => {
    if (claim.text !== undefined) texts.push([`claims[${index}].text`, claim.text]);
    if ("text" in claim.value) texts.push([`claims[${index}].value.text`, claim.value.text]);
  });
  for (const [index, item] of check.output.pending.entries())
    texts.push([`pending[${index}].text`, item.text]);
  const { held } = check.context;
  for (const [where, text] of texts) {
    for (const mention of check.mentionsIn(text).mentions) {
      if (!holdsMention(held, mention))
        check.add(
          "summary-foreign-token",
          null,
          null,
          null,
          `${where} holds ${mention.kind} "${mention.raw}", which no valid input holds`,
        );
    }
  }
}
