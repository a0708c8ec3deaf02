import fc from "fast-check";
import type { EventInput } from "./builders.ts";

/**
 * Random event logs drawn from the seed's fixture families: assertions of every value kind over a
 * few shared keys (so conflicts arise), free text in English and Chinese with numbers, dates, ids
 * and negations, open and done tasks, notes, supersessions and revocations.
 */

const KEYS = [
  "project:alpha/budget",
  "project:alpha/launch",
  "user:alex/run-limit",
  "ui/theme",
  "agent:bot/access",
  "vendor",
];
const SCOPES = ["global", "project:alpha", "project:beta"];
const TEXTS = [
  "Budget for alpha is 12,500 USD; never use vendor X.",
  "Invoice INV-20931 is due 2026-12-03.",
  "Alex doesn't want meetings on Fridays.",
  "Run no more than 5 km a day.",
  "预算不要超过12500美元。",
  "3天内完成，别忘了。",
  "Sam likes green tea.",
  "Ship build 550e8400-e29b-41d4-a716-446655440000 by Dec 5, 2026.",
  "I don't not want the weekly report.",
];

const value = fc.oneof(
  fc.record({
    quantity: fc.constantFrom("5", "5000", "12500.00", "0.1", "8"),
    unit: fc.constantFrom("USD", "EUR", "km", "m", "h"),
  }),
  fc.record({ date: fc.constantFrom("2026-12-03", "2026-12-10", "2026-12-03T09:00:00Z") }),
  fc.record({ text: fc.constantFrom("dark", "light", "tea") }),
  fc.record({ entity: fc.constantFrom("person:alex@proj-a", "person:alex@proj-b", "vendor:x") }),
  fc.record({ scopes: fc.subarray(["repo:x:read", "repo:x:write", "repo:x:admin"], { minLength: 1 }) }),
  fc.record({ bool: fc.boolean() }),
);

const assertion = fc.record({
  key: fc.constantFrom(...KEYS),
  value,
  polarity: fc.constantFrom("affirmed", "negated"),
  scope: fc.constantFrom(...SCOPES),
});

/** One event before ids are given: `target` picks an earlier event for supersede/revoke. */
type Spec =
  | { type: "assertions"; kind: string; assertions: unknown[]; trust: string }
  | { type: "text"; kind: string; text: string }
  | { type: "task"; text: string; done: boolean }
  | { type: "supersede"; target: number; assertions: unknown[] }
  | { type: "revoke"; target: number };

const spec: fc.Arbitrary<Spec> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      type: fc.constant("assertions" as const),
      kind: fc.constantFrom("fact", "preference", "constraint", "decision", "permission", "note"),
      assertions: fc.array(assertion, { minLength: 1, maxLength: 3 }),
      trust: fc.constantFrom("user", "verified", "tool", "untrusted"),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      type: fc.constant("text" as const),
      kind: fc.constantFrom("fact", "preference", "constraint", "decision", "permission", "note"),
      text: fc.constantFrom(...TEXTS),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant("task" as const),
      text: fc.constantFrom(...TEXTS),
      done: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant("supersede" as const),
      target: fc.nat(),
      assertions: fc.array(assertion, { minLength: 1, maxLength: 2 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ type: fc.constant("revoke" as const), target: fc.nat() }) },
);

function toEvents(specs: readonly Spec[]): EventInput[] {
  const events: EventInput[] = [];
  specs.forEach((item, index) => {
    const eventId = `e-${index + 1}`;
    const earlier =
      events.length > 0 ? events[("target" in item ? item.target : 0) % events.length]?.eventId : undefined;
    switch (item.type) {
      case "assertions":
        events.push({
          eventId,
          kind: item.kind,
          text: `statement ${eventId}`,
          assertions: item.assertions,
          trust: item.trust,
        });
        break;
      case "text":
        events.push({ eventId, kind: item.kind, text: item.text });
        break;
      case "task":
        events.push({ eventId, kind: "task", text: item.text, taskStatus: item.done ? "done" : "open" });
        break;
      case "supersede":
        events.push({
          eventId,
          kind: "fact",
          text: `update ${eventId}`,
          assertions: item.assertions,
          ...(earlier ? { supersedes: [earlier] } : {}),
        });
        break;
      case "revoke":
        if (earlier) events.push({ eventId, kind: "revocation", revokes: [earlier] });
        break;
    }
  });
  return events;
}

export const eventLog = fc.array(spec, { minLength: 1, maxLength: 25 }).map(toEvents);

/** A note that changes nothing: no assertions, no numbers, dates, ids or negations. */
export const irrelevantNote = fc.constantFrom(
  "Chatted about the weather.",
  "Coffee was good today.",
  "闲聊了一会儿。",
);
