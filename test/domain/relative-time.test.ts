import { describe, expect, it } from "vitest";
import { readRelativeTime, resolveRelativeTime } from "#domain/relative-time.ts";

/** CONTRACT §4b "Relative time": what an event's relative expressions resolve to, against its day. */
const resolved = (text: string, occurredAt: string) => resolveRelativeTime(text, occurredAt);
const days = (text: string, occurredAt: string) => resolved(text, occurredAt).days;

describe("relative time resolved against the day an event happened", () => {
  // 2023-01-20 is a Friday.
  it.each([
    ["Lost my job as a banker yesterday", ["2023-01-19"]],
    ["opening night tomorrow", ["2023-01-21"]],
    ["the day after tomorrow", ["2023-01-22"]],
    ["the day before yesterday", ["2023-01-18"]],
    ["in three days", ["2023-01-23"]],
    ["two days ago", ["2023-01-18"]],
    ["last night", ["2023-01-19"]],
    ["昨天", ["2023-01-19"]],
    ["前天", ["2023-01-18"]],
    ["明天", ["2023-01-21"]],
    ["后天", ["2023-01-22"]],
    ["三天前", ["2023-01-17"]],
    ["3天后", ["2023-01-23"]],
  ])("%s said on 2023-01-20 is the day %j", (text, expected) => {
    expect(days(text, "2023-01-20T16:04:00Z")).toEqual(expected);
  });

  it("reads chrono-node's misreadings from the table: 'tomorrow' beside 'night', month ends, a duration", () => {
    // chrono-node reads "night tomorrow" as today, "next month" on August 31 as October and
    // "last month" on March 31 as March, "for 4 years" as four years ahead.
    expect(days("Opening night tomorrow!", "2023-06-19T10:00:00Z")).toEqual(["2023-06-20"]);
    expect(resolved("Planning a trip there next month.", "2023-08-31T14:52:00").months).toEqual(["2023-09"]);
    expect(resolved("We moved last month.", "2023-03-31").months).toEqual(["2023-02"]);
    expect(resolved("I've known these friends for 4 years", "2023-06-09").years).toEqual([2019]);
    expect(resolved("I've been playing for about four months now", "2023-12-06").months).toEqual(["2023-08"]);
  });

  it("resolves a weekday the ways people mean it; a bare one to the nearest before and after", () => {
    // 2023-01-18 is a Wednesday.
    expect(days("this Friday", "2023-01-18")).toEqual(["2023-01-20"]);
    expect(days("last Saturday", "2023-05-25")).toEqual(["2023-05-20"]);
    expect(days("I went on Friday", "2023-01-18")).toEqual(["2023-01-13", "2023-01-20"]);
    expect(days("next Friday", "2023-01-18")).toEqual(["2023-01-20", "2023-01-27"]);
    expect(days("last Monday", "2023-01-18")).toEqual(["2023-01-09", "2023-01-16"]);
    // Chinese weeks start on Monday: 上周日 is the Sunday before this week, 这周日 this week's.
    expect(days("上周五", "2023-01-20")).toEqual(["2023-01-13"]);
    expect(days("上周日", "2023-01-18")).toEqual(["2023-01-15"]);
    expect(days("这周日", "2023-01-18")).toEqual(["2023-01-22"]);
    expect(days("下周一", "2023-01-18")).toEqual(["2023-01-23"]);
    expect(days("周五", "2023-01-18")).toEqual(["2023-01-13", "2023-01-20"]);
  });

  it("leaves a weekday that recurs or labels a written date, and words that only look like one", () => {
    for (const text of [
      "every Friday we meet",
      "Mondays are busy",
      "每周五开会",
      "每周三次",
      "每个周末都加班",
      "I sat in the sun",
    ])
      expect(resolved(text, "2023-01-18"), text).toEqual({ days: [], bounds: [], months: [], years: [] });
    expect(days("Sat Dec 12, 2026 at 23:05", "2026-12-01")).toEqual(["2026-12-12"]);
  });

  it("holds a week's Monday and Sunday and the day a week before, not the days between", () => {
    // Said on Friday 2023-06-09: last week is Monday 05-29 to Sunday 06-04.
    expect(resolved("I gave a talk at a school last week", "2023-06-09T19:55:00Z")).toEqual({
      days: [],
      bounds: ["2023-05-29", "2023-06-02", "2023-06-04"],
      months: [],
      years: [],
    });
    expect(resolved("上周", "2023-01-20").bounds).toEqual(["2023-01-09", "2023-01-13", "2023-01-15"]);
    expect(resolved("下周", "2023-01-20").bounds).toEqual(["2023-01-23", "2023-01-27", "2023-01-29"]);
    expect(resolved("本周", "2023-01-20").bounds).toEqual(["2023-01-16", "2023-01-20", "2023-01-22"]);
    expect(resolved("two weeks ago", "2023-01-20").bounds).toEqual([
      "2023-01-02",
      "2023-01-06",
      "2023-01-08",
    ]);
    expect(resolved("over the weekend", "2023-01-18").bounds).toEqual([
      "2023-01-14",
      "2023-01-15",
      "2023-01-21",
      "2023-01-22",
    ]);
  });

  it("holds a month as that month of that year, a year as its number", () => {
    expect(resolved("next month", "2023-01-20").months).toEqual(["2023-02"]);
    expect(resolved("this month", "2023-01-20").months).toEqual(["2023-01"]);
    expect(resolved("上个月", "2023-01-20").months).toEqual(["2022-12"]);
    expect(resolved("下个月", "2023-01-20").months).toEqual(["2023-02"]);
    expect(resolved("I lost my job last year", "2023-01-20")).toEqual({
      days: [],
      bounds: [],
      months: [],
      years: [2022],
    });
    expect(resolved("去年", "2023-01-20").years).toEqual([2022]);
    expect(resolved("明年", "2023-01-20").years).toEqual([2024]);
    // "a year ago" keeps its month: August 2022 said in August 2023.
    expect(resolved("I started volunteering about a year ago", "2023-08-03")).toEqual({
      days: [],
      bounds: [],
      months: ["2022-08"],
      years: [2022],
    });
    expect(resolved("last summer", "2023-05-25").years).toEqual([2022]);
    expect(resolved("last summer", "2023-10-02").years).toEqual([2023]);
  });

  it("resolves a day of the month to its nearest occurrences, and a date written without its year", () => {
    expect(days("I met back up with my teammates on the 15th", "2023-08-17")).toEqual([
      "2023-08-15",
      "2023-09-15",
    ]);
    expect(days("15号开会", "2023-01-18")).toEqual(["2023-01-15", "2023-02-15"]);
    expect(days("Who came to dinner on May 3?", "2023-06-01")).toEqual(["2023-05-03"]);
  });

  it("reads a range's end whose month is left out, in Chinese as chrono-node does in English", () => {
    expect(days("国庆假期10月1日-7日不排期", "2026-09-25T10:00:00+08:00")).toEqual([
      "2026-10-01",
      "2026-10-07",
    ]);
    expect(days("11月25至27号请假", "2026-11-18")).toEqual(
      expect.arrayContaining(["2026-11-25", "2026-11-27"]),
    );
    expect(days("on leave Nov 25-27", "2026-11-18")).toEqual(["2026-11-25", "2026-11-27"]);
    // No later day of that month: no end (31 November does not exist; 3 is before 25).
    expect(days("11月25日-31日", "2026-11-18")).toEqual(["2026-11-25"]);
    expect(days("11月25日-3日", "2026-11-18")).toEqual(["2026-11-25"]);
  });

  it("leaves vague time, durations of days and time words chrono-node reads as dates alone", () => {
    for (const text of [
      "I went there recently",
      "a few years ago",
      "the other day",
      "for a few days",
      "2/3 of us came",
      "we march on",
      "this morning",
    ])
      expect(resolved(text, "2023-05-25"), text).toEqual({ days: [], bounds: [], months: [], years: [] });
  });

  it("resolves nothing without a valid occurredAt: the reference is the event's own day, never the clock", () => {
    expect(resolved("yesterday", "")).toEqual({ days: [], bounds: [], months: [], years: [] });
    expect(resolved("yesterday", "2023-02-30")).toEqual({ days: [], bounds: [], months: [], years: [] });
  });

  it("reads the event's wall-clock day in its own offset, a date alone as its own day", () => {
    // 23:30 on the 20th in UTC-8 is already the 21st in UTC: yesterday is still the 19th.
    expect(days("yesterday", "2023-01-20T23:30:00-08:00")).toEqual(["2023-01-19"]);
    expect(days("yesterday", "2023-01-20T00:30:00+09:00")).toEqual(["2023-01-19"]);
    expect(days("last night", "2023-01-20T00:30:00+09:00")).toEqual(["2023-01-19"]);
    expect(days("yesterday", "2023-01-20")).toEqual(["2023-01-19"]);
  });

  it("gives the same answer in every time zone the process may run in", () => {
    const texts = [
      "yesterday",
      "last night",
      "tonight we fly",
      "two days ago",
      "last week",
      "next month",
      "a month ago",
      "last Friday",
      "in 2 weeks",
      "2 hours ago",
      "end of last month",
      "昨天",
      "昨晚",
      "两天后",
      "上周三",
      "六月",
    ];
    const moments = [
      "2023-01-20T23:30:00-08:00",
      "2023-01-20T00:30:00+09:00",
      "2023-03-26T01:30:00Z",
      "2024-02-29",
    ];
    const all = () => moments.flatMap((at) => texts.map((text) => resolveRelativeTime(text, at)));
    const original = process.env.TZ;
    try {
      process.env.TZ = "UTC";
      const utc = all();
      for (const zone of [
        "America/Los_Angeles",
        "Pacific/Kiritimati",
        "Asia/Kolkata",
        "Europe/London",
        "America/Sao_Paulo",
      ]) {
        process.env.TZ = zone;
        expect(all(), zone).toEqual(utc);
      }
    } finally {
      if (original === undefined) delete process.env.TZ;
      else process.env.TZ = original;
    }
  });

  it("says which parser read each expression and why a chrono-node reading was dropped", () => {
    const readings = readRelativeTime("Opening night tomorrow. I was there for a few days.", "2023-06-19");
    expect(readings.filter((r) => r.dropped === undefined).map((r) => [r.text, r.by])).toEqual([
      ["tomorrow", "table"],
    ]);
    expect(readings.filter((r) => r.by === "chrono").map((r) => [r.text.toLowerCase(), r.dropped])).toEqual([
      ["night tomorrow", "the table reads these words"],
      ["for a few days", "a duration or a vague count: no point in time"],
    ]);
  });
});
