import { canonicalDate } from "./dates.ts";
import { canonicalQuantity, parseDecimal, quantityKey } from "./quantity.ts";
import type { ValueData } from "./schemas.ts";

/** NFC, runs of white space folded to one space, trimmed: the form text is compared in. */
export function normalizeText(text: string): string {
  return text.normalize("NFC").replace(/\s+/gu, " ").trim();
}

/**
 * The gate's `canonicalValue`: two values mean the same thing exactly when their keys are equal.
 * Quantities compare exactly after conversion to the base unit, dates as days or instants, scopes
 * as sets, text after normalisation, entities as written.
 */
export function canonicalValue(value: ValueData): string {
  if ("text" in value) return `text:${normalizeText(value.text)}`;
  if ("bool" in value) return `bool:${value.bool}`;
  if ("quantity" in value)
    return `quantity:${quantityKey(canonicalQuantity(parseDecimal(value.quantity), value.unit))}`;
  if ("date" in value) return `date:${canonicalDate(value.date) ?? value.date}`;
  if ("entity" in value) return `entity:${value.entity}`;
  return `scopes:${JSON.stringify([...new Set(value.scopes.map((scope) => scope.normalize("NFC")))].sort())}`;
}

/** A short human rendering of a value for reports. */
export function describeValue(value: ValueData): string {
  if ("text" in value)
    return JSON.stringify(value.text.length > 80 ? `${value.text.slice(0, 77)}...` : value.text);
  if ("bool" in value) return String(value.bool);
  if ("quantity" in value)
    return value.unit === undefined ? value.quantity : `${value.quantity} ${value.unit}`;
  if ("date" in value) return value.date;
  if ("entity" in value) return value.entity;
  return `{${value.scopes.join(", ")}}`;
}

/** Whether the value is one of the kinds that make an assertion must-preserve on their own. */
export function isExactValue(value: ValueData): boolean {
  return "quantity" in value || "date" in value || "entity" in value || "scopes" in value;
}
