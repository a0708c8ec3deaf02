import { describe, expect, it } from "vitest";
import { consolidate } from "#domain/consolidator.ts";
import { extractMentions } from "#domain/mentions.ts";
import { candidate, codes, contextOf, gate, log, settled } from "../support/builders.ts";

/** CONTRACT §4b rules implemented so far: each with the honest restatements that must pass. */
const textClaim = (text: string, derivedFrom: string[]) =>
  settled(`memory:${derivedFrom[0]}`, { text }, derivedFrom);

describe("text normalisation (NFKC, zero-width characters)", () => {
  const events = log({ eventId: "m-1", kind: "fact", text: "The budget is 12,500 USD." });

  it("reads full-width digits and digits split by zero-width characters as the same number", () => {
    expect(extractMentions("１２５００ USD").mentions.map((m) => m.key)).toEqual(
      extractMentions("12500 USD").mentions.map((m) => m.key),
    );
    expect(
      gate(events, candidate({ claims: [textClaim("The budget is １２,５００ USD.", ["m-1"])] })).reasons,
    ).toEqual([]);
    expect(
      gate(events, candidate({ claims: [textClaim("The budget is 12,\u200B500 USD.", ["m-1"])] })).reasons,
    ).toEqual([]);
  });

  it("keeps ids case- and script-sensitive", () => {
    const ids = log({ eventId: "m-1", kind: "fact", text: "Invoice INV-20931 is open." });
    expect(
      codes(gate(ids, candidate({ claims: [textClaim("Invoice inv-20931 is open.", ["m-1"])] }))),
    ).toContain("value-changed");
    // A Cyrillic А in place of the Latin A.
    expect(
      codes(
        gate(
          ids,
          candidate({ claims: [textClaim("Invoice INV-20931 is open.", ["m-1"])], summary: "\u0410B-1" }),
        ),
      ),
    ).toContain("summary-foreign-token");
  });
});

describe("signs belong to their numbers", () => {
  const events = log({ eventId: "m-1", kind: "fact", text: "Store the samples at -18 °C." });

  it("refuses dropping the sign and accepts the minus sign U+2212", () => {
    expect(
      codes(gate(events, candidate({ claims: [textClaim("Store the samples at 18 °C.", ["m-1"])] }))),
    ).toContain("value-changed");
    expect(
      gate(events, candidate({ claims: [textClaim("Store the samples at \u221218 °C.", ["m-1"])] })).reasons,
    ).toEqual([]);
  });

  it("leaves hyphenated ids and ranges' second numbers unsigned", () => {
    expect(extractMentions("INV-20931").mentions.map((m) => m.kind)).toEqual(["id"]);
    expect(extractMentions("budget -5 and 7").mentions.map((m) => m.kind === "number" && m.number)).toEqual([
      "-5",
      "7",
    ]);
  });
});

describe("a date that is no calendar day is always foreign", () => {
  it("refuses 2026-11-31 and Nov 31 2026 in the summary, even when an input wrote it", () => {
    const events = log({ eventId: "m-1", kind: "note", text: "Someone wrote 2026-11-31 by mistake." });
    expect(codes(gate(events, candidate({ summary: "Due 2026-11-31." })))).toEqual(["summary-foreign-token"]);
    expect(codes(gate(events, candidate({ summary: "Due Nov 31, 2026." })))).toEqual([
      "summary-foreign-token",
    ]);
    expect(gate(events, candidate({ summary: "Nothing is due." })).reasons).toEqual([]);
  });
});

describe("whole events: constraints, permissions and decisions are never left cold", () => {
  const events = log(
    { eventId: "c-1", kind: "constraint", text: "Backups must be encrypted." },
    { eventId: "d-1", kind: "decision", text: "We chose the managed database." },
    { eventId: "n-1", kind: "note", text: "Lunch was fine." },
  );

  it("passes an honest answer that restates each (and leaves the note cold)", () => {
    const context = contextOf(events);
    const honest = consolidate(context);
    expect(gate(events, honest).reasons).toEqual([]);
    expect(honest.coldRefs).toEqual(["n-1"]);
  });

  it("refuses dropping one (missing, with its event id) or listing it in coldRefs", () => {
    const honest = consolidate(contextOf(events));
    const dropped = { ...honest, claims: honest.claims.filter((c) => !c.derivedFrom.includes("c-1")) };
    const report = gate(events, dropped);
    expect(report.reasons.map((r) => [r.code, r.eventId])).toEqual([["missing", "c-1"]]);
    const cold = { ...dropped, coldRefs: [...dropped.coldRefs, "c-1"] };
    const coldReport = gate(events, cold);
    expect(coldReport.reasons.map((r) => [r.code, r.eventId])).toEqual([["missing", "c-1"]]);
    expect(coldReport.reasons[0]?.detail).toMatch(/leaves constraint c-1 cold/);
  });

  it("refuses an open task in coldRefs even beside its pending item", () => {
    const tasks = log({ eventId: "t-1", kind: "task", text: "Rotate the keys." });
    const honest = consolidate(contextOf(tasks));
    expect(gate(tasks, honest).reasons).toEqual([]);
    expect(codes(gate(tasks, { ...honest, coldRefs: ["t-1"] }))).toEqual(["missing"]);
  });
});

describe("numbers as people write them", () => {
  const keys = (text: string) => extractMentions(text).mentions.map((m) => m.key);

  it("reads magnitude suffixes exactly, and a unit after them", () => {
    expect(keys("12.5k USD")).toEqual(keys("12,500 USD"));
    expect(keys("3M")).toEqual(keys("3000000"));
    expect(keys("2bn")).toEqual(keys("2000000000"));
    expect(keys("1.25万")).toEqual(keys("12500"));
    expect(keys("12km")).toEqual(keys("12 km"));
    expect(keys("5MB")).not.toEqual(keys("5"));
  });

  it("reads a currency code before the number as its unit; currencies never convert", () => {
    expect(keys("EUR 12,500")).toEqual(keys("12,500 EUR"));
    const events = log({ eventId: "m-1", kind: "fact", text: "The budget is 12,500 USD." });
    expect(
      codes(gate(events, candidate({ claims: [textClaim("The budget is EUR 12,500.", ["m-1"])] }))),
    ).toContain("value-changed");
    expect(
      gate(events, candidate({ claims: [textClaim("The budget is USD 12,500.", ["m-1"])] })).reasons,
    ).toEqual([]);
  });

  it("reads a range as both its numbers, never as an id", () => {
    expect(extractMentions("3-5 days").mentions.map((m) => m.kind)).toEqual(["number", "number"]);
    const events = log({ eventId: "m-1", kind: "fact", text: "Delivery takes 3-5 days." });
    expect(
      gate(events, candidate({ claims: [textClaim("Delivery takes 3–5 days.", ["m-1"])] })).reasons,
    ).toEqual([]);
    expect(
      gate(events, candidate({ claims: [textClaim("Delivery takes 3 to 5 days.", ["m-1"])] })).reasons,
    ).toEqual([]);
    expect(
      codes(gate(events, candidate({ claims: [textClaim("Delivery takes 3-7 days.", ["m-1"])] }))),
    ).toContain("value-changed");
  });

  it("reads d as the day: {24 h} restates {1 d}", () => {
    const events = log({
      eventId: "m-1",
      kind: "constraint",
      text: "Keep logs for one day.",
      assertions: [{ key: "logs/retention", value: { quantity: "1", unit: "d" }, polarity: "affirmed" }],
    });
    const claim = settled("logs/retention", { quantity: "24", unit: "h" }, ["m-1"]);
    expect(gate(events, candidate({ claims: [claim] })).reasons).toEqual([]);
    const wrong = settled("logs/retention", { quantity: "12", unit: "h" }, ["m-1"]);
    expect(codes(gate(events, candidate({ claims: [wrong] })))).toEqual(["value-changed"]);
  });
});

describe("cue classes (CONTRACT §4b), each counted on its own", () => {
  const one = (text: string) => log({ eventId: "m-1", kind: "fact", text });
  const restated = (source: string, text: string) =>
    gate(one(source), candidate({ claims: [textClaim(text, ["m-1"])] }));

  it.each([
    ["Reviews need no more than 3 reviewers.", "Reviews need at most 3 reviewers."],
    ["Deploys must be approved.", "Deploys have to be approved."],
    ["Every release is signed.", "Each release is signed."],
    ["We don't deploy on Fridays.", "We never deploy on Fridays."],
    ["Some tests are flaky.", "Several tests are flaky."],
    ["The review is on May 3, 2026.", "The review is on 2026-05-03."],
    ["预算不超过三天。", "预算最多三天。"],
  ])("keeps the meaning of %j restated as %j", (source, text) => {
    expect(restated(source, text).reasons).toEqual([]);
  });

  it.each([
    ["Reviews need at least 3 reviewers.", "Reviews need at most 3 reviewers.", /upper bound|lower bound/],
    ["Deploys must be approved.", "Deploys may be approved.", /strong modality|weak modality/],
    ["All tests pass.", "Some tests pass.", /universal|existential/],
    ["Always encrypt backups.", "Encrypt backups.", /strong modality/],
  ])("refuses %j bent into %j, naming the class", (source, text, detail) => {
    const report = restated(source, text);
    expect(codes(report)).toEqual(["value-changed"]);
    expect(report.reasons.map((r) => r.detail).join(" ")).toMatch(detail);
  });

  it("a negation lost is polarity-flipped", () => {
    expect(codes(restated("We can't ship on Fridays.", "We can ship on Fridays."))).toContain(
      "polarity-flipped",
    );
  });
});

describe("split and merged restatements (connected parts)", () => {
  const events = log(
    {
      eventId: "m-1",
      kind: "fact",
      text: "Backups must be encrypted and are never deleted; keep them 30 days.",
    },
    { eventId: "m-2", kind: "fact", text: "Logs are kept 14 days." },
    { eventId: "m-3", kind: "fact", text: "Metrics are kept 90 days." },
  );

  it("passes one source split into two claims, and two sources merged into one", () => {
    const report = gate(
      events,
      candidate({
        claims: [
          settled("backup:encryption", { text: "Backups must be encrypted." }, ["m-1"]),
          settled("backup:retention", { text: "Backups are never deleted and kept 30 days." }, ["m-1"]),
          settled("retention:logs-metrics", { text: "Logs are kept 14 days and metrics 90 days." }, [
            "m-2",
            "m-3",
          ]),
        ],
      }),
    );
    expect(report.reasons).toEqual([]);
  });

  it("reads a claim's text beside its {text} value as the same restatement in other words, never summed", () => {
    const withText = (value: string, text: string) => ({
      ...settled("backup:policy", { text: value }, ["m-1"]),
      text,
    });
    const others = [
      textClaim("Logs are kept 14 days.", ["m-2"]),
      textClaim("Metrics are kept 90 days.", ["m-3"]),
    ];
    const honest = gate(
      events,
      candidate({
        claims: [
          withText(
            "Backups must be encrypted and are never deleted; keep them 30 days.",
            "Backups must be encrypted, are never deleted, and are kept 30 days.",
          ),
          ...others,
        ],
      }),
    );
    expect(honest.reasons).toEqual([]);
    const bentText = gate(
      events,
      candidate({
        claims: [
          withText(
            "Backups must be encrypted and are never deleted; keep them 30 days.",
            "Backups may be encrypted, are never deleted, and are kept 30 days.",
          ),
          ...others,
        ],
      }),
    );
    expect(bentText.reasons.map((r) => [r.code, r.eventId])).toContainEqual(["value-changed", "m-1"]);
    expect(bentText.reasons.some((r) => r.detail.includes("claims[0].text"))).toBe(true);
  });

  it("refuses a split that loses a number or a cue across the part", () => {
    const lostNumber = gate(
      events,
      candidate({
        claims: [
          settled("backup:encryption", { text: "Backups must be encrypted." }, ["m-1"]),
          settled("backup:retention", { text: "Backups are never deleted." }, ["m-1"]),
          textClaim("Logs are kept 14 days.", ["m-2"]),
          textClaim("Metrics are kept 90 days.", ["m-3"]),
        ],
      }),
    );
    expect(lostNumber.reasons.map((r) => [r.code, r.eventId])).toEqual([["missing", "m-1"]]);
    const lostNegation = gate(
      events,
      candidate({
        claims: [
          settled("backup:encryption", { text: "Backups must be encrypted." }, ["m-1"]),
          settled("backup:retention", { text: "Backups are deleted after 30 days." }, ["m-1"]),
          textClaim("Logs are kept 14 days.", ["m-2"]),
          textClaim("Metrics are kept 90 days.", ["m-3"]),
        ],
      }),
    );
    expect(codes(lostNegation)).toEqual(["polarity-flipped"]);
  });
});

describe("text support (laundered claims)", () => {
  const events = log(
    { eventId: "p-1", kind: "preference", text: "User likes concise answers." },
    { eventId: "f-1", kind: "fact", text: "Backups are encrypted with AES-256." },
    { eventId: "f-2", kind: "fact", text: "The payments bucket is pay-backups-prod." },
  );
  const claims = (...extra: ReturnType<typeof textClaim>[]) => [
    textClaim("User likes concise answers.", ["p-1"]),
    textClaim("Backups are encrypted with AES-256.", ["f-1"]),
    textClaim("The payments bucket is pay-backups-prod.", ["f-2"]),
    ...extra,
  ];

  it("refuses a claim its own sources do not support, naming the words", () => {
    const laundered = settled("access:role", { text: "User is an administrator with production access." }, [
      "p-1",
    ]);
    const report = gate(events, candidate({ claims: claims(laundered) }));
    expect(codes(report)).toEqual(["unsupported-claim"]);
    expect(report.reasons[0]?.detail).toMatch(/administr.*product.*access/);
  });

  it("refuses a number, date or id its own sources do not hold, even when another input holds it", () => {
    const borrowed = settled("backup:bucket", { text: "Backups go to pay-backups-prod." }, ["f-1"]);
    expect(codes(gate(events, candidate({ claims: claims(borrowed) })))).toEqual(["unsupported-claim"]);
    const invented = settled("backup:due", { text: "Backups are encrypted with AES-256 by 2026-12-05." }, [
      "f-1",
    ]);
    expect(codes(gate(events, candidate({ claims: claims(invented) })))).toContain("unsupported-claim");
  });

  it("passes honest restatements and merges over their own sources", () => {
    const merged = settled(
      "backup:summary",
      { text: "Payments backups (pay-backups-prod) are encrypted with AES-256." },
      ["f-1", "f-2"],
    );
    expect(gate(events, candidate({ claims: claims(merged) })).reasons).toEqual([]);
  });

  it("warns about a summary sentence no input supports; refuses it when the policy asks", () => {
    const body = candidate({
      claims: claims(),
      summary: "Backups are encrypted. The user secretly plans a merger with Globex.",
    });
    const report = gate(events, body);
    expect(report.reasons).toEqual([]);
    expect(report.warnings?.map((w) => w.code)).toEqual(["low-support"]);
    expect(report.warnings?.[0]?.detail).toMatch(/merger/);
    const strict = gate(events, body, { summarySupport: 0.6 });
    expect(codes(strict)).toEqual(["summary-unsupported"]);
  });
});

describe("number words and Chinese numerals", () => {
  const keys = (text: string) => extractMentions(text).mentions.map((m) => m.key);

  it("reads English number words as numbers when they form one or carry a unit", () => {
    expect(keys("twelve thousand five hundred USD")).toEqual(keys("12,500 USD"));
    expect(keys("three days")).toEqual(keys("3 days"));
    expect(keys("twenty-five people")).toEqual(keys("25 people"));
    expect(keys("one hundred and twenty")).toEqual(keys("120"));
    expect(keys("one of them")).toEqual([]);
    expect(keys("two dogs")).toEqual([]);
  });

  it("reads Chinese numerals with a positional character or a measure word", () => {
    expect(keys("三天")).toEqual(keys("3天"));
    expect(keys("一万二千五百")).toEqual(keys("12500"));
    expect(keys("两个人")).toEqual(keys("2个人"));
    expect(keys("一些人")).toEqual([]);
    expect(keys("一定要")).toEqual([]);
    // Classifiers of people, firms and vehicles count too; 一种 and 一段 stay prose.
    expect(keys("三位工程师")).toEqual(keys("3位工程师"));
    expect(keys("两家供应商")).toEqual(keys("2家供应商"));
    expect(keys("五辆车")).toEqual(keys("5辆车"));
    expect(keys("一种方法")).toEqual([]);
    expect(keys("一段时间")).toEqual([]);
    const team = log({ eventId: "z-2", kind: "fact", text: "项目需要三位工程师。" });
    expect(codes(gate(team, candidate({ claims: [textClaim("项目需要五位工程师。", ["z-2"])] })))).toContain(
      "value-changed",
    );
    expect(gate(team, candidate({ claims: [textClaim("项目需要3位工程师。", ["z-2"])] })).reasons).toEqual(
      [],
    );
  });

  it("passes an amount restated in digits and refuses one bent in words", () => {
    const events = log({
      eventId: "m-1",
      kind: "fact",
      text: "The budget is twelve thousand five hundred USD, due in three days.",
    });
    expect(
      gate(events, candidate({ claims: [textClaim("The budget is 12,500 USD, due in 3 days.", ["m-1"])] }))
        .reasons,
    ).toEqual([]);
    expect(
      codes(
        gate(
          events,
          candidate({
            claims: [textClaim("The budget is twelve thousand USD, due in three days.", ["m-1"])],
          }),
        ),
      ),
    ).toContain("value-changed");
    const zh = log({ eventId: "z-1", kind: "fact", text: "项目三天内完成。" });
    expect(codes(gate(zh, candidate({ claims: [textClaim("项目五天内完成。", ["z-1"])] })))).toContain(
      "value-changed",
    );
  });
});

describe("dates as people write them", () => {
  const keys = (text: string) => extractMentions(text).mentions.map((m) => m.key);

  it("reads the extra forms as the same day", () => {
    const day = keys("2026-12-03");
    for (const text of [
      "December 3rd, 2026",
      "3 December 2026",
      "the 3rd of December 2026",
      "2026.12.03",
      "2026/12/03",
    ])
      expect(keys(text), text).toEqual(day);
    expect(keys("13/03/2026")).toEqual(keys("2026-03-13"));
  });

  it("reads a date-time with a space for T, Z or UTC as the instant, and dates before a full stop", () => {
    const instant = keys("2026-12-03T10:00:00Z");
    for (const text of [
      "2026-12-03 10:00",
      "2026-12-03 10:00Z",
      "2026-12-03 10:00:00 UTC",
      "at 2026-12-03T10:00Z.",
    ])
      expect(keys(text), text).toEqual(instant);
    expect(keys("Due 2026.12.3.")).toEqual(keys("2026-12-03"));
    expect(keys("Signed 13/03/2026.")).toEqual(keys("2026-03-13"));
    // A time range after a spaced date-time is no offset: 10:00-12:00 is two times.
    expect(keys("2026-12-03 10:00-12:00 Lisbon")[0]).toEqual(keys("2026-12-03")[0]);
  });

  it("reads day/month numbers that could be swapped as numbers, not a date", () => {
    expect(keys("03/12/2026")).toEqual(keys("3 12 2026"));
  });

  it("holds a month of a year when an input holds a day in it", () => {
    const events = log({ eventId: "m-1", kind: "fact", text: "The launch is on 2026-12-15." });
    expect(
      gate(
        events,
        candidate({ claims: [textClaim("The launch is in December 2026, on 2026-12-15.", ["m-1"])] }),
      ).reasons,
    ).toEqual([]);
    expect(
      codes(
        gate(
          events,
          candidate({ claims: [textClaim("The launch is in January 2027, on 2026-12-15.", ["m-1"])] }),
        ),
      ),
    ).toContain("unsupported-claim");
  });

  it("reads ordinals as their number", () => {
    expect(keys("the third review")).toEqual(keys("the 3rd review"));
    expect(keys("第三次")).toEqual(keys("3次"));
  });
});

describe("units in prose", () => {
  const keys = (text: string) => extractMentions(text).mentions.map((m) => m.key);

  it("reads unit words, British spellings, hyphenated units and the byte", () => {
    expect(keys("5 kilometres")).toEqual(keys("5 km"));
    expect(keys("a 30-second pause")).toEqual(keys("30 s"));
    expect(keys("a 90-day window")).toEqual(keys("90 d"));
    expect(keys("5 MB")).toEqual(keys("5000000 B"));
    expect(keys("5 MiB")).toEqual(keys("5242880 B"));
    expect(keys("5 m")).not.toEqual(keys("5 M"));
    expect(keys("2-factor login")).toEqual(["2-factor"]);
  });
});
