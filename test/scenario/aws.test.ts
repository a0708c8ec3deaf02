import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, inject } from "vitest";
import { openAwsStores } from "#harness/aws-stores.ts";
import { describePipelineScenarios } from "./pipeline-scenarios.ts";

let stores: Awaited<ReturnType<typeof openAwsStores>>;
beforeAll(async () => {
  stores = await openAwsStores({
    dynamoEndpoint: inject("dynamoEndpoint"),
    motoEndpoint: inject("motoEndpoint"),
  });
});

describePipelineScenarios("AWS local engines", () => ({
  events: stores.store,
  alias: stores.store,
  artifacts: stores.artifacts,
  settings: stores.store,
  forgetSelector: async (subject, mark) => {
    await stores.store.doc.send(
      new UpdateCommand({
        TableName: stores.store.tableName,
        Key: { pk: `S#${subject}`, sk: "CLOCK" },
        ...(mark
          ? { UpdateExpression: "SET selector = :v", ExpressionAttributeValues: { ":v": mark } }
          : { UpdateExpression: "REMOVE selector" }),
      }),
    );
  },
}));
