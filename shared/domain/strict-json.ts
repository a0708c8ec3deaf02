/**
 * JSON as a candidate must be written (CONTRACT §4b "Bounded input"): one value, nothing but white
 * space after it, and no object with a key twice. `JSON.parse` keeps the last of two duplicate keys
 * silently, so a model's answer could say one thing to a reader and another to the gate; this
 * refuses it instead. A leading byte order mark is accepted.
 */
export type StrictJson =
  | { ok: true; value: unknown }
  | {
      ok: false;
      problem: string;
      /** When the text is JSON but holds a key twice (the problem names it too). */
      duplicate?: { key: string; path: string };
      /**
       * When the text nests deeper than `maxDepth`: where the scan found it (the first levels of
       * the path, each key cut short), decided before any value was built.
       */
      tooDeep?: { path: string };
    };

export interface StrictJsonOptions {
  /**
   * Levels of objects and arrays the text may nest (the outermost is level 1). Deeper text is
   * refused while it is scanned, before `JSON.parse` builds anything: a body of megabytes of `[`
   * costs a scan of its first levels, not a parse of millions of arrays (CONTRACT §6).
   */
  maxDepth?: number;
}

export function parseStrictJson(text: string, options: StrictJsonOptions = {}): StrictJson {
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const scan = finished(scanSteps(body, false, options.maxDepth ?? Number.POSITIVE_INFINITY));
  if (scan.tooDeep !== null) return tooDeep(scan.tooDeep, options);
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    return {
      ok: false,
      problem: `not valid JSON (${error instanceof Error ? error.message : String(error)})`,
    };
  }
  const { duplicate } = scan;
  return duplicate === null
    ? { ok: true, value }
    : {
        ok: false,
        problem: `duplicate key ${JSON.stringify(duplicate.key)} in one object at ${duplicate.path}`,
        duplicate,
      };
}

function tooDeep(path: string, options: StrictJsonOptions): StrictJson {
  return {
    ok: false,
    problem: `nests deeper than ${options.maxDepth} levels of JSON (at ${path})`,
    tooDeep: { path },
  };
}

/** A scan run to its end at once. */
function finished(steps: Generator<void, Scan, void>): Scan {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * One pass over text that JSON.parse accepted: the first object key that appears twice in its
 * object, with a readable path to that object. Linear in the text; keys compare after decoding
 * (so "a" and "\u0061" are the same key). Given other text it still ends: a string left open
 * stops the pass (null) instead of reading past the end.
 */
export function firstDuplicateKey(text: string): { key: string; path: string } | null {
  return finished(scanSteps(text, false, Number.POSITIVE_INFINITY)).duplicate;
}

/**
 * `parseStrictJson` letting other work run between its steps (`pause`), for a server thread
 * handed a body of megabytes: the same value and the same problems. The text is scanned in slices,
 * and when it is an object, each array among its values (`{"events":[…]}`) is parsed one element
 * at a time beside the object without them, so no single step parses or scans the whole text.
 * Text nesting deeper than `maxDepth` is refused by the scan, before anything is parsed; anything
 * else but strict JSON (invalid text, a duplicate key) is decided by `parseStrictJson` itself.
 */
export async function parseStrictJsonPaced(
  text: string,
  pause: () => Promise<void>,
  options: StrictJsonOptions = {},
): Promise<StrictJson> {
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const steps = scanSteps(body, true, options.maxDepth ?? Number.POSITIVE_INFINITY);
  let scan: Scan;
  for (;;) {
    const step = steps.next();
    if (step.done) {
      scan = step.value;
      break;
    }
    await pause();
  }
  if (scan.tooDeep !== null) return tooDeep(scan.tooDeep, options);
  if (scan.duplicate !== null || scan.arrays.length === 0) return parseStrictJson(text, options);
  try {
    let skeleton = "";
    let from = 0;
    for (const array of scan.arrays) {
      skeleton += body.slice(from, array.open + 1);
      from = array.close;
    }
    const value: Record<string, unknown> = JSON.parse(skeleton + body.slice(from));
    if (typeof value !== "object" || value === null || Array.isArray(value))
      return parseStrictJson(text, options);
    for (const array of scan.arrays) {
      const elements: unknown[] = [];
      for (const [start, end] of array.elements) {
        await pause();
        elements.push(JSON.parse(body.slice(start, end)));
      }
      Object.defineProperty(value, array.key, {
        value: elements,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return { ok: true, value };
  } catch {
    return parseStrictJson(text, options);
  }
}

/** Characters a step scans before it stops. */
const CHARACTERS_PER_STEP = 64 * 1024;

/** An array that is a value of the outermost object: where it opens and closes, its elements' spans. */
interface ArraySpans {
  key: string;
  open: number;
  close: number;
  elements: Array<readonly [number, number]>;
}

interface Scan {
  duplicate: { key: string; path: string } | null;
  /** With `spans`: the outermost object's array values, in text order. */
  arrays: ArraySpans[];
  /** Where the text first nests deeper than the scan's limit (then the scan stopped there). */
  tooDeep: string | null;
}

/** Levels and characters of a key the path of a too-deep value names (enough to tell where). */
const DEEP_PATH_LEVELS = 6;
const DEEP_PATH_KEY_CHARACTERS = 40;

/**
 * The duplicate-key pass, stopping every CHARACTERS_PER_STEP; with `spans`, noting the outer
 * arrays' elements. It ends where the text nests deeper than `maxDepth`; with a limit it reads on
 * past a duplicate key (no longer comparing keys), so the whole text is known to be shallow enough
 * before anything parses it.
 */
function* scanSteps(text: string, spans: boolean, maxDepth: number): Generator<void, Scan, void> {
  interface Frame {
    keys: Set<string> | null; // null for arrays
    index: number;
    expectingKey: boolean;
    lastKey: string;
    /** An outer array's spans (and where its current element started), when noted. */
    array: ArraySpans | null;
    elementStart: number;
  }
  // Every open object and array, outermost first; a frame's path is read from its ancestors only
  // when a duplicate is found (building it for every element would cost more than the scan).
  const stack: Frame[] = [];
  const arrays: ArraySpans[] = [];
  const pathOf = (depth: number, short = false) => {
    let path = "$";
    for (let j = 0; j < depth; j++) {
      if (short && j === DEEP_PATH_LEVELS) return `${path}…`;
      const parent = stack[j] as Frame;
      const key = short ? parent.lastKey.slice(0, DEEP_PATH_KEY_CHARACTERS) : parent.lastKey;
      path += parent.keys === null ? `[${parent.index}]` : `.${key}`;
    }
    return path;
  };
  let duplicate: Scan["duplicate"] = null;
  // An element ends at each comma, and the last at the bracket, unless the array is empty (`[]`).
  const endElement = (frame: Frame, at: number, closing: boolean) => {
    const array = frame.array as ArraySpans;
    if (!closing || array.elements.length > 0 || text.slice(frame.elementStart, at).trim() !== "")
      array.elements.push([frame.elementStart, at]);
    frame.elementStart = at + 1;
  };
  const length = text.length;
  let nextStop = CHARACTERS_PER_STEP;
  for (let i = 0; i < length; i++) {
    if (i >= nextStop) {
      nextStop = i + CHARACTERS_PER_STEP;
      yield;
    }
    const code = text.charCodeAt(i);
    if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      const isObject = code === OPEN_OBJECT;
      const parent = stack[stack.length - 1];
      const noted =
        spans && !isObject && stack.length === 1 && parent?.keys
          ? { key: parent.lastKey, open: i, close: i, elements: [] }
          : null;
      if (noted) arrays.push(noted);
      if (stack.length >= maxDepth) return { duplicate, arrays, tooDeep: pathOf(stack.length, true) };
      stack.push({
        keys: isObject ? new Set() : null,
        index: 0,
        expectingKey: isObject,
        lastKey: "",
        array: noted,
        elementStart: i + 1,
      });
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      const top = stack.pop();
      if (top?.array) {
        endElement(top, i, true);
        top.array.close = i;
      }
    } else if (code === COMMA) {
      const top = stack[stack.length - 1];
      if (top) {
        top.index++;
        if (top.keys !== null) top.expectingKey = true;
        else if (top.array) endElement(top, i, false);
      }
    } else if (code === QUOTE) {
      // The closing quote: the next one not escaped (preceded by an even run of backslashes).
      let end = text.indexOf('"', i + 1);
      for (;;) {
        if (end < 0) return { duplicate, arrays: [], tooDeep: null };
        let backslashes = 0;
        while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
        if (backslashes % 2 === 0) break;
        end = text.indexOf('"', end + 1);
      }
      const top = stack[stack.length - 1];
      if (top?.keys && top.expectingKey) {
        const literal = text.slice(i + 1, end);
        // Text not yet known to be JSON (it is scanned first): a bad escape ends the pass.
        let key = literal;
        try {
          if (literal.includes("\\")) key = JSON.parse(`"${literal}"`) as string;
        } catch {
          return { duplicate, arrays: [], tooDeep: null };
        }
        if (duplicate === null && top.keys.has(key)) {
          duplicate = { key, path: pathOf(stack.length - 1) };
          if (maxDepth === Number.POSITIVE_INFINITY) return { duplicate, arrays, tooDeep: null };
        }
        if (duplicate === null) top.keys.add(key);
        top.lastKey = key;
        top.expectingKey = false;
      }
      i = end;
    }
  }
  return { duplicate, arrays, tooDeep: null };
}

const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
