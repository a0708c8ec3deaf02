/**
 * The DynamoDB table's key and index names, and the sort keys of the items a stream filter or an
 * alarm must name. Constants only: the adapter, the test table and the CDK stack all read them
 * here, so the deployed table is the one the code queries.
 */
export const TABLE_KEYS = {
  partition: "pk",
  sort: "sk",
  sequenceIndex: "bySequence",
  sequence: "seq",
  /** Present on a CLOCK item (its pk) only while the subject may need a rebuild: a sparse index. */
  rebuildCheck: "rebuildCheck",
  rebuildCheckIndex: "byRebuildCheck",
  /**
   * On every CLOCK item: the constant `SUBJECT_LIST` (set by the subject's first append, or by the
   * backfill for older clocks), the partition key of the global index bySubject, whose sort key is
   * the item's pk: the subjects in order, a page a Query, without scanning the table.
   */
  subjectList: "subjectList",
  subjectIndex: "bySubject",
} as const;

/** The one value of `subjectList`: every subject in one index partition, sorted by pk. */
export const SUBJECT_LIST = "SUBJECTS";

export const TABLE_ITEM_KEYS = {
  /** The sort key of a subject's clock item (what the outbox follows). */
  clock: "CLOCK",
  alias: "ALIAS",
} as const;
