import { z } from "zod";
import { calendarDay, ENGLISH_MONTHS } from "#domain/dates.ts";
import type { MemoryEvent } from "#domain/schemas.ts";
import { InputError } from "#ports/errors.ts";
import { describeIssues } from "#runtime/issues.ts";

/**
 * A LoCoMo file (Maharana et al., ACL 2024: `data/locomo10.json` of its repository, or a part of
 * it) read as memgate events and questions. Each turn becomes a `note`: its `dia_id` is the
 * eventId, its session's date-time the `occurredAt`, its speaker the `source`, and a shared
 * photo's caption joins its text. Questions of categories 1–4 are kept (5, adversarial, has no
 * answer in the conversation and is left out, as the published evaluations leave it out).
 */

export const LOCOMO_CATEGORIES = {
  1: "multi-hop",
  2: "temporal",
  3: "open-domain",
  4: "single-hop",
} as const;
export type LocomoCategory = keyof typeof LOCOMO_CATEGORIES;

export interface LocomoQuestion {
  /** `<conversation>/q<n>`, n its place among the conversation's questions (all categories, from 1). */
  id: string;
  question: string;
  gold: string;
  category: LocomoCategory;
  /** The turns that hold the answer (dia_ids), as the dataset names them. */
  evidence: string[];
}

export interface LocomoSession {
  number: number;
  /** As the dataset writes it ("1:56 pm on 8 May, 2023"). */
  dateTime: string;
  turns: Array<{ eventId: string; speaker: string; text: string }>;
}

export interface LocomoConversation {
  id: string;
  speakers: [string, string];
  sessions: LocomoSession[];
  events: MemoryEvent[];
  questions: LocomoQuestion[];
}

const Turn = z.looseObject({
  speaker: z.string().min(1).max(128),
  dia_id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, { error: "dia_id is not an event id" }),
  text: z.string().max(16_384),
  blip_caption: z.string().max(4_096).optional(),
});

const Sample = z.looseObject({
  sample_id: z.string().min(1).max(128),
  conversation: z.record(z.string(), z.unknown()),
  qa: z
    .array(
      z.looseObject({
        question: z.string().min(1).max(4_096),
        answer: z.union([z.string(), z.number()]).optional(),
        evidence: z.array(z.string().max(200)).max(64).default([]),
        category: z.number().int().min(1).max(5),
      }),
    )
    .max(10_000),
});

/** "1:56 pm on 8 May, 2023" as an ISO date-time without an offset (the dataset names no time zone). */
export function locomoDateTime(text: string): string | null {
  const match = /^\s*(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$/i.exec(text);
  if (!match) return null;
  const [, h, m, meridiem, d, monthName, y] = match as unknown as string[];
  const month = ENGLISH_MONTHS.indexOf((monthName ?? "").toLowerCase()) + 1;
  const hour12 = Number(h);
  if (month === 0 || hour12 < 1 || hour12 > 12 || Number(m) > 59) return null;
  const day = calendarDay(Number(y), month, Number(d));
  if (day === null) return null;
  const hour = (hour12 % 12) + ((meridiem ?? "").toLowerCase() === "pm" ? 12 : 0);
  return `${day}T${String(hour).padStart(2, "0")}:${m}:00`;
}

/** The turn ids a question's evidence names (the dataset writes a few as "D8:6; D9:17" or "D:11:26"). */
function evidenceIds(evidence: readonly string[]): string[] {
  return evidence.flatMap((entry) => [...entry.matchAll(/D:?(\d+):(\d+)/g)].map((m) => `D${m[1]}:${m[2]}`));
}

export function parseLocomo(text: string, name: string): LocomoConversation[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new InputError(`${name}: not JSON (${error instanceof Error ? error.message : String(error)})`, {
      cause: error,
    });
  }
  const samples = z.array(Sample).min(1).safeParse(raw);
  if (!samples.success) throw new InputError(`${name}: not a LoCoMo file: ${describeIssues(samples.error)}`);
  return samples.data.map((sample) => conversationOf(sample, name));
}

function conversationOf(sample: z.infer<typeof Sample>, name: string): LocomoConversation {
  const where = `${name}: ${sample.sample_id}`;
  const { conversation } = sample;
  const speakers = [conversation.speaker_a, conversation.speaker_b];
  if (!speakers.every((speaker) => typeof speaker === "string" && speaker !== ""))
    throw new InputError(`${where}: speaker_a and speaker_b must name the two speakers`);
  const sessions: LocomoSession[] = [];
  for (const key of Object.keys(conversation)) {
    const numbered = /^session_(\d+)$/.exec(key);
    if (!numbered) continue;
    const number = Number(numbered[1]);
    const dateTime = conversation[`session_${number}_date_time`];
    if (typeof dateTime !== "string" || locomoDateTime(dateTime) === null)
      throw new InputError(
        `${where}: session_${number}_date_time is not a date-time such as "1:56 pm on 8 May, 2023"`,
      );
    const turns = z.array(Turn).safeParse(conversation[key]);
    if (!turns.success) throw new InputError(`${where}: ${key}: ${describeIssues(turns.error)}`);
    sessions.push({
      number,
      dateTime,
      turns: turns.data.map((turn) => ({
        eventId: turn.dia_id,
        speaker: turn.speaker,
        text:
          turn.blip_caption === undefined ? turn.text : `${turn.text} [shares a photo: ${turn.blip_caption}]`,
      })),
    });
  }
  sessions.sort((a, b) => a.number - b.number);
  const events: MemoryEvent[] = sessions.flatMap((session) =>
    session.turns.map((turn) => ({
      eventId: turn.eventId,
      kind: "note" as const,
      text: turn.text,
      trust: "user" as const,
      source: turn.speaker,
      occurredAt: locomoDateTime(session.dateTime) as string,
    })),
  );
  const questions: LocomoQuestion[] = [];
  sample.qa.forEach((qa, index) => {
    if (qa.category === 5 || qa.answer === undefined) return;
    questions.push({
      id: `${sample.sample_id}/q${index + 1}`,
      question: qa.question,
      gold: String(qa.answer),
      category: qa.category as LocomoCategory,
      evidence: evidenceIds(qa.evidence),
    });
  });
  return { id: sample.sample_id, speakers: speakers as [string, string], sessions, events, questions };
}

/** The whole conversation as a reader of it sees it: each session under its date, each turn "Speaker: text". */
export function locomoTranscript(conversation: LocomoConversation): string {
  return conversation.sessions
    .map((session) =>
      [
        `Session ${session.number}, ${session.dateTime}:`,
        ...session.turns.map((turn) => `${turn.speaker}: ${turn.text}`),
      ].join("\n"),
    )
    .join("\n\n");
}
