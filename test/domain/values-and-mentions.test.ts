import { describe, expect, it } from "vitest";
import { canonicalDate } from "#domain/dates.ts";
import { countNegationCues, extractMentions, mentionKey } from "#domain/mentions.ts";
import { parseDecimal } from "#domain/quantity.ts";
import { ConsolidationOutput, MemoryEvent, Value } from "#domain/schemas.ts";
import { canonicalValue } from "#domain/values.ts";

const same = (a: unknown, b: unknown) => canonicalValue(Value.parse(a)) === canonicalValue(Value.parse(b));

describe("canonical values", () => {
  it.each([
    [
      { quantity: "5", unit: "km" },
      { quantity: "5000", unit: "m" },
    ],
    [{ quantity: "1.50" }, { quantity: "1.5" }],
    [
      { quantity: "36", unit: "km/h" },
      { quantity: "10", unit: "m/s" },
    ],
    [
      { quantity: "1", unit: "lb" },
      { quantity: "453.59237", unit: "g" },
    ],
    [
      { quantity: "3", unit: "天" },
      { quantity: "72", unit: "h" },
    ],
    [
      { quantity: "1", unit: "KiB" },
      { quantity: "8192", unit: "b" },
    ],
    [{ date: "2026-11-20T10:00:00Z" }, { date: "2026-11-20T12:00:00+02:00" }],
    [{ date: "2026-11-20T10:00:00" }, { date: "2026-11-20T10:00:00.000Z" }],
    [{ text: "Never  use\n vendor X" }, { text: "Never use vendor X" }],
    [{ text: "Cafe\u0301" }, { text: "Café" }],
    [
      { quantity: "9", unit: "degR" },
      { quantity: "5", unit: "K" },
    ],
    [{ scopes: ["b", "a", "a"] }, { scopes: ["a", "b"] }],
  ])("%j equals %j", (a, b) => {
    expect(same(a, b)).toBe(true);
  });

  it.each([
    [
      { quantity: "5", unit: "km" },
      { quantity: "5", unit: "mi" },
    ],
    [
      { quantity: "8", unit: "km" },
      { quantity: "5", unit: "mi" },
    ],
    [
      { quantity: "12500", unit: "USD" },
      { quantity: "12500", unit: "EUR" },
    ],
    [{ quantity: "12500", unit: "USD" }, { quantity: "12500" }],
    [
      { quantity: "1", unit: "month" },
      { quantity: "30", unit: "day" },
    ],
    [
      { quantity: "1", unit: "year" },
      { quantity: "365.25", unit: "day" },
    ],
    [
      { quantity: "1", unit: "km/h" },
      { quantity: "0.2777777777777778", unit: "m/s" },
    ],
    [
      { quantity: "1", unit: "GB" },
      { quantity: "1", unit: "GiB" },
    ],
    [{ date: "2026-11-20" }, { date: "2026-11-20T00:00:00Z" }],
    [{ date: "2026-11-20" }, { date: "2026-11-21" }],
    [{ entity: "person:alex@proj-a" }, { entity: "person:alex@proj-b" }],
    [{ scopes: ["a"] }, { scopes: ["a", "b"] }],
    [{ bool: true }, { text: "true" }],
  ])("%j differs from %j", (a, b) => {
    expect(same(a, b)).toBe(false);
  });

  it("refuses a date that does not exist and a JSON number quantity", () => {
    expect(Value.safeParse({ date: "2026-02-30" }).success).toBe(false);
    expect(canonicalDate("2028-02-29")).toBe("day:2028-02-29");
    expect(Value.safeParse({ quantity: 12500 }).success).toBe(false);
    expect(Value.safeParse({ quantity: "12,500" }).success).toBe(false);
  });
});

const mentionsOf = (text: string) => extractMentions(text).mentions.map(mentionKey);

describe("mention extraction", () => {
  it("reads scientific notation as the number it writes, not as an id", () => {
    const keys = (text: string) => extractMentions(text).mentions.map(mentionKey);
    expect(keys("lr 1e-4")).toEqual(keys("lr 0.0001"));
    expect(keys("lr 2.5E3")).toEqual(keys("lr 2500"));
    expect(extractMentions("lr 1e-4").mentions.map((m) => m.kind)).toEqual(["number"]);
    // Letters around it still make an id.
    expect(extractMentions("build a1e5 and 1e5x").mentions.map((m) => m.kind)).toEqual(["id", "id"]);
  });

  it("reads numbers with their units in English and Chinese", () => {
    expect(mentionsOf("Budget is 12,500 USD")).toEqual(mentionsOf("Budget is $12500.00"));
    expect(mentionsOf("run 5 km")).toEqual(mentionsOf("run 5000m"));
    expect(mentionsOf("3 天内")).toEqual(mentionsOf("within 72 hours"));
    expect(mentionsOf("预算12500美元")).toEqual(mentionsOf("12,500 USD"));
    expect(mentionsOf("5 km")).not.toEqual(mentionsOf("5 mi"));
  });

  it("reads dates in the extractor's forms as one calendar day", () => {
    const day = mentionsOf("2026-12-03");
    for (const text of [
      "Dec 3 2026",
      "Dec 3, 2026",
      "December 3rd, 2026",
      "3 December 2026",
      "2026年12月3日",
      "2026/12/03",
    ]) {
      expect(mentionsOf(text)).toEqual(day);
    }
    expect(mentionsOf("Dec 4, 2026")).not.toEqual(day);
  });

  it("reads ids mixing letters and digits, and UUIDs, without splitting their digits off", () => {
    expect(mentionsOf("invoice INV-20931 for 550e8400-e29b-41d4-a716-446655440000")).toEqual([
      "id:INV-20931",
      "id:550e8400-e29b-41d4-a716-446655440000",
    ]);
  });

  it("reads units whose mathjs factor is no decimal (Rankine's 5/9, the imaginary VAR) without failing", () => {
    expect(() => extractMentions("It was 9 degR; the load is 3 VAR.")).not.toThrow();
    expect(mentionsOf("3 VAR")).toEqual(mentionsOf("3VAR"));
    expect(mentionsOf("3 VAR")).not.toEqual(mentionsOf("3 W"));
  });

  it("does not take prose words for units", () => {
    expect(mentionsOf("5 in total")).toEqual(mentionsOf("5"));
    expect(mentionsOf("meet at 10 am")).toEqual(mentionsOf("10"));
    expect(mentionsOf("the 3rd floor")).toEqual(mentionsOf("the third floor")); // an ordinal holds its number (§4b)
  });

  it('reads "one" before the week form "week of YYYY-MM-DD" as prose, and any other count of weeks as one', () => {
    // A real answer's "won a few tournaments, second one week of 2022-04-25" names a week, no span.
    expect(mentionsOf("second one week of 2022-04-25")).toEqual(mentionsOf("week of 2022-04-25"));
    expect(mentionsOf("stayed one week in May")).toEqual(mentionsOf("stayed 1 week in May"));
    expect(mentionsOf("two weeks of 2022-04-25")).toEqual([
      ...mentionsOf("2 weeks"),
      ...mentionsOf("2022-04-25"),
    ]);
  });

  it.each([
    ["never use vendor X", 1],
    ["I don't not want it", 2],
    ["cannot, can't, won't", 3],
    ["no longer nothing nobody none neither nor without", 7],
    ["notable knot snow", 0],
    ["不要上线", 1],
    ["没有预算，别去，禁止入内", 3],
    ["不是没有", 2],
    ["勿忘，未完成，无效，非法，莫急", 5],
  ])("counts the negation cues of %j as %i", (text, count) => {
    expect(countNegationCues(text)).toBe(count);
  });
});

describe("exact decimals", () => {
  it.each([
    ["1.5e3", "1500"],
    ["-0.50", "-1/2"],
    [".5", "1/2"],
    ["5.", "5"],
    ["1e-21", "1/1000000000000000000000"],
    ["+12500.00", "12500"],
  ])("reads %s exactly as %s", (text, fraction) => {
    expect(parseDecimal(text).toFraction()).toBe(fraction);
  });

  it("refuses what is not a decimal", () => {
    for (const text of ["12,500", "1/2", "0x10", "", "1e", "NaN"])
      expect(() => parseDecimal(text)).toThrow(/not a decimal/);
  });
});

describe("well-formed text", () => {
  it("refuses an event or a candidate holding a lone surrogate, naming the field", () => {
    const event = MemoryEvent.safeParse({
      eventId: "m-1",
      kind: "fact",
      text: "ok",
      assertions: [{ key: "k\ud800", value: { text: "x" }, polarity: "affirmed" }],
    });
    expect(event.success).toBe(false);
    expect(event.error?.issues[0]?.path).toEqual(["assertions", 0, "key"]);
    const output = ConsolidationOutput.safeParse({
      claims: [],
      pending: [],
      unresolvedConflicts: [],
      summary: "bad \udc00",
    });
    expect(output.error?.issues[0]?.path).toEqual(["summary"]);
  });
});

describe("dates without a year", () => {
  it("reads them as a month and day that a full date also holds", () => {
    expect(mentionsOf("Dec 3")).toEqual(["date:monthday:12-03"]);
    expect(mentionsOf("3rd of nothing, 3 December")).toEqual(["number:|3", "date:monthday:12-03"]);
    expect(mentionsOf("12月3日")).toEqual(["date:monthday:12-03"]);
    expect(mentionsOf("Feb 30")).toEqual([]);
  });
});

describe("month-days in numbers and weekdays (CONTRACT §4b)", () => {
  it("reads 07-27 as a month-day; 10-12 as a month-day that may also be the range 10 to 12", () => {
    expect(mentionsOf("moved to 07-27.")).toEqual(["date:monthday:07-27"]);
    const [either] = extractMentions("10-12 people").mentions;
    expect(either?.kind === "date" && either.range?.map((n) => n.number)).toEqual(["10", "12"]);
    expect(extractMentions("07-27").mentions[0]).not.toHaveProperty("range");
  });

  it("reads ranges beside a unit, a month or 日, non-days and longer digit runs as numbers, as before", () => {
    expect(mentionsOf("10-12 days")).toEqual(mentionsOf("10 to 12 days"));
    expect(mentionsOf("12-29 Dec")).toEqual(["number:|12", "number:|29"]);
    expect(mentionsOf("12月10-12日")).toEqual(["number:|12", "number:|10", "number:|12"]);
    expect(mentionsOf("13-17")).toEqual(["number:|13", "number:|17"]);
    expect(mentionsOf("3-5")).toEqual(["number:|3", "number:|5"]);
    expect(mentionsOf("555-12-34")).toEqual(["number:|555", "number:|12", "number:|34"]);
    expect(mentionsOf("08:00-20:00")).toEqual(["number:|8", "number:|0", "number:|20", "number:|0"]);
  });

  it("gives a range's first end the unit written after its second (CONTRACT §4b)", () => {
    const km = mentionsOf("from 10 km to 16 km");
    expect(mentionsOf("long run 10 to 16 km")).toEqual(km);
    expect(mentionsOf("10-16 km")).toEqual(km);
    expect(mentionsOf("10 – 16 km")).toEqual(km);
    expect(mentionsOf("5 to 10%")).toEqual(mentionsOf("5% to 10%"));
    expect(mentionsOf("3至5天")).toEqual(mentionsOf("3天至5天"));
    const [first] = extractMentions("10 to 16 km").mentions;
    expect(first?.kind === "number" && first.rangeUnit).toBe(true);
    // No unit after the second number, a currency before the first, or no range between: as before.
    expect(mentionsOf("10 to 16")).toEqual(["number:|10", "number:|16"]);
    expect(mentionsOf("USD 10 to 20")).toEqual(["number:u:USD|10", "number:|20"]);
    expect(mentionsOf("10 or 16 km")[0]).toBe("number:|10");
    expect(mentionsOf("2 to 3 p.m.")).toEqual(["number:|2", "number:|3"]);
  });

  it("reads weekdays in English and Chinese, abbreviations only capitalised, never a count", () => {
    expect(mentionsOf("Mondays, Tue & Thurs. and friday")).toEqual([
      "date:weekday:1",
      "date:weekday:2",
      "date:weekday:4",
      "date:weekday:5",
    ]);
    expect(mentionsOf("周五、星期天、礼拜三")).toEqual([
      "date:weekday:5",
      "date:weekday:7",
      "date:weekday:3",
    ]);
    expect(mentionsOf("I sat in the sun; SAT scores")).toEqual([]);
    expect(mentionsOf("每周三次")).toEqual(mentionsOf("三次"));
  });
});
