import { readFileSync } from "node:fs";
import fc from "fast-check";
import type { FactoryFunctionMap } from "mathjs";
import { create, unitDependencies } from "mathjs";
import { describe, expect, it } from "vitest";
import { readUnitExpression, type UnitExpression } from "#domain/unit-expression.ts";
import { BASE_DIMENSIONS, UNIT_PREFIXES, UNITS } from "#domain/unit-table.ts";
import { factorText, renderUnitTable, unitTableFromMathjs } from "../../scripts/generate-unit-table.ts";

const generated = unitTableFromMathjs();
const math = create({ unitDependencies } as FactoryFunctionMap);

interface MathjsUnitPart {
  unit: { name: string; value: unknown; offset: number };
  prefix: { value: number };
  power: number;
}

/** How mathjs itself reads a unit string (as the domain called it before the table): null if refused. */
function mathjsReading(text: string): UnitExpression | null {
  let unit: { units: unknown; dimensions: number[] };
  try {
    unit = math.unit(text) as unknown as typeof unit;
  } catch {
    return null;
  }
  return {
    terms: (unit.units as MathjsUnitPart[]).map((part) => ({
      name: part.unit.name,
      factor: factorText(part.unit.value),
      offset: part.unit.offset,
      prefixFactor: String(part.prefix.value),
      power: part.power,
    })),
    dimensions: [...unit.dimensions],
  };
}

describe("the unit table generated from mathjs", () => {
  it("is what the generator writes from the installed mathjs (npm run generate:units)", () => {
    expect([...BASE_DIMENSIONS]).toEqual(generated.baseDimensions);
    expect(UNIT_PREFIXES).toEqual(generated.prefixes);
    expect(UNITS).toEqual(generated.units);
    const committed = readFileSync(new URL("../../shared/domain/unit-table.ts", import.meta.url), "utf8");
    expect(committed.split("\n")[0]).toBe(renderUnitTable(generated).split("\n")[0]);
  });

  it("reads every unit name with every prefix it takes as mathjs does", () => {
    const names = UNITS.flatMap(([name, , , , prefixes]) =>
      Object.keys(UNIT_PREFIXES[prefixes] ?? {}).map((prefix) => `${prefix}${name}`),
    );
    expect(names.length).toBeGreaterThan(2500);
    for (const name of names) expect(readUnitExpression(name), name).toEqual(mathjsReading(name));
  });

  it.each([
    "km/h",
    "mi/h",
    "m/s^2",
    "kg*m^2/s^2",
    "kg m^2 s^-2",
    "m/(s*kg)",
    "m / (s kg)^2",
    "((m))",
    "(m/s)",
    "1/s",
    "5 km",
    "-5 m",
    "+5 m",
    ".5m",
    "5.m",
    "-.m",
    "2.5e3 m",
    "5e-3 m",
    "5E+3 m",
    "m^2e-1",
    "4erg",
    "5e",
    "e3",
    "5",
    "m^+2",
    "m ^ -1.5",
    "m^0.5",
    "m^1e400",
    "m^",
    "km/",
    "(m",
    "m)",
    "*m",
    "m**s",
    "m\t/\ts",
    "MiB",
    "MB",
    "kB",
    "KB",
    "kWh",
    "degC",
    "degF",
    "hr",
    "hours",
    "d",
    "days",
    "month",
    "years",
    "°C",
    "km²",
    "μm",
    "people",
    "USD",
    "constructor",
    "__proto__",
    "hasOwnProperty",
  ])("reads %j as mathjs does", (text) => {
    expect(readUnitExpression(text)).toEqual(mathjsReading(text));
  });

  it("reads any string of unit names, prefixes, numbers and operators as mathjs does", () => {
    const pieces = [
      ...UNITS.map(([name]) => name),
      ..."k M m c u G Ki Mi kilo milli mega".split(" "),
      ..." \t / * ^ ( ) - + . e E 2 0 5 1e3 x é".split(" "),
      " ",
      "\t",
    ];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 8 }), (parts) => {
        const text = parts.join("");
        expect(readUnitExpression(text)).toEqual(mathjsReading(text));
      }),
      { numRuns: 3000 },
    );
  });
});
