import { BASE_DIMENSIONS, UNIT_PREFIXES, UNITS, type UnitRow } from "./unit-table.ts";

/**
 * Unit expressions (`km`, `km/h`, `kg m^2 / s^2`, `(m/s)`) read exactly as mathjs's `Unit.parse`
 * reads them, over the unit table generated from mathjs (`unit-table.ts`): an optional leading
 * number (ignored: `5 km` names km), then units with an optional prefix and `^power`, joined by
 * `*`, `/`, white space or parentheses. The grammar is mathjs's, so a unit string compares the
 * same way it did when mathjs read it; test/domain/unit-table.test.ts holds the two side by side.
 */

/** One unit of an expression: the table's unit, its prefix's factor text and its power. */
export interface UnitTerm {
  name: string;
  /** The unit's factor to its base unit, as exact text (a decimal or a fraction); null if not real. */
  factor: string | null;
  offset: number;
  prefixFactor: string;
  power: number;
}

/** The units of an expression and its dimension vector (in `BASE_DIMENSIONS` order). */
export interface UnitExpression {
  terms: UnitTerm[];
  dimensions: number[];
}

const unitsByName = new Map<string, UnitRow>(UNITS.map((row) => [row[0], row]));

/** A unit name with its prefix (`km`, `kilometer`, `MiB`) as mathjs finds it, or null. */
function findUnit(text: string): { unit: UnitRow; prefix: string } | null {
  const exact = unitsByName.get(text);
  if (exact) return { unit: exact, prefix: prefixFactor(exact, "") as string };
  // mathjs takes the first unit in table order whose name ends the text and whose prefix set holds the rest.
  for (const unit of UNITS) {
    if (!text.endsWith(unit[0])) continue;
    const prefix = prefixFactor(unit, text.slice(0, text.length - unit[0].length));
    if (prefix !== undefined) return { unit, prefix };
  }
  return null;
}

function prefixFactor(unit: UnitRow, prefix: string): string | undefined {
  const set = UNIT_PREFIXES[unit[4]];
  return set !== undefined && Object.hasOwn(set, prefix) ? set[prefix] : undefined;
}

const isDigit = (c: string) => c >= "0" && c <= "9";
const isLetter = (c: string) => /^[a-zA-Z]$/.test(c);

/** Reads a unit expression; null when mathjs would have refused it. */
export function readUnitExpression(text: string): UnitExpression | null {
  let index = 0;
  const current = () => text.charAt(index);
  const skipWhitespace = () => {
    while (current() === " " || current() === "\t") index++;
  };
  const take = (c: string) => {
    if (current() !== c) return false;
    index++;
    return true;
  };
  /** A number as mathjs reads it (`-1`, `.5`, `2.`, `1e3`; `4erg` is 4 then erg), or null. */
  const readNumber = (): string | null => {
    const start = index;
    let number = "";
    if (current() === "+") index++;
    else if (current() === "-") {
      number += "-";
      index++;
    }
    if (!isDigit(current()) && current() !== ".") {
      index = start;
      return null;
    }
    if (current() === ".") {
      number += ".";
      index++;
      if (!isDigit(current())) {
        index = start;
        return null;
      }
    } else {
      while (isDigit(current())) number += text.charAt(index++);
      if (current() === ".") number += text.charAt(index++);
    }
    while (isDigit(current())) number += text.charAt(index++);
    if (current() === "e" || current() === "E") {
      const exponentStart = index;
      let exponent = text.charAt(index++);
      if (current() === "+" || current() === "-") exponent += text.charAt(index++);
      if (!isDigit(current())) {
        index = exponentStart;
        return number;
      }
      number += exponent;
      while (isDigit(current())) number += text.charAt(index++);
    }
    return number;
  };
  const readName = (): string | null => {
    const start = index;
    while (isDigit(current()) || isLetter(current())) index++;
    const name = text.slice(start, index);
    return isLetter(name.charAt(0)) ? name : null;
  };

  const terms: UnitTerm[] = [];
  const dimensions = BASE_DIMENSIONS.map(() => 0);
  let multiplier = 1;
  let expectingUnit = false;
  skipWhitespace();
  if (readNumber()) {
    skipWhitespace();
    if (take("*")) expectingUnit = true;
    else if (take("/")) {
      multiplier = -1;
      expectingUnit = true;
    }
  }
  // Each open parenthesis keeps the multiplier it was opened under.
  const groups: number[] = [];
  let groupProduct = 1;
  for (;;) {
    skipWhitespace();
    while (current() === "(") {
      groups.push(multiplier);
      groupProduct *= multiplier;
      multiplier = 1;
      index++;
      skipWhitespace();
    }
    if (current() === "") break;
    const name = readName();
    const found = name === null ? null : findUnit(name);
    if (found === null) return null;
    let power = multiplier * groupProduct;
    skipWhitespace();
    if (take("^")) {
      skipWhitespace();
      const exponent = readNumber();
      if (exponent === null) return null;
      power *= Number(exponent);
    }
    const [unitName, factor, offset, unitDimensions] = found.unit;
    terms.push({ name: unitName, factor, offset, prefixFactor: found.prefix, power });
    for (let i = 0; i < dimensions.length; i++)
      dimensions[i] = (dimensions[i] as number) + (unitDimensions[i] || 0) * power;
    skipWhitespace();
    while (current() === ")") {
      const opened = groups.pop();
      if (opened === undefined) return null;
      groupProduct /= opened;
      index++;
      skipWhitespace();
    }
    expectingUnit = false;
    multiplier = 1;
    if (take("*")) expectingUnit = true;
    else if (take("/")) {
      multiplier = -1;
      expectingUnit = true;
    }
  }
  if (expectingUnit || groups.length > 0) return null;
  return { terms, dimensions };
}
