import type { MemoryEvent } from "#domain/schemas.ts";
import { seededRandom } from "#domain/seeded-random.ts";
import { syntheticLog } from "./mutations.ts";

/**
 * A gold fact of an evaluation dataset: what a consolidation of the subject must keep. A
 * structured fact (key, scope, value, polarity), a literal mention that some claim must hold, or a
 * fact in words (`fact`, `words`): what an agent relying on the memory must still know, kept when
 * the claims and pending items deriving from its evidence hold every one of the words that must
 * survive (numbers, dates, ids, names, negation and condition words; a list is alternatives).
 */
export interface GoldFact {
  subject: string;
  key?: string;
  scope?: string;
  value?: unknown;
  polarity?: "affirmed" | "negated";
  mention?: string;
  /** The fact as a sentence, for people and for the judge. */
  fact?: string;
  /** The words that must survive; an entry that is a list is satisfied by any one of its words. */
  words?: Array<string | string[]>;
  evidence: string[];
  contested: boolean;
}

/**
 * Synthetic subjects with known gold: the generator writes each fact and so knows it. Structured
 * facts (budget, launch date, vendor ban), a kept literal (retention days) and a contested owner.
 */
export function syntheticDataset(
  subjects: number,
  seed: number,
): { events: Array<MemoryEvent & { subject: string }>; gold: GoldFact[] } {
  const random = seededRandom(seed);
  const events: Array<MemoryEvent & { subject: string }> = [];
  const gold: GoldFact[] = [];
  for (let index = 0; index < subjects; index++) {
    const subject = `synthetic-${seed}-${index}`;
    for (const { sequence: _sequence, ...event } of syntheticLog(random, index)) {
      events.push({ ...event, subject });
      for (const assertion of event.assertions ?? []) {
        const contested = event.eventId.includes("-owner-");
        gold.push({
          subject,
          key: assertion.key,
          scope: assertion.scope,
          value: assertion.value,
          polarity: assertion.polarity,
          evidence: [event.eventId],
          contested,
        });
      }
      if (event.eventId.endsWith("-keep")) {
        const days = /(\d+) days/.exec(event.text ?? "")?.[1];
        if (days)
          gold.push({ subject, mention: `${days} days`, evidence: [event.eventId], contested: false });
      }
    }
  }
  return { events, gold };
}
