import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  DynamoDBDocumentClient,
  GetCommand,
  paginatedBatchGet,
  paginateQuery,
  paginateScan,
  type QueryCommandInput,
  type ScanCommandInput,
} from "@aws-sdk/lib-dynamodb";
import { CLOCK, clockOf, pk, SETTINGS_KEY, SettingsItem, type StoredClock } from "./dynamo-items.ts";

/**
 * One tenant's table and the reads every concern of the DynamoDB store shares: an item by key,
 * the clock, and every item a Query, a Scan or a BatchGetItem finds, page after page (the SDK's
 * paginators follow LastEvaluatedKey and UnprocessedKeys). Reads of a subject are strongly
 * consistent.
 */
export class DynamoTable {
  readonly doc: DynamoDBDocumentClient;
  /** The index bySubject lists every subject (dynamo-subjects.ts): once seen true, never false again. */
  subjectIndexComplete = false;

  constructor(
    client: DynamoDBClient,
    readonly tableName: string,
  ) {
    this.doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  }

  /** The subject's item with this sort key; undefined when absent. */
  async getItem(subject: string, sk: string): Promise<Record<string, unknown> | undefined> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { pk: pk(subject), sk }, ConsistentRead: true }),
    );
    return Item;
  }

  /**
   * The subject's clock; the zero clock on the current selector when it has none yet, under the
   * store's default `latest` rules read now (a write creating the clock checks they still hold).
   */
  async readClock(subject: string): Promise<StoredClock> {
    const item = await this.getItem(subject, CLOCK);
    if (item) return clockOf(item);
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: SETTINGS_KEY, ConsistentRead: true }),
    );
    return clockOf(undefined, Item ? (SettingsItem.parse(Item).latest ?? []) : []);
  }

  /**
   * Every item a Query matches, page after page, or the first `limit` of them. Strongly consistent
   * unless `consistent: false` (a global index, which offers only eventually consistent reads).
   */
  async queryAll(
    input: Omit<QueryCommandInput, "TableName" | "ExclusiveStartKey" | "ConsistentRead" | "Limit">,
    limit = Number.POSITIVE_INFINITY,
    options: { consistent?: boolean } = {},
  ): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    const pages = paginateQuery(
      { client: this.doc },
      {
        ...input,
        TableName: this.tableName,
        ConsistentRead: options.consistent ?? true,
        ...(Number.isFinite(limit) ? { Limit: limit } : {}),
      },
    );
    for await (const page of pages) {
      items.push(...(page.Items ?? []));
      if (items.length >= limit) return items.slice(0, limit);
    }
    return items;
  }

  /** The subject's items with these sort keys (absent ones skipped), 100 keys a BatchGetItem. */
  async batchGetAll(subject: string, sortKeys: readonly string[]): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    const unique = [...new Set(sortKeys)];
    for (let start = 0; start < unique.length; start += 100) {
      const Keys = unique.slice(start, start + 100).map((sk) => ({ pk: pk(subject), sk }));
      // BatchGetItem may leave part of the keys unprocessed under load: the paginator asks again.
      const pages = paginatedBatchGet(
        { client: this.doc },
        { RequestItems: { [this.tableName]: { Keys, ConsistentRead: true } } },
      );
      for await (const page of pages) items.push(...(page.Responses?.[this.tableName] ?? []));
    }
    return items;
  }

  /** The subjects of the items a Scan finds (each item's pk is `S#<subject>`), sorted. */
  async scanSubjects(input: Omit<ScanCommandInput, "TableName" | "ExclusiveStartKey">): Promise<string[]> {
    const subjects: string[] = [];
    for await (const page of paginateScan({ client: this.doc }, { ...input, TableName: this.tableName }))
      for (const item of page.Items ?? []) subjects.push(String(item.pk).slice(2));
    return subjects.sort();
  }
}
