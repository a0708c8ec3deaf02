/**
 * `value` frozen throughout (every object and array it holds), returned as is: what a cache
 * hands to every caller of the same entry, so no caller can change what another one sees.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
