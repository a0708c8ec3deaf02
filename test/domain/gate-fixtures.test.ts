// The gate on small fixtures, part one: negations, close numbers, units, same-name entities,
// preferences across projects, revoked sources, conflicting decisions and superseded versions.
import { describe, expect, it } from "vitest";
import { candidate, codes, fact, gate, log, settled } from "../support/builders.ts";

describe("double negation", () => {
  const events = log(
    { eventId: "m-1", kind: "preference", text: "I don't not want the weekly report." },
    fact(
      "m-2",
      "user:alex/report",
      { bool: true },
      { polarity: "negated", text: "Alex does not want the report." },
    ),
  );
  const negatedClaim = settled("user:alex/report", { bool: true }, ["m-2"], { polarity: "negated" });

  it("keeps both cues of a double negation: an equal count passes", () => {
    const report = gate(
      events,
      candidate({
        claims: [
          settled("memory:m-1", { text: "Not that I don't want the weekly report." }, ["m-1"]),
          negatedClaim,
        ],
      }),
    );
    expect(report.reasons).toEqual([]);
  });

  it("refuses collapsing a double negation to one cue", () => {
    const report = gate(
      events,
      candidate({
        claims: [settled("memory:m-1", { text: "I don't want the weekly report." }, ["m-1"]), negatedClaim],
      }),
    );
    expect(codes(report)).toEqual(["polarity-flipped"]);
    expect(report.reasons[0]?.eventId).toBe("m-1");
  });

  it("refuses dropping the negation of a negated assertion", () => {
    const report = gate(
      events,
      candidate({
        claims: [
          settled("memory:m-1", { text: "I don't not want the weekly report." }, ["m-1"]),
          settled("user:alex/report", { bool: true }, ["m-2"]),
        ],
      }),
    );
    expect(codes(report)).toEqual(["polarity-flipped"]);
  });
});

describe("close numbers", () => {
  const events = log(fact("m-1", "project:alpha/budget", { quantity: "12500.00", unit: "USD" }));

  it("accepts the same amount written differently", () => {
    for (const quantity of ["12500", "12500.0", "12500.000", "1.25e4"]) {
      expect(
        gate(
          events,
          candidate({ claims: [settled("project:alpha/budget", { quantity, unit: "USD" }, ["m-1"])] }),
        ).verdict,
      ).toBe("pass");
    }
  });

  it("refuses an amount off by one cent", () => {
    const report = gate(
      events,
      candidate({
        claims: [settled("project:alpha/budget", { quantity: "12500.01", unit: "USD" }, ["m-1"])],
      }),
    );
    expect(codes(report)).toEqual(["value-changed"]);
  });

  it("refuses 0.1 + 0.2 style drift: exact decimals, no floats", () => {
    const drift = log(fact("m-1", "ratio", { quantity: "0.3" }));
    expect(
      gate(drift, candidate({ claims: [settled("ratio", { quantity: "0.30000000000000004" }, ["m-1"])] }))
        .verdict,
    ).toBe("reject");
    expect(
      gate(drift, candidate({ claims: [settled("ratio", { quantity: "0.30" }, ["m-1"])] })).verdict,
    ).toBe("pass");
  });

  it("refuses a nudged number in a free-text claim and in the summary", () => {
    const text = log({ eventId: "m-1", kind: "fact", text: "The contract is worth 12,500 USD." });
    const report = gate(
      text,
      candidate({ claims: [settled("memory:m-1", { text: "The contract is worth 12,600 USD." }, ["m-1"])] }),
    );
    // Every applicable reason: the claim changed the source's number and holds one it does not.
    expect(codes(report)).toEqual(["summary-foreign-token", "unsupported-claim", "value-changed"]);
  });
});

describe("unit conversion", () => {
  const events = log(
    fact("m-1", "user:alex/run-limit", { quantity: "5", unit: "km" }),
    fact("m-2", "job/timeout", { quantity: "90", unit: "min" }),
    fact("m-3", "disk/quota", { quantity: "2", unit: "GiB" }),
    fact("m-4", "car/speed-limit", { quantity: "36", unit: "km/h" }),
  );
  const claimsWith = (run: unknown, timeout: unknown, quota: unknown, speed: unknown) =>
    candidate({
      claims: [
        settled("user:alex/run-limit", run, ["m-1"]),
        settled("job/timeout", timeout, ["m-2"]),
        settled("disk/quota", quota, ["m-3"]),
        settled("car/speed-limit", speed, ["m-4"]),
      ],
    });

  it("accepts exact conversions", () => {
    const report = gate(
      events,
      claimsWith(
        { quantity: "5000", unit: "m" },
        { quantity: "1.5", unit: "h" },
        { quantity: "2048", unit: "MiB" },
        { quantity: "10", unit: "m/s" },
      ),
    );
    expect(report.reasons).toEqual([]);
  });

  it("refuses a changed unit with the same number (5 km is not 5 mi)", () => {
    const report = gate(
      events,
      claimsWith(
        { quantity: "5", unit: "mi" },
        { quantity: "90", unit: "min" },
        { quantity: "2", unit: "GiB" },
        { quantity: "36", unit: "km/h" },
      ),
    );
    expect(codes(report)).toEqual(["value-changed"]);
  });

  it("refuses lossy or wrong conversions", () => {
    const cases = [
      { quantity: "3.1", unit: "mi" }, // 5 km is 3.10686 mi: rounded
      { quantity: "5", unit: "m" },
    ];
    for (const run of cases) {
      const report = gate(
        events,
        claimsWith(
          run,
          { quantity: "90", unit: "min" },
          { quantity: "2", unit: "GiB" },
          { quantity: "36", unit: "km/h" },
        ),
      );
      expect(codes(report)).toEqual(["value-changed"]);
    }
    const gigabytes = gate(
      events,
      claimsWith(
        { quantity: "5", unit: "km" },
        { quantity: "90", unit: "min" },
        { quantity: "2", unit: "GB" },
        { quantity: "36", unit: "km/h" },
      ),
    );
    expect(codes(gigabytes)).toEqual(["value-changed"]);
  });

  it("compares currencies only with themselves", () => {
    const money = log(fact("m-1", "budget", { quantity: "12500", unit: "USD" }));
    expect(
      codes(
        gate(money, candidate({ claims: [settled("budget", { quantity: "12500", unit: "EUR" }, ["m-1"])] })),
      ),
    ).toEqual(["value-changed"]);
  });

  it("accepts an exact conversion inside free text", () => {
    const text = log({ eventId: "m-1", kind: "constraint", text: "Never run more than 5 km a day." });
    const report = gate(
      text,
      candidate({ claims: [settled("memory:m-1", { text: "Never run more than 5000 m a day." }, ["m-1"])] }),
    );
    expect(report.reasons).toEqual([]);
  });
});

describe("same-name entities", () => {
  const events = log(
    fact("m-1", "project:alpha/owner", { entity: "person:alex@proj-a" }),
    fact("m-2", "project:beta/owner", { entity: "person:alex@proj-b" }),
  );

  it("keeps two people called Alex apart", () => {
    const swapped = gate(
      events,
      candidate({
        claims: [
          settled("project:alpha/owner", { entity: "person:alex@proj-b" }, ["m-1"]),
          settled("project:beta/owner", { entity: "person:alex@proj-b" }, ["m-2"]),
        ],
      }),
    );
    expect(codes(swapped)).toEqual(["value-changed"]);
    expect(swapped.reasons[0]?.eventId).toBe("m-1");
  });

  it("passes when each keeps its own entity", () => {
    const report = gate(
      events,
      candidate({
        claims: [
          settled("project:alpha/owner", { entity: "person:alex@proj-a" }, ["m-1"]),
          settled("project:beta/owner", { entity: "person:alex@proj-b" }, ["m-2"]),
        ],
      }),
    );
    expect(report.verdict).toBe("pass");
  });
});

describe("cross-project preferences", () => {
  const events = log(
    fact("m-1", "ui/theme", { text: "dark" }, { kind: "preference", scope: "project:alpha" }),
  );

  it("refuses widening a project preference to every project: a false new fact", () => {
    const report = gate(events, candidate({ claims: [settled("ui/theme", { text: "dark" }, ["m-1"])] }));
    expect(codes(report)).toEqual(["unsupported-claim"]);
  });

  it("refuses moving it to another project", () => {
    const report = gate(
      events,
      candidate({ claims: [settled("ui/theme", { text: "dark" }, ["m-1"], { scope: "project:beta" })] }),
    );
    expect(codes(report)).toEqual(["unsupported-claim"]);
  });

  it("passes in its own scope", () => {
    expect(
      gate(
        events,
        candidate({ claims: [settled("ui/theme", { text: "dark" }, ["m-1"], { scope: "project:alpha" })] }),
      ).verdict,
    ).toBe("pass");
  });
});

describe("revoked sources", () => {
  const events = log(fact("m-1", "user:alex/phone", { entity: "tel:555-0100" }), {
    eventId: "m-2",
    kind: "revocation",
    revokes: ["m-1"],
  });

  it("refuses a claim derived from a revoked event", () => {
    const report = gate(
      events,
      candidate({ claims: [settled("user:alex/phone", { entity: "tel:555-0100" }, ["m-1"])] }),
    );
    expect(codes(report)).toContain("unknown-source");
    expect(report.reasons.find((r) => r.code === "unknown-source")?.detail).toContain("revoked");
  });

  it("refuses citing the revocation itself, in claims, pending or coldRefs", () => {
    expect(codes(gate(events, candidate({ coldRefs: ["m-2"] })))).toEqual(["unknown-source"]);
  });

  it("passes a summary that leaves the revoked fact out", () => {
    expect(gate(events, candidate()).verdict).toBe("pass");
  });

  it("revives what a revoked superseder had superseded", () => {
    const revived = log(
      fact("m-1", "plan", { text: "A" }, { kind: "decision" }),
      { ...fact("m-2", "plan", { text: "B" }, { kind: "decision" }), supersedes: ["m-1"] },
      { eventId: "m-3", kind: "revocation", revokes: ["m-2"] },
    );
    expect(codes(gate(revived, candidate()))).toEqual(["missing"]);
    expect(gate(revived, candidate({ claims: [settled("plan", { text: "A" }, ["m-1"])] })).verdict).toBe(
      "pass",
    );
  });
});

describe("conflicting decisions", () => {
  const events = log(
    fact("m-4", "project:alpha/launch", { date: "2026-12-03" }, { kind: "decision" }),
    fact("m-9", "project:alpha/launch", { date: "2026-12-10" }, { kind: "decision" }),
  );
  const contested = (date: string, id: string) =>
    settled("project:alpha/launch", { date }, [id], { status: "contested" });
  const conflict = { key: "project:alpha/launch", scope: "global", members: ["m-9", "m-4"] };

  it("passes when both positions stay contested and the conflict is listed", () => {
    const report = gate(
      events,
      candidate({
        claims: [contested("2026-12-03", "m-4"), contested("2026-12-10", "m-9")],
        unresolvedConflicts: [conflict],
      }),
    );
    expect(report.reasons).toEqual([]);
  });

  it("refuses settling the conflict for one side", () => {
    const report = gate(
      events,
      candidate({
        claims: [settled("project:alpha/launch", { date: "2026-12-10" }, ["m-9"])],
        unresolvedConflicts: [],
      }),
    );
    // m-4 is a decision no claim derives from: missing as a whole event (CONTRACT §4b).
    expect(codes(report)).toEqual(["conflict-missing", "conflict-settled", "missing"]);
  });

  it("refuses inventing a conflict or contesting a settled key", () => {
    const single = log(fact("m-1", "budget", { quantity: "5", unit: "USD" }));
    const report = gate(
      single,
      candidate({
        claims: [settled("budget", { quantity: "5", unit: "USD" }, ["m-1"], { status: "contested" })],
        unresolvedConflicts: [{ key: "budget", scope: "global", members: ["m-1"] }],
      }),
    );
    expect(codes(report)).toEqual(["conflict-invented"]);
  });

  it("refuses a conflict listed with the wrong members", () => {
    const report = gate(
      events,
      candidate({
        claims: [contested("2026-12-03", "m-4"), contested("2026-12-10", "m-9")],
        unresolvedConflicts: [{ key: "project:alpha/launch", scope: "global", members: ["m-4"] }],
      }),
    );
    expect(codes(report)).toEqual(["conflict-invented", "conflict-missing"]);
  });
});

describe("superseded versions", () => {
  const events = log(fact("m-1", "project:beta/budget", { quantity: "8000", unit: "EUR" }), {
    ...fact("m-2", "project:beta/budget", { quantity: "9000", unit: "EUR" }),
    supersedes: ["m-1"],
  });

  it("keeps only the current version, and it is no conflict", () => {
    expect(
      gate(
        events,
        candidate({ claims: [settled("project:beta/budget", { quantity: "9000", unit: "EUR" }, ["m-2"])] }),
      ).verdict,
    ).toBe("pass");
  });

  it("refuses the superseded value", () => {
    const report = gate(
      events,
      candidate({ claims: [settled("project:beta/budget", { quantity: "8000", unit: "EUR" }, ["m-1"])] }),
    );
    expect(codes(report)).toEqual(["unknown-source", "unsupported-claim"]);
  });
});
