import { describe, expect, it } from "vitest";
import { candidate, codes, gate, log, settled } from "../support/builders.ts";

/**
 * CONTRACT §4b "When it happened" and "Relative time": an event holds its own day in every form the
 * gate reads, and what its relative time expressions resolve to against that day; a date, weekday
 * or year nothing resolves to stays a false fact.
 */
const textClaim = (text: string, derivedFrom: string[]) =>
  settled(`memory:${derivedFrom[0]}`, { text }, derivedFrom);
const reasonsFor = (events: ReturnType<typeof log>, text: string, from: string[]) =>
  gate(events, candidate({ claims: [textClaim(text, from)] })).reasons;

// conv-30 of LoCoMo, its first session (4:04 pm on 20 January 2023, a Friday), as notes.
const conv30 = log(
  {
    eventId: "D1:3",
    kind: "note",
    source: "Jon",
    occurredAt: "2023-01-20T16:04:00Z",
    text: "Lost my job as a banker yesterday, so I'm gonna take a shot at starting my own business.",
  },
  {
    eventId: "D1:4",
    kind: "note",
    source: "Gina",
    occurredAt: "2023-01-20T16:04:00Z",
    text: "Sorry about your job Jon! I lost my job at Door Dash last year too.",
  },
  {
    eventId: "D1:20",
    kind: "note",
    source: "Jon",
    occurredAt: "2023-01-20T16:04:00Z",
    text: "Our dance group has its opening night tomorrow at the festival.",
  },
  {
    eventId: "D1:21",
    kind: "note",
    source: "Gina",
    occurredAt: "2023-01-20T16:04:00Z",
    text: "I started a pottery class last week and I'm taking my store online next month.",
  },
);

describe("a source holds the dates its relative time resolves to, against its own day", () => {
  it("passes Jon's job lost on 2023-01-19 ('yesterday' on 2023-01-20) and refuses 2023-01-18", () => {
    expect(reasonsFor(conv30, "Jon lost his job as a banker on 2023-01-19.", ["D1:3"])).toEqual([]);
    expect(reasonsFor(conv30, "Jon lost his job as a banker on 19 January 2023.", ["D1:3"])).toEqual([]);
    const changed = gate(
      conv30,
      candidate({ claims: [textClaim("Jon lost his job as a banker on 2023-01-18.", ["D1:3"])] }),
    );
    expect(codes(changed)).toEqual(["summary-foreign-token", "unsupported-claim"]);
    expect(changed.reasons[0]?.detail).toMatch(/2023-01-18.*do not hold/);
  });

  it("passes 'in 2022' for 'last year' said in 2023 and refuses 'in 2021'", () => {
    expect(reasonsFor(conv30, "Gina lost her job at Door Dash in 2022.", ["D1:4"])).toEqual([]);
    expect(
      codes(
        gate(conv30, candidate({ claims: [textClaim("Gina lost her job at Door Dash in 2021.", ["D1:4"])] })),
      ),
    ).toEqual(["summary-foreign-token", "unsupported-claim"]);
  });

  it("passes 'opening night tomorrow' written as the next day, not as the day it was said", () => {
    expect(
      reasonsFor(conv30, "The dance group's opening night at the festival is on 2023-01-21.", ["D1:20"]),
    ).toEqual([]);
    expect(
      reasonsFor(conv30, "The dance group's opening night at the festival is on 2023-01-22.", ["D1:20"]),
    ).not.toEqual([]);
  });

  it("holds a week's first and last days and a month of a year, never a made-up day inside them", () => {
    // Said on Friday 2023-01-20: last week is 2023-01-09 to 2023-01-15; next month February 2023.
    const honest = [
      "Gina started a pottery class the week of 2023-01-09 and takes her store online in February 2023.",
      "Gina started a pottery class in the week ending 2023-01-15; her store goes online in February 2023.",
    ];
    for (const text of honest) expect(reasonsFor(conv30, text, ["D1:21"]), text).toEqual([]);
    for (const text of [
      "Gina started a pottery class on 2023-01-11 and takes her store online in February 2023.",
      "Gina started a pottery class the week of 2023-01-09 and takes her store online in March 2023.",
      "Gina started a pottery class the week of 2023-01-09 and takes her store online on 2023-02-14.",
    ])
      expect(codes(gate(conv30, candidate({ claims: [textClaim(text, ["D1:21"])] }))), text).toContain(
        "unsupported-claim",
      );
  });

  it("holds a resolved date only for the event that said it: its text support asks its own sources", () => {
    // D1:4 ("last year") does not hold D1:3's 2023-01-19, though a valid input does.
    const borrowed = gate(
      conv30,
      candidate({ claims: [textClaim("Gina lost her job at Door Dash on 2023-01-19.", ["D1:4"])] }),
    );
    expect(codes(borrowed)).toEqual(["unsupported-claim"]);
  });

  it("resolves nothing for an event without occurredAt", () => {
    const undated = log({ eventId: "u-1", kind: "note", text: "Lost my job as a banker yesterday." });
    expect(
      codes(
        gate(undated, candidate({ claims: [textClaim("Lost my job as a banker on 2023-01-19.", ["u-1"])] })),
      ),
    ).toEqual(["summary-foreign-token", "unsupported-claim"]);
  });

  it("resolves Chinese relative time: 昨天, 上周五, 去年, 三天前, 下个月", () => {
    const events = log({
      eventId: "z-1",
      kind: "note",
      occurredAt: "2023-01-20T09:00:00+08:00",
      text: "昨天提交了报告，上周五开了评审会，去年立项，三天前换了负责人，下个月上线。",
    });
    const honest =
      "2023年1月19日提交了报告，2023年1月13日开了评审会，2022年立项，2023-01-17换了负责人，2023年2月上线。";
    expect(reasonsFor(events, honest, ["z-1"])).toEqual([]);
    for (const changed of [
      "2023年1月18日提交了报告，上周五开了评审会，去年立项，三天前换了负责人，下个月上线。",
      "昨天提交了报告，2023年1月12日开了评审会，去年立项，三天前换了负责人，下个月上线。",
      "昨天提交了报告，上周五开了评审会，2021年立项，三天前换了负责人，下个月上线。",
      "昨天提交了报告，上周五开了评审会，去年立项，三天前换了负责人，2023年3月上线。",
    ])
      expect(codes(gate(events, candidate({ claims: [textClaim(changed, ["z-1"])] }))), changed).toContain(
        "unsupported-claim",
      );
  });

  it("holds the end of a Chinese range whose month is left out: 10月1日-7日 holds 2026-10-07", () => {
    // A real consolidate-v6 answer to pm-wei wrote both as ISO days and was refused for them.
    const events = log(
      {
        eventId: "wei-11",
        kind: "note",
        occurredAt: "2026-09-25T10:00:00+08:00",
        text: "开发团队6个人。国庆假期10月1日-7日不排期。",
      },
      {
        eventId: "wei-45",
        kind: "note",
        occurredAt: "2026-11-18T19:30:00+08:00",
        text: "王芳11月25日至27日请假三天。",
      },
    );
    expect(reasonsFor(events, "开发团队6个人；国庆2026-10-01至2026-10-07不排期", ["wei-11"])).toEqual([]);
    expect(reasonsFor(events, "王芳2026-11-25至2026-11-27请假三天", ["wei-45"])).toEqual([]);
    for (const [changed, from] of [
      ["开发团队6个人；国庆2026-10-01至2026-10-08不排期", "wei-11"],
      ["王芳2026-11-25至2026-11-28请假三天", "wei-45"],
      ["王芳2026-11-25至2026-12-27请假三天", "wei-45"],
    ] as const)
      expect(codes(gate(events, candidate({ claims: [textClaim(changed, [from])] }))), changed).toContain(
        "unsupported-claim",
      );
  });

  it("holds resolved dates for the summary's foreign-token rule too", () => {
    const honest = gate(
      conv30,
      candidate({
        claims: [textClaim("Jon lost his job as a banker yesterday.", ["D1:3"])],
        summary: "Jon lost his banker job on 2023-01-19; Gina lost hers in 2022.",
      }),
    );
    expect(honest.reasons).toEqual([]);
    const invented = gate(
      conv30,
      candidate({
        claims: [textClaim("Jon lost his job as a banker yesterday.", ["D1:3"])],
        summary: "Jon lost his banker job on 2023-01-17.",
      }),
    );
    expect(codes(invented)).toEqual(["summary-foreign-token"]);
  });
});

describe("an event holds its own day in every form answers write it", () => {
  // 2026-07-27 is a Monday.
  const events = log({
    eventId: "ops-7",
    kind: "fact",
    occurredAt: "2026-07-27T09:30:00+02:00",
    text: "The deploy window moved to the evening.",
  });

  it.each([
    "2026-07-27",
    "27 July 2026",
    "July 27, 2026",
    "the 27th of July 2026",
    "2026年7月27日",
    "2026/07/27",
    "07-27",
    "Jul 27",
    "27 July",
    "July 27th",
    "7月27日",
    "Monday",
    "Mon",
    "周一",
    "星期一",
    "2026",
    "July 2026",
    "2026-07-27T09:30:00+02:00",
  ])("passes the deploy window moved on %s", (day) => {
    expect(reasonsFor(events, `The deploy window moved to the evening (${day}).`, ["ops-7"])).toEqual([]);
  });

  it.each(["07-28", "2026-07-28", "Jul 28", "7月28日", "Tuesday", "周二", "2025", "June 2026"])(
    "refuses %s, a day the event does not hold",
    (day) => {
      expect(
        codes(
          gate(
            events,
            candidate({ claims: [textClaim(`The deploy window moved to the evening (${day}).`, ["ops-7"])] }),
          ),
        ),
      ).toEqual(["summary-foreign-token", "unsupported-claim"]);
    },
  );

  it("refuses a weekday no source holds: a note written on a Friday is no Monday", () => {
    const note = log({
      eventId: "bp-3",
      kind: "note",
      occurredAt: "2026-07-24T08:00:00Z",
      text: "Blood pressure average this month 128/82.",
    });
    expect(reasonsFor(note, "Blood pressure average this month 128/82 (Friday).", ["bp-3"])).toEqual([]);
    const report = gate(
      note,
      candidate({ claims: [textClaim("Blood pressure average this month 128/82 (Monday).", ["bp-3"])] }),
    );
    expect(report.reasons[0]?.detail).toMatch(/date "Monday".*do not hold/);
  });
});

describe("a numeric month-day is read as one; a range may be either", () => {
  const on = (occurredAt: string, text: string) => log({ eventId: "r-1", kind: "fact", occurredAt, text });

  it("passes 10-12 for an event of October 12 and for 'the 10-12 people' a source counts", () => {
    const events = on("2026-10-12", "The offsite is confirmed.");
    expect(reasonsFor(events, "The offsite is confirmed (10-12).", ["r-1"])).toEqual([]);
    const range = on("2026-03-02", "The offsite has 10 to 12 people confirmed.");
    expect(reasonsFor(range, "The offsite has 10-12 people confirmed.", ["r-1"])).toEqual([]);
  });

  it("keeps a source's '10-12 people' by '10 to 12 people', and its '07-27' by 'July 27'", () => {
    const range = on("2026-03-02", "The offsite has 10-12 people confirmed.");
    expect(reasonsFor(range, "The offsite has 10 to 12 people confirmed.", ["r-1"])).toEqual([]);
    const day = on("2026-03-02", "The offsite moved to 07-27.");
    expect(reasonsFor(day, "The offsite moved to July 27.", ["r-1"])).toEqual([]);
    expect(
      codes(gate(day, candidate({ claims: [textClaim("The offsite moved to July 28.", ["r-1"])] }))),
    ).toContain("value-changed");
  });

  it("never reads a zero-padded month-day as a range: 07-28 is no '7 to 28'", () => {
    const events = on("2026-07-27", "7 servers, 28 disks.");
    expect(
      codes(gate(events, candidate({ claims: [textClaim("7 servers, 28 disks (07-28).", ["r-1"])] }))),
    ).toContain("unsupported-claim");
  });
});
