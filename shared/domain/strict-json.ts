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
    path: string;
    index: number;
    expectingKey: boolean;
    lastKey: string;
  }
  const stack: Frame[] = [];
  const childPath = (frame: Frame | undefined) =>
    frame === undefined
      ? "$"
      : frame.keys === null
        ? `${frame.path}[${frame.index}]`
        : `${frame.path}.${frame.lastKey}`;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    const top = stack[stack.length - 1];
    if (char === "{" || char === "[") {
      stack.push({
        keys: char === "{" ? new Set() : null,
        path: childPath(top),
        index: 0,
        expectingKey: char === "{",
        lastKey: "",
      });
    } else if (char === "}" || char === "]") {
      stack.pop();
    } else if (char === ",") {
      if (top) {
        top.index++;
        if (top.keys !== null) top.expectingKey = true;
      }
    } else if (char === '"') {
      let end = i + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
      if (end >= text.length) return null;
      if (top?.keys && top.expectingKey) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (top.keys.has(key)) return { key, path: top.path };
        top.keys.add(key);
        top.lastKey = key;
        top.expectingKey = false;
      }
      i = end;
    }
  }
  return null;
}
