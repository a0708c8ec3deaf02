/**
 * JSON as a candidate must be written (CONTRACT §4b "Bounded input"): one value, nothing but white
 * space after it, and no object with a key twice. `JSON.parse` keeps the last of two duplicate keys
 * silently, so a model's answer could say one thing to a reader and another to the gate; this
 * refuses it instead. A leading byte order mark is accepted.
 */
export type StrictJson =
  | { ok: true; value: unknown }
  /** `duplicate` when the text is JSON but holds a key twice (the problem names it too). */
  | { ok: false; problem: string; duplicate?: { key: string; path: string } };

export function parseStrictJson(text: string): StrictJson {
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    return {
      ok: false,
      problem: `not valid JSON (${error instanceof Error ? error.message : String(error)})`,
    };
  }
  const duplicate = firstDuplicateKey(body);
  return duplicate === null
    ? { ok: true, value }
    : {
        ok: false,
        problem: `duplicate key ${JSON.stringify(duplicate.key)} in one object at ${duplicate.path}`,
        duplicate,
      };
}

/**
 * One pass over text that JSON.parse accepted: the first object key that appears twice in its
 * object, with a readable path to that object. Linear in the text; keys compare after decoding
 * (so "a" and "\u0061" are the same key). Given other text it still ends: a string left open
 * stops the pass (null) instead of reading past the end.
 */
export function firstDuplicateKey(text: string): { key: string; path: string } | null {
  interface Frame {
    keys: Set<string> | null; // null for arrays
    index: number;
    expectingKey: boolean;
    lastKey: string;
  }
  // Every open object and array, outermost first; a frame's path is read from its ancestors only
  // when a duplicate is found (building it for every element would cost more than the scan).
  const stack: Frame[] = [];
  const pathOf = (depth: number) => {
    let path = "$";
    for (let j = 0; j < depth; j++) {
      const parent = stack[j] as Frame;
      path += parent.keys === null ? `[${parent.index}]` : `.${parent.lastKey}`;
    }
    return path;
  };
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      const isObject = code === OPEN_OBJECT;
      stack.push({ keys: isObject ? new Set() : null, index: 0, expectingKey: isObject, lastKey: "" });
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      stack.pop();
    } else if (code === COMMA) {
      const top = stack[stack.length - 1];
      if (top) {
        top.index++;
        if (top.keys !== null) top.expectingKey = true;
      }
    } else if (code === QUOTE) {
      // The closing quote: the next one not escaped (preceded by an even run of backslashes).
      let end = text.indexOf('"', i + 1);
      for (;;) {
        if (end < 0) return null;
        let backslashes = 0;
        while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
        if (backslashes % 2 === 0) break;
        end = text.indexOf('"', end + 1);
      }
      const top = stack[stack.length - 1];
      if (top?.keys && top.expectingKey) {
        const literal = text.slice(i + 1, end);
        const key = literal.includes("\\") ? (JSON.parse(`"${literal}"`) as string) : literal;
        if (top.keys.has(key)) return { key, path: pathOf(stack.length - 1) };
        top.keys.add(key);
        top.lastKey = key;
        top.expectingKey = false;
      }
      i = end;
    }
  }
  return null;
}

const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
