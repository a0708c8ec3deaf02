// The gate on small fixtures, part two: permission scopes, open tasks, provenance, invented
// claims, foreign summary tokens, untrusted sources, malformed answers, free text, budget and dates.
import { describe, expect, it } from "vitest";
import { consolidate } from "#domain/consolidator.ts";
import { gateCandidateText } from "#domain/gate/index.ts";
import { candidate, codes, contextOf, fact, gate, log, settled } from "../support/builders.ts";

describe("permission scopes", () => {
  const events = log(
    fact("m-1", "agent:bot/access", { scopes: ["repo:x:read", "repo:x:write"] }, { kind: "permission" }),
  );
  const withScopes = (scopes: string[]) =>
    candidate({ claims: [settled("agent:bot/access", { scopes }, ["m-1"])] });

  it("compares scopes as sets", () => {
    expect(gate(events, withScopes(["repo:x:write", "repo:x:read", "repo:x:read"])).verdict).toBe("pass");
  });

  it("refuses widening", () => {
    expect(codes(gate(events, withScopes(["repo:x:read", "repo:x:write", "repo:x:admin"])))).toEqual([
      "value-changed",
    ]);
  });

  it("refuses narrowing", () => {
    expect(codes(gate(events, withScopes(["repo:x:read"])))).toEqual(["value-changed"]);
  });

  it("refuses dropping the permission", () => {
    expect(codes(gate(events, candidate()))).toEqual(["missing"]);
  });
});

describe("open tasks", () => {
  const events = log(
    { eventId: "m-1", kind: "task", text: "Send invoice INV-20931 by 2026-12-05." },
    { eventId: "m-2", kind: "task", text: "Book the venue.", taskStatus: "done" },
  );

  it("passes with the open task pending and the done one cold", () => {
    const report = gate(
      events,
      candidate({
        pending: [{ text: "Send INV-20931 by Dec 5, 2026.", derivedFrom: ["m-1"] }],
        coldRefs: ["m-2"],
      }),
    );
    expect(report.reasons).toEqual([]);
  });

  it("refuses dropping an open task", () => {
    expect(codes(gate(events, candidate()))).toEqual(["pending-missing"]);
  });

  it("refuses a pending item that loses the task's id or date: kept nowhere", () => {
    const report = gate(
      events,
      candidate({ pending: [{ text: "Send the invoice soon.", derivedFrom: ["m-1"] }] }),
    );
    expect(codes(report)).toEqual(["missing"]);
  });

  it("refuses reopening a done task", () => {
    const report = gate(
      events,
      candidate({
        pending: [
          { text: "Send INV-20931 by 2026-12-05.", derivedFrom: ["m-1"] },
          { text: "Book the venue.", derivedFrom: ["m-2"] },
        ],
      }),
    );
    expect(codes(report)).toEqual(["unsupported-claim"]);
  });
});

describe("provenance", () => {
  const events = log(
    fact("m-1", "budget", { quantity: "100", unit: "USD" }),
    fact("m-2", "owner", { entity: "person:sam" }),
  );

  it("refuses a claim that points at the wrong event", () => {
    const report = gate(
      events,
      candidate({
        claims: [
          settled("budget", { quantity: "100", unit: "USD" }, ["m-2"]),
          settled("owner", { entity: "person:sam" }, ["m-2"]),
        ],
      }),
    );
    expect(codes(report)).toEqual(["provenance-missing"]);
    expect(report.reasons.every((r) => r.eventId === "m-1")).toBe(true);
  });

  it("refuses an id that is not an event of the snapshot", () => {
    const report = gate(
      events,
      candidate({
        claims: [
          settled("budget", { quantity: "100", unit: "USD" }, ["m-1", "m-77"]),
          settled("owner", { entity: "person:sam" }, ["m-2"]),
        ],
      }),
    );
    expect(codes(report)).toEqual(["unknown-source"]);
  });
});

describe("hallucinated claims", () => {
  const events = log(fact("m-1", "budget", { quantity: "100", unit: "USD" }));

  it("refuses a claim no source asserts", () => {
    const report = gate(
      events,
      candidate({
        claims: [
          settled("budget", { quantity: "100", unit: "USD" }, ["m-1"]),
          settled("deadline", { date: "2026-12-01" }, ["m-1"]),
        ],
      }),
    );
    expect(codes(report)).toEqual(["unsupported-claim"]);
  });

  it("refuses a structured claim restating free text", () => {
    const text = log({ eventId: "m-1", kind: "fact", text: "The budget is 100 USD." });
    const report = gate(
      text,
      candidate({ claims: [settled("budget", { quantity: "100", unit: "USD" }, ["m-1"])] }),
    );
    expect(codes(report)).toContain("unsupported-claim");
  });
});

describe("foreign tokens in the summary", () => {
  const events = log({
    eventId: "m-1",
    kind: "fact",
    text: "Invoice INV-20931 of 12,500 USD is due 2026-12-03.",
  });
  const keep = settled("memory:m-1", { text: "Invoice INV-20931 of 12,500 USD is due 2026-12-03." }, ["m-1"]);

  it("accepts numbers, dates and ids the inputs hold, in any written form", () => {
    const report = gate(
      events,
      candidate({ claims: [keep], summary: "INV-20931: $12,500 due Dec 3, 2026 (12500.00 USD)." }),
    );
    expect(report.reasons).toEqual([]);
  });

  it("refuses a number, a date or an id no input holds", () => {
    for (const summary of [
      "Due 2026-12-04.",
      "Invoice INV-20932 is due.",
      "Worth 13,000 USD.",
      "Worth 12,500 EUR.",
    ]) {
      expect(codes(gate(events, candidate({ claims: [keep], summary })))).toEqual(["summary-foreign-token"]);
    }
  });

  it("counts nothing from revoked or untrusted inputs as held", () => {
    const mixed = log(
      { eventId: "m-1", kind: "note", text: "Room 4B booked." },
      { eventId: "m-2", kind: "revocation", revokes: ["m-1"] },
      { eventId: "m-3", kind: "note", text: "Code 7731.", trust: "untrusted" },
    );
    expect(codes(gate(mixed, candidate({ summary: "Room 4B." })))).toEqual(["summary-foreign-token"]);
    expect(codes(gate(mixed, candidate({ summary: "Code 7731." })))).toEqual(["summary-foreign-token"]);
  });
});

describe("untrusted sources", () => {
  const events = log(
    fact("m-1", "api/key-rotation", { quantity: "30", unit: "day" }, { trust: "untrusted" }),
    fact("m-2", "api/owner", { entity: "team:infra" }, { source: "web:forum" }),
  );

  it("leaves untrusted and blocked inputs out of the must-preserve set", () => {
    expect(
      gate(events, candidate(), { policy: { minTrust: "tool", blockedSources: ["web:*"] } }).verdict,
    ).toBe("pass");
  });

  it("refuses claims derived from them", () => {
    const report = gate(
      events,
      candidate({ claims: [settled("api/key-rotation", { quantity: "30", unit: "day" }, ["m-1"])] }),
    );
    expect(codes(report)).toContain("unknown-source");
  });

  it("raising minTrust removes tool-level inputs too", () => {
    const tool = log(fact("m-1", "build/status", { text: "green" }, { trust: "tool" }));
    expect(
      codes(
        gate(tool, candidate({ claims: [settled("build/status", { text: "green" }, ["m-1"])] }), {
          policy: { minTrust: "user", blockedSources: [] },
        }),
      ),
    ).toEqual(["unknown-source", "unsupported-claim"]);
  });
});

describe("truncated or malformed answers", () => {
  const context = contextOf(log(fact("m-1", "budget", { quantity: "100", unit: "USD" })));
  const honest = JSON.stringify(
    candidate({ claims: [settled("budget", { quantity: "100", unit: "USD" }, ["m-1"])] }),
  );

  it("refuses a truncated answer as schema-invalid", () => {
    const report = gateCandidateText(context, honest.slice(0, honest.length - 7));
    expect(report.verdict).toBe("reject");
    expect(report.reasons.map((r) => r.code)).toEqual(["schema-invalid"]);
  });

  it("refuses missing fields, naming them", () => {
    const report = gateCandidateText(context, JSON.stringify({ claims: [], pending: [] }));
    expect(report.reasons.map((r) => r.code)).toEqual(["schema-invalid", "schema-invalid"]);
    expect(report.reasons.map((r) => r.detail).join(" ")).toMatch(
      /unresolvedConflicts.*summary|summary.*unresolvedConflicts/,
    );
  });

  it("refuses a JSON number where a decimal string belongs", () => {
    const report = gateCandidateText(context, honest.replace('"quantity":"100"', '"quantity":100'));
    expect(report.reasons.map((r) => r.code)).toEqual(["schema-invalid"]);
    expect(report.reasons[0]?.detail).toContain("claims.0.value");
  });

  it("refuses an empty derivedFrom and an ambiguous value", () => {
    expect(
      gateCandidateText(context, honest.replace('"derivedFrom":["m-1"]', '"derivedFrom":[]')).verdict,
    ).toBe("reject");
    expect(
      gateCandidateText(context, honest.replace('"unit":"USD"', '"unit":"USD","text":"x"')).verdict,
    ).toBe("reject");
  });

  it("passes the untruncated answer and ignores unknown fields", () => {
    expect(gateCandidateText(context, honest).verdict).toBe("pass");
    expect(
      gateCandidateText(context, honest.replace('"summary":""', '"summary":"","confidence":"high"')).verdict,
    ).toBe("pass");
  });
});

describe("text-only events", () => {
  it("keeps English mentions and cues", () => {
    const events = log({
      eventId: "m-1",
      kind: "constraint",
      text: "Budget for alpha is 12,500 USD; never use vendor X before Dec 3, 2026.",
    });
    const ok = gate(
      events,
      candidate({
        claims: [
          settled("memory:m-1", { text: "Alpha: 12500 USD budget, never vendor X before 2026-12-03." }, [
            "m-1",
          ]),
        ],
      }),
    );
    expect(ok.reasons).toEqual([]);
    const lost = gate(
      events,
      candidate({
        claims: [
          settled("memory:m-1", { text: "Alpha: 12500 USD budget, use vendor X before 2026-12-03." }, [
            "m-1",
          ]),
        ],
      }),
    );
    expect(codes(lost)).toEqual(["polarity-flipped"]);
    expect(codes(gate(events, candidate()))).toEqual(["missing"]);
  });

  it("keeps Chinese mentions and cues", () => {
    const events = log({
      eventId: "m-1",
      kind: "constraint",
      text: "预算不要超过12500美元，2026年12月3日前3天内完成。",
    });
    const ok = gate(
      events,
      candidate({
        claims: [settled("memory:m-1", { text: "预算别超过12,500 USD，2026-12-03前3天内完成。" }, ["m-1"])],
      }),
    );
    expect(ok.reasons).toEqual([]);
    const flipped = gate(
      events,
      candidate({
        claims: [
          settled("memory:m-1", { text: "预算可以超过12500美元，2026年12月3日前3天内完成。" }, ["m-1"]),
        ],
      }),
    );
    // 不要 (negation) became 可以 (weak modality): both classes changed.
    expect(codes(flipped)).toEqual(["polarity-flipped", "value-changed"]);
    const changed = gate(
      events,
      candidate({
        claims: [
          settled("memory:m-1", { text: "预算不要超过12500美元，2026年12月3日前5天内完成。" }, ["m-1"]),
        ],
      }),
    );
    expect(codes(changed)).toEqual(["summary-foreign-token", "unsupported-claim", "value-changed"]);
  });

  it("lets notes and done tasks stay cold", () => {
    const events = log(
      { eventId: "m-1", kind: "note", text: "Never mind the 3 calls on 2026-01-02." },
      { eventId: "m-2", kind: "task", text: "Call 555-0100.", taskStatus: "done" },
    );
    expect(gate(events, candidate({ coldRefs: ["m-1", "m-2"] })).verdict).toBe("pass");
  });
});

describe("budget", () => {
  const events = log(
    ...Array.from({ length: 40 }, (_, i) => ({
      eventId: `n-${i}`,
      kind: "note",
      text: `Lunch talk number ${i}, nothing decided.`,
    })),
    fact("m-1", "budget", { quantity: "100", unit: "USD" }),
  );

  it("refuses a candidate over its token budget", () => {
    const big = consolidate(contextOf(events));
    const report = gate(events, big, { budget: 50 });
    expect(codes(report)).toEqual(["over-budget"]);
    expect(report.stats.tokens).toBeGreaterThan(50);
  });

  it("the consolidator leaves notes cold to fit rather than truncating", () => {
    const context = contextOf(events);
    const fitted = consolidate(context, { budget: 120 });
    expect(gate(events, fitted, { budget: 120 }).reasons).toEqual([]);
    expect(fitted.coldRefs.length).toBeGreaterThan(30);
    expect(fitted.claims.map((c) => c.key)).toContain("budget");
  });
});

describe("dates written without a year", () => {
  const events = log(fact("m-1", "project:alpha/launch", { date: "2026-12-03" }, { kind: "decision" }));
  const keep = settled("project:alpha/launch", { date: "2026-12-03" }, ["m-1"]);

  it("lets the summary say Dec 3 for 2026-12-03, but not Dec 4", () => {
    expect(
      gate(events, candidate({ claims: [keep], summary: "Alpha launches on Dec 3 (12月3日)." })).reasons,
    ).toEqual([]);
    expect(codes(gate(events, candidate({ claims: [keep], summary: "Alpha launches on Dec 4." })))).toEqual([
      "summary-foreign-token",
    ]);
  });

  it("keeps a source's year-less date by the same month-day, with or without a year", () => {
    const text = log({ eventId: "m-1", kind: "constraint", text: "Never deploy on Dec 24." });
    expect(
      gate(
        text,
        candidate({ claims: [settled("memory:m-1", { text: "Never deploy on 24 December." }, ["m-1"])] }),
      ).reasons,
    ).toEqual([]);
    expect(
      codes(
        gate(
          text,
          candidate({ claims: [settled("memory:m-1", { text: "Never deploy on Dec 25." }, ["m-1"])] }),
        ),
      ),
    ).toContain("value-changed");
  });
});
