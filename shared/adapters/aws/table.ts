import { CreateTableCommand, type DynamoDBClient, waitUntilTableExists } from "@aws-sdk/client-dynamodb";
import { TABLE_KEYS } from "./table-layout.ts";

/**
 * Creates the memgate table as the CDK stack defines it (for local engines and tests): pk/sk
 * strings, the local secondary index bySequence (pk, seq) that selection and the tail query, and
 * the sparse global index byRebuildCheck holding only the clocks changed since the sweep checked,
 * the global index bySubject listing every subject's clock in order,
 * and (when asked) a stream of keys for the outbox, as the stack's table has.
 */
export async function createMemgateTable(
  client: DynamoDBClient,
  tableName: string,
  options: { stream?: boolean } = {},
): Promise<void> {
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: "PAY_PER_REQUEST",
      // The outbox reads committed clock changes from the stream; keys are all it needs. Local test
      // tables that no outbox reads go without (DynamoDB Local writes slower with a stream on).
      ...(options.stream
        ? { StreamSpecification: { StreamEnabled: true, StreamViewType: "KEYS_ONLY" } }
        : {}),
      AttributeDefinitions: [
        { AttributeName: TABLE_KEYS.partition, AttributeType: "S" },
        { AttributeName: TABLE_KEYS.sort, AttributeType: "S" },
        { AttributeName: TABLE_KEYS.sequence, AttributeType: "N" },
        { AttributeName: TABLE_KEYS.rebuildCheck, AttributeType: "S" },
        { AttributeName: TABLE_KEYS.subjectList, AttributeType: "S" },
      ],
      KeySchema: [
        { AttributeName: TABLE_KEYS.partition, KeyType: "HASH" },
        { AttributeName: TABLE_KEYS.sort, KeyType: "RANGE" },
      ],
      LocalSecondaryIndexes: [
        {
          IndexName: TABLE_KEYS.sequenceIndex,
          KeySchema: [
            { AttributeName: TABLE_KEYS.partition, KeyType: "HASH" },
            { AttributeName: TABLE_KEYS.sequence, KeyType: "RANGE" },
          ],
          Projection: { ProjectionType: "ALL" },
        },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: TABLE_KEYS.rebuildCheckIndex,
          KeySchema: [{ AttributeName: TABLE_KEYS.rebuildCheck, KeyType: "HASH" }],
          Projection: { ProjectionType: "KEYS_ONLY" },
        },
        {
          IndexName: TABLE_KEYS.subjectIndex,
          KeySchema: [
            { AttributeName: TABLE_KEYS.subjectList, KeyType: "HASH" },
            { AttributeName: TABLE_KEYS.partition, KeyType: "RANGE" },
          ],
          Projection: { ProjectionType: "KEYS_ONLY" },
        },
      ],
    }),
  );
  await waitUntilTableExists({ client, maxWaitTime: 30 }, { TableName: tableName });
}
