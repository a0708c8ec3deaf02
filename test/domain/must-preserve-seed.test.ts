import { describe, expect, it } from "vitest";
import { renderConsolidation } from "#app/prompt-render.ts";
import { loadPrompt } from "#app/prompts.ts";
import { consolidate } from "#domain/consolidator.ts";
import { candidate, codes, contextOf, gate, log, settled } from "../support/builders.ts";

/**
 * CONTRACT §2, must-preserve as the seed draws it (issue 38, decision 3): a fact or preference with
 * no assertions is must-preserve as a whole only when its text holds a number, date or id, or a
 * negation. Its other cue words bind a text that restates it but force no restatement.
 */
const chat = log(
  { eventId: "u-1", kind: "fact", text: "I can try some pottery this weekend if it stops raining." },
  { eventId: "u-2", kind: "fact", text: "I can't eat peanuts." },
  { eventId: "u-3", kind: "preference", text: "I'd like a room on the 3rd floor." },
  { eventId: "u-4", kind: "constraint", text: "Deploys should wait for the all-clear." },
);
const peanuts = settled("diet.peanuts", { text: "can't eat peanuts" }, ["u-2"]);
const floor = settled("room.floor", { text: "room on 3rd floor" }, ["u-3"]);
const allClear = settled("deploys.wait", { text: "deploys should wait for all-clear" }, ["u-4"]);

describe("which free-text facts and preferences must be restated", () => {
  it("holds a text item for a negation, a number, a whole event; none for modal, quantity or condition words alone", () => {
    const items = contextOf(chat).mustPreserve.filter((item) => item.kind === "text");
    expect(items.map((item) => item.eventId)).toEqual(["u-2", "u-3", "u-4"]);
  });

  it('lets "I can try some pottery" go cold', () => {
    const report = gate(chat, candidate({ claims: [peanuts, floor, allClear], coldRefs: ["u-1"] }));
    expect(report.reasons).toEqual([]);
  });

  it('refuses "I can\'t eat peanuts" left cold', () => {
    const report = gate(chat, candidate({ claims: [floor, allClear], coldRefs: ["u-1", "u-2"] }));
    expect(report.reasons.map((r) => [r.code, r.eventId])).toEqual([["missing", "u-2"]]);
  });

  it("still binds a text that restates the cold-able fact: its modal, quantity and condition words are kept", () => {
    const pottery = (text: string) =>
      gate(chat, candidate({ claims: [peanuts, floor, allClear, settled("hobby", { text }, ["u-1"])] }));
    expect(pottery("can try some pottery this weekend if it stops raining").reasons).toEqual([]);
    expect(codes(pottery("tried pottery this weekend; it stops raining"))).toEqual(["value-changed"]);
  });

  it("the deterministic consolidator under a tight budget leaves the cold-able fact out before the others", () => {
    const context = contextOf(chat);
    const output = consolidate(context, { budget: 1 });
    expect(output.coldRefs).toEqual(["u-1"]);
    expect(gate(chat, output).reasons.filter((r) => r.code !== "over-budget")).toEqual([]);
  });
});

describe("the checklist a prompt lists", () => {
  const context = contextOf(chat);
  const checklistOf = (version: string) =>
    renderConsolidation({ ...loadPrompt("consolidate-v5"), version }, context)
      .prompt.split("\n")
      .filter((line) => /^- u-\d: /u.test(line));

  it("of a template whose answers were recorded stays as they saw it (every cue-carrying fact listed)", () => {
    expect(checklistOf("consolidate-v5").map((line) => line.slice(0, 5))).toEqual([
      "- u-1",
      "- u-2",
      "- u-3",
      "- u-4",
      "- u-4",
    ]);
  });

  it("of a later template lists the set as the gate draws it", () => {
    expect(checklistOf("consolidate-next").some((line) => line.startsWith("- u-1"))).toBe(false);
    expect(checklistOf("consolidate-next").some((line) => line.startsWith("- u-2"))).toBe(true);
  });
});
