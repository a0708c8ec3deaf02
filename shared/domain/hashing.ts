import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { deepFreeze } from "./frozen.ts";
import type { InputRef, SequencedEvent } from "./schemas.ts";
import { MemoryEvent } from "./schemas.ts";

/**
 * Hashes are over RFC 8785 (JSON Canonicalization Scheme) bytes, never over field order: the same
 * event hashes the same however its keys were written or its batches grouped.
 */

/** RFC 8785 canonical JSON text of a JSON value. */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError("value has no JSON form (undefined or a function)");
  return text;
}

export function sha256(text: string): string {
  return `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`;
}

/**
 * The content hash of an event: its parsed form (defaults applied, unknown fields dropped) without
 * the store-assigned sequence, so re-sending the same event is recognisably the same.
 */
export function eventHash(event: MemoryEvent): string {
  const stored = storedHashes.get(event);
  if (stored !== undefined) return stored;
  if (event.sequence === undefined) return sha256(canonicalJson(event));
  const { sequence: _sequence, ...content } = event;
  return sha256(canonicalJson(content));
}

/** The content hash computed afresh from the event's content, never the hash its store kept (audits). */
export function recomputedEventHash(event: MemoryEvent): string {
  const { sequence: _sequence, ...content } = event;
  return sha256(canonicalJson(content));
}

/**
 * Hashes a store computed from this very content when it wrote it (events are immutable), so a
 * read of 100,000 events does not canonicalise each one again. Keyed by object identity.
 */
const storedHashes = new WeakMap<object, string>();

export function withStoredHash<T extends MemoryEvent>(event: T, hash: string): T {
  storedHashes.set(event, hash);
  return event;
}

/**
 * An event read back from a store: its body checked again, its sequence and stored hash attached.
 * A stored event never changes, and the same (body, sequence, hash) always decodes to the same
 * event, so a body decoded lately is answered from a memo (bounded by the characters it holds,
 * emptied when full): a recall reads the same oldest events or the same tail on every call. The
 * event is frozen throughout, since every reader of that body shares it.
 */
export function decodeStoredEvent(body: string, sequence: number, hash: string): SequencedEvent {
  const known = decoded.get(body);
  if (known !== undefined && known.sequence === sequence && storedHashes.get(known) === hash) return known;
  const event = deepFreeze(withStoredHash({ ...MemoryEvent.parse(JSON.parse(body)), sequence }, hash));
  if (body.length <= DECODED_BODY_LIMIT) {
    if (decodedChars + body.length > DECODED_CHARS) {
      decoded.clear();
      decodedChars = 0;
    }
    if (known === undefined) decodedChars += body.length;
    decoded.set(body, event);
  }
  return event;
}

const decoded = new Map<string, SequencedEvent>();
let decodedChars = 0;
/** About 10,000 typical events; a body past the limit (a rare large one) is decoded every time. */
const DECODED_CHARS = 4 * 1024 * 1024;
const DECODED_BODY_LIMIT = 16 * 1024;

/** The ordered (id, sequence, hash) list that binds a snapshot's inputs. */
export function inputRefs(inputs: readonly SequencedEvent[]): InputRef[] {
  return [...inputs]
    .sort((a, b) => a.sequence - b.sequence)
    .map((event) => ({ eventId: event.eventId, sequence: event.sequence, hash: eventHash(event) }));
}

/** One hash over the ordered input list: equal roots mean the very same inputs. */
export function inputRoot(refs: readonly InputRef[]): string {
  return sha256(canonicalJson(refs.map((ref) => [ref.eventId, ref.sequence, ref.hash])));
}
