import type { ModelPort, ModelRequest } from "../../app/model.ts";
import { consolidate, DETERMINISTIC_MODEL } from "../../domain/consolidator.ts";
import type { ConsolidationOutput } from "../../domain/schemas.ts";

/**
 * The embedded default model and the test doubles that fail on purpose. Doubles start from the
 * deterministic consolidator's honest answer and bend it the way real models do.
 */

const deterministic: ModelPort = {
  name: DETERMINISTIC_MODEL,
  async generate(request: ModelRequest): Promise<string> {
    return JSON.stringify(
      consolidate(request.context, request.budget === undefined ? {} : { budget: request.budget }),
    );
  },
};

function bending(
  name: string,
  bend: (honest: ConsolidationOutput, request: ModelRequest) => unknown,
): ModelPort {
  return {
    name,
    async generate(request: ModelRequest): Promise<string> {
      const honest = consolidate(
        request.context,
        request.budget === undefined ? {} : { budget: request.budget },
      );
      return JSON.stringify(bend(honest, request));
    },
  };
}

const structured = (o: ConsolidationOutput) =>
  o.claims.findIndex((claim) => !claim.key.startsWith("memory:"));

export const MODELS: Record<string, ModelPort> = {
  [DETERMINISTIC_MODEL]: deterministic,
  /** Never answers: the caller's timeout must end it. */
  slow: {
    name: "slow",
    generate: (_request, signal) =>
      new Promise((_resolve, reject) => {
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      }),
  },
  "missing-fields": bending("missing-fields", (o) => ({ claims: o.claims })),
  truncated: {
    name: "truncated",
    async generate(request) {
      const text = await deterministic.generate(request, new AbortController().signal);
      return text.slice(0, Math.floor(text.length / 2));
    },
  },
  "polarity-flip": bending("polarity-flip", (o) => {
    const i = structured(o);
    return {
      ...o,
      claims: o.claims.map((c, j) =>
        j === i ? { ...c, polarity: c.polarity === "affirmed" ? "negated" : "affirmed" } : c,
      ),
    };
  }),
  "number-nudge": bending("number-nudge", (o) => ({
    ...o,
    claims: o.claims.map((c) =>
      "quantity" in c.value ? { ...c, value: { ...c.value, quantity: `${c.value.quantity}1` } } : c,
    ),
  })),
  hallucinate: bending("hallucinate", (o) => ({
    ...o,
    claims: [
      ...o.claims,
      {
        key: "invented/fact",
        scope: "global",
        value: { text: "made up" },
        polarity: "affirmed",
        status: "settled",
        derivedFrom: o.claims[0]?.derivedFrom ?? ["none"],
      },
    ],
  })),
  "cite-revoked": bending("cite-revoked", (o, request) => {
    const invalid = [...request.context.selection.invalid.entries()].find(
      ([, why]) => why === "revoked" || why === "superseded",
    );
    return invalid ? { ...o, coldRefs: [...o.coldRefs, invalid[0]] } : o;
  }),
};

export function modelNamed(name: string): ModelPort {
  const model = MODELS[name];
  if (!model) throw new Error(`unknown model "${name}"; known: ${Object.keys(MODELS).join(", ")}`);
  return model;
}
