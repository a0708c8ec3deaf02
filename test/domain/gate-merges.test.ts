import { describe, expect, it } from "vitest";
import { extractMentions } from "#domain/mentions.ts";
import { candidate, codes, gate, log, settled } from "../support/builders.ts";

/**
 * CONTRACT §4b "Split and merged restatements": a text merging a must-preserve source with the
 * notes and done tasks that refine it may hold their cue words too (cases from real answers to the
 * compressing prompt), but never drops the source's and never adds one no cited text holds.
 */
const legal = log(
  {
    eventId: "lg-13",
    kind: "constraint",
    text: "Castellan DPA: EU-only hosting (Frankfurt region), sub-processors listed in Annex 3.",
  },
  {
    eventId: "lg-23",
    kind: "task",
    taskStatus: "done",
    text: "LEG-312 done: Annex 3 sent to Maria Keller on Oct 22 - 7 sub-processors, all in the EU or covered by SCCs.",
  },
  {
    eventId: "lg-12",
    kind: "task",
    taskStatus: "open",
    text: "LEG-305: resolve the liability cap discrepancy (EUR 2.0M aggregate vs EUR 1.45M per year) before v4 goes out.",
  },
  {
    eventId: "lg-42",
    kind: "note",
    text: "Jonas hasn't decided whether EUR 1.75M aggregate is acceptable; he needs the CFO's view.",
  },
);
const dpa = (text: string, derivedFrom: string[]) => settled("contract.castellan_dpa", { text }, derivedFrom);
const cap = (text: string, derivedFrom: string[]) => ({ text, derivedFrom });
const claims = [
  dpa("Castellan DPA: EU-only hosting (Frankfurt region), sub-processors listed in Annex 3.", ["lg-13"]),
];

describe("merged restatements keep the cue words of every text they cite", () => {
  it("a claim over a constraint and a done task may keep the task's 'all'", () => {
    const merged = dpa(
      "Castellan DPA: EU-only hosting (Frankfurt region), sub-processors listed in Annex 3; 7 sub-processors, all in the EU or covered by SCCs (LEG-312, Oct 22).",
      ["lg-13", "lg-23"],
    );
    const report = gate(
      legal,
      candidate({
        claims: [merged],
        pending: [
          cap(
            "LEG-305: resolve the liability cap discrepancy (EUR 2.0M aggregate vs EUR 1.45M per year) before v4 goes out.",
            ["lg-12"],
          ),
        ],
        coldRefs: ["lg-42"],
      }),
    );
    expect(report.reasons).toEqual([]);
  });

  it("a pending item over an open task and a note may keep the note's negation", () => {
    const pending = cap(
      "LEG-305: resolve the liability cap discrepancy (EUR 2.0M aggregate vs EUR 1.45M per year) before v4 goes out; Jonas hasn't decided whether EUR 1.75M aggregate is acceptable.",
      ["lg-12", "lg-42"],
    );
    expect(gate(legal, candidate({ claims, pending: [pending], coldRefs: ["lg-23"] })).reasons).toEqual([]);
  });

  it("a universal the cited texts do not hold is still a change", () => {
    const bent = dpa(
      "Castellan DPA: all EU-only hosting (Frankfurt region), sub-processors listed in Annex 3.",
      ["lg-13"],
    );
    const report = gate(
      legal,
      candidate({
        claims: [bent],
        pending: [
          cap(
            "LEG-305: resolve the liability cap discrepancy (EUR 2.0M aggregate vs EUR 1.45M per year) before v4 goes out.",
            ["lg-12"],
          ),
        ],
        coldRefs: ["lg-23", "lg-42"],
      }),
    );
    expect(codes(report)).toContain("value-changed");
  });

  it("a negation beyond what every cited text holds is polarity-flipped", () => {
    const pending = cap(
      "LEG-305: do not resolve the liability cap discrepancy (EUR 2.0M aggregate vs EUR 1.45M per year) before v4 goes out; Jonas hasn't decided whether EUR 1.75M aggregate is acceptable.",
      ["lg-12", "lg-42"],
    );
    expect(codes(gate(legal, candidate({ claims, pending: [pending], coldRefs: ["lg-23"] })))).toContain(
      "polarity-flipped",
    );
  });

  it("a negation the constraint holds is still needed when a note is merged in", () => {
    const events = log(
      { eventId: "c-1", kind: "constraint", text: "Never deploy on Fridays." },
      { eventId: "n-1", kind: "note", text: "Deploys on Fridays caused two incidents." },
    );
    const merged = settled("deploy.fridays", { text: "Deploying on Fridays caused two incidents." }, [
      "c-1",
      "n-1",
    ]);
    expect(codes(gate(events, candidate({ claims: [merged] })))).toContain("polarity-flipped");
  });
});

describe("the full-width colon is punctuation", () => {
  it("never joins an id to the date after it", () => {
    expect(
      extractMentions("OPS-88：10月30日前确认上线日期").mentions.map((m) => `${m.kind}:${m.key}`),
    ).toEqual(extractMentions("OPS-88: 10月30日前确认上线日期").mentions.map((m) => `${m.kind}:${m.key}`));
    const events = log({
      eventId: "wei-25",
      kind: "task",
      taskStatus: "open",
      text: "OPS-88延期：张总出差回来后再定，改为10月30日前确认上线日期。",
    });
    const pending = {
      text: "OPS-88：10月30日前确认上线日期（张总出差回来后再定）。",
      derivedFrom: ["wei-25"],
    };
    expect(gate(events, candidate({ pending: [pending] })).reasons).toEqual([]);
  });
});
