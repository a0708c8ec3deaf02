import Fraction from "fraction.js";
import { readUnitExpression } from "./unit-expression.ts";

/**
 * Exact quantities. A decimal string becomes an exact rational (no float is ever involved), and a
 * unit becomes an exact rational factor to its base unit plus a dimension key, so that
 * `5 km == 5000 m`, `36 km/h == 10 m/s`, `"1.50" == "1.5"` and `8 km != 5 mi` hold without rounding.
 *
 * Unit knowledge comes from mathjs's unit table, generated into `unit-table.ts` (so mathjs is never
 * loaded at run time) and read with mathjs's grammar (`unit-expression.ts`): its factors are decimal
 * literals, kept as their shortest round-trip text and read back as exact rationals. Units mathjs
 * does not know (currencies, "people") and calendar units whose length varies (month, year) are
 * opaque: they compare equal only to themselves.
 */

export const DECIMAL_PATTERN = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const DECIMAL_PARTS = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;
const powersOfTen: bigint[] = [];

function powerOfTen(exponent: number): bigint {
  powersOfTen[exponent] ??= 10n ** BigInt(exponent);
  return powersOfTen[exponent] as bigint;
}

/**
 * CONTRACT §4b "Bounded input": at most this many significant digits, a magnitude (the exponent of
 * the scientific form, whether written as an exponent or implied by leading or trailing zeros)
 * within ±MAX_EXPONENT, and at most MAX_QUANTITY_CHARACTERS characters however it is written.
 */
export const MAX_SIGNIFICANT_DIGITS = 64;
export const MAX_EXPONENT = 1000;
/** The longhand of the smallest bounded magnitude (`0.` and 999 zeros before 64 digits) fits. */
export const MAX_QUANTITY_CHARACTERS = 1100;

/**
 * Whether a decimal string stays within the bounds exact arithmetic can afford: "1e999999999"
 * would take seconds of BigInt work and then fail, so it is refused where it enters; so is its
 * longhand ("0.000…0001" with a million zeros), which is the same number.
 */
export function isBoundedDecimal(text: string): boolean {
  if (text.length > MAX_QUANTITY_CHARACTERS) return false;
  const parts = DECIMAL_PATTERN.test(text) ? DECIMAL_PARTS.exec(text) : null;
  if (!parts) return false;
  const [, , whole = "", fraction = "", exponentText] = parts;
  const written = exponentText === undefined ? 0 : Number.parseInt(exponentText, 10);
  if (Math.abs(written) > MAX_EXPONENT) return false;
  const digits = `${whole}${fraction}`;
  const first = digits.search(/[1-9]/);
  if (first < 0) return true; // zero, however many zeros it is written with
  if (digits.length - first > MAX_SIGNIFICANT_DIGITS) return false;
  const magnitude = written + whole.length - first - 1;
  return Math.abs(magnitude) <= MAX_EXPONENT;
}

/** Parses a decimal string ("12500.00", "-1.5e3") into an exact rational; throws on anything else. */
export function parseDecimal(text: string): Fraction {
  const parts = DECIMAL_PATTERN.test(text) ? DECIMAL_PARTS.exec(text) : null;
  if (!parts) throw new RangeError(`"${text}" is not a decimal number`);
  const [, sign, whole, fraction = "", exponentText] = parts;
  const exponent = (exponentText === undefined ? 0 : Number.parseInt(exponentText, 10)) - fraction.length;
  let numerator = BigInt(`${whole || "0"}${fraction}`);
  if (sign === "-") numerator = -numerator;
  if (exponent >= 0) return new Fraction(numerator * powerOfTen(exponent), 1n);
  return new Fraction(numerator, powerOfTen(-exponent));
}

/** A factor of the unit table: a decimal, or a fraction `n/d` (the Rankine degree's 5/9). */
function parseFactor(text: string): Fraction {
  const slash = text.indexOf("/");
  if (slash < 0) return parseDecimal(text);
  return new Fraction(BigInt(text.slice(0, slash)), BigInt(text.slice(slash + 1)));
}

/** How a unit compares: a dimension with an exact factor to base, or an opaque label. */
export type UnitInfo =
  | { kind: "dimension"; dimension: string; factor: Fraction; label: string }
  | { kind: "opaque"; label: string };

const CALENDAR_UNITS = new Set([
  "month",
  "months",
  "year",
  "years",
  "decade",
  "decades",
  "century",
  "centuries",
]);
const CALENDAR_CANONICAL: Record<string, string> = {
  months: "month",
  years: "year",
  decades: "decade",
  centuries: "century",
};

/** Words people write for units that mathjs spells differently, English and Chinese. */
const UNIT_ALIASES: Record<string, string> = {
  // The day's symbol (CONTRACT §4b): `{24 h}` restates `{1 d}`.
  d: "day",
  天: "day",
  小时: "hour",
  个小时: "hour",
  钟头: "hour",
  分钟: "minute",
  秒: "s",
  秒钟: "s",
  毫秒: "ms",
  周: "week",
  星期: "week",
  个星期: "week",
  公里: "km",
  千米: "km",
  米: "m",
  厘米: "cm",
  毫米: "mm",
  公斤: "kg",
  千克: "kg",
  克: "g",
  吨: "tonne",
  hrs: "hr",
  mins: "min",
  secs: "s",
  sec: "s",
  kph: "km/h",
  mph: "mi/h",
  KB: "kB",
};

/** Currency words and symbols; a currency compares only with itself. */
const CURRENCY_ALIASES: Record<string, string> = {
  $: "USD",
  US$: "USD",
  "€": "EUR",
  "£": "GBP",
  dollar: "USD",
  dollars: "USD",
  euro: "EUR",
  euros: "EUR",
  yuan: "CNY",
  RMB: "CNY",
  元: "CNY",
  块: "CNY",
  人民币: "CNY",
  美元: "USD",
  欧元: "EUR",
  英镑: "GBP",
  日元: "JPY",
};

const CALENDAR_ALIASES: Record<string, string> = { 个月: "month", 年: "year" };

/** ISO 4217 codes in use, plus the two common crypto tickers; a bare "API" after a number is no currency. */
const CURRENCY_CODES = new Set(
  `AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF
  CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL
  HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL
  MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON
  RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH
  UGX USD UYU UZS VES VND VUV WST XAF XCD XOF XPF YER ZAR ZMW ZWL BTC ETH`.split(/\s+/),
);
const unitCache = new Map<string, UnitInfo | null>();

/**
 * Resolves a unit string to how it compares, or null when the string is not a unit at all
 * (then a number before it is unitless). Results are cached: the table is fixed.
 */
export function resolveUnit(raw: string): UnitInfo | null {
  const cached = unitCache.get(raw);
  if (cached !== undefined) return cached;
  const info = lookupUnit(raw);
  unitCache.set(raw, info);
  return info;
}

function lookupUnit(raw: string): UnitInfo | null {
  const text = raw.normalize("NFC").trim();
  if (text === "") return null;
  const currency = CURRENCY_ALIASES[text] ?? CURRENCY_ALIASES[text.toLowerCase()];
  if (currency) return { kind: "opaque", label: currency };
  if (CURRENCY_CODES.has(text)) return { kind: "opaque", label: text };
  if (text === "%" || text === "percent" || text === "％") return { kind: "opaque", label: "%" };
  const calendar = CALENDAR_ALIASES[text];
  if (calendar) return { kind: "opaque", label: calendar };
  // British spellings name the same units (kilometres, litres).
  const name = UNIT_ALIASES[text] ?? text.replace(/metre(s?)$/, "meter$1").replace(/litre(s?)$/, "liter$1");
  const parsed = readUnitExpression(name);
  if (parsed === null) return null;
  const { terms } = parsed;
  if (terms.length === 1 && terms[0] && CALENDAR_UNITS.has(terms[0].name)) {
    const unitName = terms[0].name;
    return { kind: "opaque", label: CALENDAR_CANONICAL[unitName] ?? unitName };
  }
  if (terms.some((term) => term.offset !== 0)) return { kind: "opaque", label: name };
  let factor = new Fraction(1);
  for (const term of terms) {
    // The volt-ampere reactive's factor is imaginary: it compares only with itself.
    if (term.factor === null) return { kind: "opaque", label: name };
    const single = parseFactor(term.factor).mul(parseDecimal(term.prefixFactor));
    factor = factor.mul(single.pow(term.power));
  }
  return { kind: "dimension", dimension: parsed.dimensions.join(","), factor, label: name };
}

/** A quantity brought to a comparable form: the value in base units and the unit's comparison key. */
export interface CanonicalQuantity {
  /** "d:<dimension vector>" for convertible units, "u:<label>" for opaque ones, "" for none. */
  unitKey: string;
  /** The exact value in the base unit, as a reduced fraction string. */
  baseValue: string;
  /** The number as written, without its unit (for folding 12,500 = 12500.00). */
  number: string;
}

/** Canonical form of (decimal, unit?); null when the unit string is not a unit we can compare. */
export function canonicalQuantity(decimal: Fraction, unit: string | undefined): CanonicalQuantity {
  const number = decimal.toFraction();
  if (unit === undefined || unit.trim() === "") return { unitKey: "", baseValue: number, number };
  const info = resolveUnit(unit);
  if (info === null) return { unitKey: `u:${unit.normalize("NFC").trim()}`, baseValue: number, number };
  if (info.kind === "opaque") return { unitKey: `u:${info.label}`, baseValue: number, number };
  return { unitKey: `d:${info.dimension}`, baseValue: decimal.mul(info.factor).toFraction(), number };
}

export function quantityKey(quantity: CanonicalQuantity): string {
  return `${quantity.unitKey}|${quantity.baseValue}`;
}
