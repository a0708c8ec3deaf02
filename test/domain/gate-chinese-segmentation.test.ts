import { describe, expect, it } from "vitest";
import { assessCandidate } from "#domain/gate/index.ts";
import type { ConsolidationOutput } from "#domain/schemas.ts";
import { contentWords, eventWords, supportOf } from "#domain/text-support.ts";
import { candidate, codes, contextOf, gate, log, settled } from "../support/builders.ts";

/**
 * CONTRACT §4b "Chinese without segmentation" (issue 38, decision 4): Intl.Segmenter cuts the same
 * Han text differently in different contexts (急事 in "晓雯有急事", 急 + 事先 in "晓雯有急事先走了"),
 * so Han words are compared by the characters they write, in order: a restatement using its
 * sources' characters in their order is supported, however either side was cut. The log is a
 * family doctor's follow-up notes, written as the held-out `family-doctor-zh` log is (its first
 * answer was refused for words its sources hold).
 */
const familyDoctor = log(
  { eventId: "fd-1", kind: "fact", text: "妈妈今年72岁，高血压十年了，一直在社区医院王医生那里看。" },
  {
    eventId: "fd-2",
    kind: "constraint",
    text: "妈妈对青霉素过敏，任何青霉素类抗生素都不能开。",
    assertions: [
      {
        key: "patient.allergy.penicillin",
        scope: "person:mom",
        value: { bool: true },
        polarity: "affirmed",
      },
    ],
  },
  { eventId: "fd-3", kind: "decision", text: "王医生决定降压药改成每天早上一片氨氯地平。" },
  { eventId: "fd-4", kind: "fact", text: "晓雯有急事先走了，周三的复查改由爸爸陪妈妈去。" },
  { eventId: "fd-5", kind: "task", text: "把这周的血压记录拍照发给王医生。" },
  { eventId: "fd-6", kind: "preference", text: "妈妈喜欢上午看诊，下午容易累。" },
  { eventId: "fd-7", kind: "note", text: "今天天气不错，妈妈心情也好。" },
);

/** An honest answer in the terse notes consolidate-v5 asks for: fd-4 split into two claims. */
const honest = (xiaowen: string): ConsolidationOutput =>
  candidate({
    claims: [
      settled("mom.profile", { text: "妈妈72岁；高血压十年；社区医院王医生" }, ["fd-1"]),
      {
        ...settled("patient.allergy.penicillin", { bool: true }, ["fd-2"]),
        scope: "person:mom",
        text: "任何青霉素类抗生素都不能开",
      },
      settled("mom.medication", { text: "降压药改成每天早上一片氨氯地平" }, ["fd-3"]),
      settled("xiaowen", { text: xiaowen }, ["fd-4"]),
      settled("checkup.wednesday", { text: "周三复查改由爸爸陪妈妈" }, ["fd-4"]),
    ],
    pending: [{ text: "血压记录拍照发给王医生", derivedFrom: ["fd-5"] }],
    coldRefs: ["fd-6", "fd-7"],
    summary: "妈妈的高血压随访。",
  });

describe("Han words compared by their characters, not by how they were segmented", () => {
  it("the segmenter cuts 急事 one way in the source and another in its restatement", () => {
    expect(contentWords("晓雯有急事先走了")).toContain("事先");
    expect(contentWords("晓雯有急事")).toContain("急事");
  });

  it("a restatement writing the source's characters in its order is fully supported", () => {
    const source = eventWords(familyDoctor[3] as (typeof familyDoctor)[number]);
    expect(supportOf("晓雯有急事", source)).toEqual({ ratio: 1, unsupported: [] });
    expect(supportOf("急事先走", source)).toEqual({ ratio: 1, unsupported: [] });
  });

  it("characters out of the source's order are not: 前晚 (the night before last) for 前一晚", () => {
    const [event] = log({ eventId: "x", kind: "fact", text: "复查前一晚十点以后不要进食。" });
    const support = supportOf("复查前晚不要进食", eventWords(event as (typeof familyDoctor)[number]));
    expect(support.unsupported).toEqual(["前晚"]);
  });

  it("the family doctor's honest answer passes", () => {
    expect(gate(familyDoctor, honest("晓雯有急事")).reasons).toEqual([]);
  });

  it("a word no source writes is still refused (晓雯出差: away on business)", () => {
    const report = gate(familyDoctor, honest("晓雯出差"));
    expect(codes(report)).toEqual(["unsupported-claim"]);
    expect(report.reasons[0]?.detail).toContain("出差");
  });

  it("a whole event's words are kept by a restatement writing them in other cuts", () => {
    const events = log({
      eventId: "fd-8",
      kind: "decision",
      text: "晓雯有急事先走了，复查由爸爸陪。",
      assertions: [
        { key: "checkup.escort", scope: "person:mom", value: { text: "爸爸" }, polarity: "affirmed" },
      ],
    });
    const restated = candidate({
      claims: [
        {
          ...settled("checkup.escort", { text: "爸爸" }, ["fd-8"]),
          scope: "person:mom",
          text: "晓雯有急事，先走了；复查爸爸陪",
        },
      ],
    });
    // 急 and 事先 as the source was cut are 急事 and 先 in the restatement: the same characters.
    expect(gate(events, restated, { restatementSupport: 0.8 }).reasons).toEqual([]);
  });

  it("summary prose is read the same way: its support, and the sources it draws on", () => {
    const events = log({ eventId: "s-1", kind: "fact", text: "晓雯有急事先走，不要等她。" });
    const claims = [settled("xiaowen", { text: "晓雯有急事先走，不要等她" }, ["s-1"])];
    const warnings = (summary: string) =>
      (assessCandidate(contextOf(events), candidate({ claims, summary })).report.warnings ?? []).map(
        (w) => w.code,
      );
    expect(warnings("晓雯有急事，先走。")).toEqual(["summary-cue-dropped"]);
    expect(warnings("有急事，走吧")).toEqual(["summary-cue-dropped"]);
    expect(warnings("晓雯有急事先走，不要等她。")).toEqual([]);
  });
});
