import { z } from "zod";

/**
 * Where the scheduled audit stands in its round: the round (the UTC date it started on), the last
 * subject audited in it, whether it is complete, what it has found so far, and a version each
 * write moves by one. Written after every subject, so an invocation that stops (its time is up, or
 * it failed) leaves the next one to resume after that subject.
 */
export const AuditCheckpoint = z.object({
  round: z.iso.date(),
  after: z.string().nullable(),
  complete: z.boolean(),
  startedAt: z.iso.datetime(),
  completedAt: z.iso.datetime().optional(),
  subjects: z.number().int().nonnegative(),
  served: z.number().int().nonnegative(),
  staleVisible: z.number().int().nonnegative(),
  falseFact: z.number().int().nonnegative(),
  version: z.number().int().positive(),
});
export type AuditCheckpoint = z.infer<typeof AuditCheckpoint>;

/** The audit's checkpoint, kept in the store beside the tenant's settings. */
export interface AuditRounds {
  /** The checkpoint as last written; null before the first round. */
  checkpoint(): Promise<AuditCheckpoint | null>;
  /**
   * Writes `next` only if the stored checkpoint's version is still `expectedVersion` (null: none
   * stored yet); false when another invocation wrote first (nothing written then).
   */
  saveCheckpoint(next: AuditCheckpoint, expectedVersion: number | null): Promise<boolean>;
}
