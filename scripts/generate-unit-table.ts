// Writes shared/domain/unit-table.ts from mathjs's unit table: every unit (aliases included, in
// mathjs's lookup order) with its factor to the base unit as exact text, its offset, its dimension
// vector and its prefix set, and every prefix set. The domain reads units from that module, so
// nothing loads mathjs at run time (it took about a second). Run after upgrading mathjs:
//   npm run generate:units
// test/domain/unit-table.test.ts fails while the committed table and this generator disagree.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FactoryFunctionMap } from "mathjs";
import { create, unitDependencies } from "mathjs";

/** One unit as the table writes it: name, factor text, offset, dimension vector, prefix set. */
export type UnitRow = [
  name: string,
  factor: string | null,
  offset: number,
  dimensions: number[],
  prefixes: string,
];

export interface UnitTable {
  mathjsVersion: string;
  baseDimensions: string[];
  prefixes: Record<string, Record<string, string>>;
  units: UnitRow[];
}

interface MathjsPrefix {
  value: number;
}
interface MathjsUnit {
  name: string;
  value: unknown;
  offset: number;
  dimensions: number[];
  prefixes: Record<string, MathjsPrefix>;
}
interface MathjsUnitClass {
  UNITS: Record<string, MathjsUnit>;
  PREFIXES: Record<string, Record<string, MathjsPrefix>>;
  BASE_DIMENSIONS: string[];
}

const root = join(import.meta.dirname, "..");
const target = join(root, "shared", "domain", "unit-table.ts");
const mathjsPackage = join(root, "node_modules", "mathjs", "package.json");

/**
 * The factor of a unit or prefix as exact text: mathjs writes its factors as decimal literals, so
 * the shortest round-trip text of each is that literal; the Rankine degree's 5/9 is a fraction and
 * written as one. The volt-ampere reactive's factor is the imaginary unit: no real factor (null),
 * so VAR compares only with itself.
 */
export function factorText(value: unknown): string | null {
  if (typeof value === "number") return String(value);
  if (isFraction(value)) return `${value.s < 0n ? "-" : ""}${value.n}/${value.d}`;
  return null;
}

function isFraction(value: unknown): value is { s: bigint; n: bigint; d: bigint } {
  return typeof value === "object" && value !== null && "n" in value && typeof value.n === "bigint";
}

/** mathjs's unit table, read from a fresh mathjs instance. */
export function unitTableFromMathjs(): UnitTable {
  const math = create({ unitDependencies } as FactoryFunctionMap);
  const Unit = math.Unit as unknown as MathjsUnitClass;
  const prefixSets = Object.entries(Unit.PREFIXES);
  const prefixSetName = (unit: MathjsUnit): string => {
    const found = prefixSets.find(([, set]) => set === unit.prefixes);
    if (!found) throw new Error(`unit ${unit.name} uses a prefix set mathjs does not name`);
    return found[0];
  };
  return {
    mathjsVersion: (JSON.parse(readFileSync(mathjsPackage, "utf8")) as { version: string }).version,
    baseDimensions: [...Unit.BASE_DIMENSIONS],
    prefixes: Object.fromEntries(
      prefixSets.map(([name, set]) => [
        name,
        Object.fromEntries(Object.entries(set).map(([prefix, { value }]) => [prefix, String(value)])),
      ]),
    ),
    units: Object.entries(Unit.UNITS).map(([name, unit]) => {
      if (unit.name !== name) throw new Error(`unit ${name} calls itself ${unit.name}`);
      return [name, factorText(unit.value), unit.offset, [...unit.dimensions], prefixSetName(unit)];
    }),
  };
}

/** The table as a TypeScript module (formatted afterwards by the project's formatter). */
export function renderUnitTable(table: UnitTable): string {
  const json = (value: unknown) => JSON.stringify(value);
  return [
    `// Generated from mathjs ${table.mathjsVersion} by scripts/generate-unit-table.ts; do not edit.`,
    "// test/domain/unit-table.test.ts fails while this file and the generator disagree.",
    "",
    "/** The base dimensions, in the order of every dimension vector below. */",
    `export const BASE_DIMENSIONS: readonly string[] = ${json(table.baseDimensions)};`,
    "",
    "/** Each prefix set: prefix → its factor as exact text. */",
    "export const UNIT_PREFIXES: Readonly<Record<string, Readonly<Record<string, string>>>> = {",
    ...Object.entries(table.prefixes).map(([name, set]) => `${json(name)}: ${json(set)},`),
    "};",
    "",
    "/**",
    " * A unit: name, factor to its base unit as exact text (a decimal or a fraction; null when it is no",
    " * real number), offset (°C, °F), dimensions, prefix set.",
    " */",
    "export type UnitRow = readonly [",
    "  name: string,",
    "  factor: string | null,",
    "  offset: number,",
    "  dimensions: readonly number[],",
    "  prefixes: string,",
    "];",
    "",
    "/** Every unit, aliases included, in mathjs's lookup order (a prefixed name takes the first match). */",
    "export const UNITS: readonly UnitRow[] = [",
    ...table.units.map((row) => `${json(row)},`),
    "];",
    "",
  ].join("\n");
}

if (process.argv[1] === import.meta.filename) {
  const table = unitTableFromMathjs();
  console.log(`reading mathjs ${table.mathjsVersion}'s unit table`);
  writeFileSync(target, renderUnitTable(table));
  const formatted = spawnSync(join(root, "node_modules", ".bin", "biome"), ["format", "--write", target], {
    stdio: "inherit",
  });
  if (formatted.status !== 0) process.exitCode = 1;
  console.log(
    `wrote ${target}: ${table.units.length} units, ${Object.keys(table.prefixes).length} prefix sets`,
  );
}
