import { z } from "zod";

/** Elements of one array checked before the caller lets other work run. */
const ELEMENTS_PER_STEP = 256;

/**
 * `schema.parse(raw)` for an object schema whose arrays may hold thousands of elements (a
 * manifest's inputs), letting other work run (`pause`) between steps: each top-level array the
 * schema types as an array is checked a step of elements at a time with its element schema, the
 * rest of the object with the schema. The same value; anything refused is parsed whole, so it
 * throws exactly the schema's error.
 */
export async function parseObjectPaced<S extends z.ZodObject>(
  schema: S,
  raw: unknown,
  pause: () => Promise<void>,
): Promise<z.infer<S>> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return schema.parse(raw);
  const record = raw as Record<string, unknown>;
  const arrays = new Map<string, unknown[]>();
  const rest: Record<string, unknown> = { ...record };
  for (const [key, field] of Object.entries(schema.shape)) {
    const value = record[key];
    // Only a plain array (no length check of its own) is split; any other field stays whole.
    if (!(field instanceof z.ZodArray) || (field._zod.def.checks ?? []).length > 0 || !Array.isArray(value))
      continue;
    const element = field.element as z.ZodType;
    const parsed: unknown[] = [];
    for (const [index, item] of value.entries()) {
      if (index % ELEMENTS_PER_STEP === 0) await pause();
      const checked = element.safeParse(item);
      if (!checked.success) return schema.parse(raw);
      parsed.push(checked.data);
    }
    arrays.set(key, parsed);
    rest[key] = [];
  }
  const checked = schema.safeParse(rest);
  if (!checked.success) return schema.parse(raw);
  const value = checked.data as Record<string, unknown>;
  for (const [key, parsed] of arrays) value[key] = parsed;
  return value as z.infer<S>;
}
