import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { rawBeforeRecord, rawForRecord, type ServedRecord, type ServingState } from "#domain/serving.ts";

const live = { recallBypass: false };
const current: ServingState = { inputEpoch: 3, expectedAlias: { sourceEpoch: 3 } };
const published: ServedRecord = { status: "PUBLISHED", stale: false };
const STATUSES = ["CANDIDATE", "REJECTED", "SHADOW", "PUBLISHED", "SUPERSEDED", "ABANDONED"];

describe("when recall serves the summary", () => {
  it("serves a PUBLISHED, unmarked summary whose epoch is the clock's, with bypass off", () => {
    expect(rawBeforeRecord(live, current)).toBeNull();
    expect(rawForRecord("summary:s:000004:a", published)).toBeNull();
  });

  it("answers raw under bypass even when the summary is current", () => {
    expect(rawBeforeRecord({ recallBypass: true }, current)).toBe("recall bypass is on: raw events only");
  });

  it("answers raw before anything is published", () => {
    expect(rawBeforeRecord(live, { inputEpoch: 0, expectedAlias: null })).toBe("no summary published yet");
  });

  it("answers raw from the moment the epoch moves, naming both epochs", () => {
    expect(rawBeforeRecord(live, { inputEpoch: 4, expectedAlias: { sourceEpoch: 3 } })).toBe(
      "the sources changed since the summary (built at inputEpoch 3; the clock's inputEpoch is 4); raw until it is rebuilt",
    );
  });

  it("answers raw for a STALE mark whatever the status beside it", () => {
    expect(rawForRecord("summary:s:000004:a", { status: "PUBLISHED", stale: true })).toBe(
      "artifact summary:s:000004:a is STALE, not PUBLISHED",
    );
    expect(rawForRecord("summary:s:000004:a", { status: "SUPERSEDED", stale: true })).toBe(
      "artifact summary:s:000004:a is STALE, not PUBLISHED",
    );
  });

  it("answers raw for a record that is missing or not PUBLISHED, saying what it is", () => {
    expect(rawForRecord("summary:s:000004:a", null)).toBe(
      "artifact summary:s:000004:a is missing, not PUBLISHED",
    );
    expect(rawForRecord("summary:s:000004:a", { status: "SHADOW", stale: false })).toBe(
      "artifact summary:s:000004:a is SHADOW, not PUBLISHED",
    );
  });

  it("serves exactly when bypass is off, the epochs match and the record is PUBLISHED and unmarked", () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.nat(5),
        fc.option(fc.nat(5)),
        fc.option(fc.record({ status: fc.constantFrom(...STATUSES), stale: fc.boolean() })),
        (recallBypass, inputEpoch, sourceEpoch, record) => {
          const state = { inputEpoch, expectedAlias: sourceEpoch === null ? null : { sourceEpoch } };
          const reason =
            rawBeforeRecord({ recallBypass }, state) ?? rawForRecord("summary:s:000001:a", record);
          const served =
            !recallBypass &&
            sourceEpoch === inputEpoch &&
            record !== null &&
            record.status === "PUBLISHED" &&
            !record.stale;
          // Raw always says why; a served summary has no reason to give.
          expect(reason === null).toBe(served);
          if (reason !== null) expect(reason.length).toBeGreaterThan(0);
        },
      ),
    );
  });
});
