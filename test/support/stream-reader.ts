// Reads a DynamoDB Local table's stream as Lambda's event source mapping would: every shard from
// its start, remembering where each left off.
import { DescribeTableCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
} from "@aws-sdk/client-dynamodb-streams";

export class StreamReader {
  private readonly iterators = new Map<string, string | null>();

  private constructor(
    private readonly streams: DynamoDBStreamsClient,
    readonly streamArn: string,
  ) {}

  static async open(dynamo: DynamoDBClient, tableName: string, endpoint: string): Promise<StreamReader> {
    const table = await dynamo.send(new DescribeTableCommand({ TableName: tableName }));
    const streamArn = table.Table?.LatestStreamArn;
    if (!streamArn) throw new Error(`table ${tableName} has no stream`);
    const streams = new DynamoDBStreamsClient({
      endpoint,
      region: "us-east-1",
      credentials: { accessKeyId: "test", secretAccessKey: "test" },
    });
    return new StreamReader(streams, streamArn);
  }

  /** Every record committed since the previous call. */
  async poll(): Promise<StreamRecord[]> {
    const described = await this.streams.send(new DescribeStreamCommand({ StreamArn: this.streamArn }));
    const records: StreamRecord[] = [];
    for (const shard of described.StreamDescription?.Shards ?? []) {
      const id = shard.ShardId as string;
      if (!this.iterators.has(id)) {
        const iterator = await this.streams.send(
          new GetShardIteratorCommand({
            StreamArn: this.streamArn,
            ShardId: id,
            ShardIteratorType: "TRIM_HORIZON",
          }),
        );
        this.iterators.set(id, iterator.ShardIterator ?? null);
      }
      let iterator = this.iterators.get(id) ?? null;
      while (iterator) {
        const page = await this.streams.send(new GetRecordsCommand({ ShardIterator: iterator }));
        records.push(...(page.Records ?? []));
        iterator = page.NextShardIterator ?? null;
        if ((page.Records ?? []).length === 0) break;
      }
      this.iterators.set(id, iterator);
    }
    return records;
  }

  close(): void {
    this.streams.destroy();
  }
}
