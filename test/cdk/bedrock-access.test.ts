// What a function may invoke on Bedrock for one model id: a foundation model in the stack's
// Region, or a cross-Region inference profile and its model in the Regions it routes to, only
// through it.
import { describe, expect, it } from "vitest";
import {
  bedrockTarget,
  INFERENCE_PROFILE_REGIONS,
  invokeModelStatements,
} from "../../cdk/lib/bedrock-access.ts";

const scope = { partition: "aws", region: "eu-west-1", account: "123456789012" };
const json = (id: string, regions?: string[]) =>
  invokeModelStatements(scope, id, "InvokeWriter", regions).map((statement) => statement.toStatementJson());

describe("Bedrock access for one model id", () => {
  it("a foundation model id: InvokeModel on that model in the stack's Region, nothing else", () => {
    expect(json("anthropic.claude-sonnet-4-5-20250929-v1:0")).toEqual([
      {
        Sid: "InvokeWriter",
        Effect: "Allow",
        Action: "bedrock:InvokeModel",
        Resource: "arn:aws:bedrock:eu-west-1::foundation-model/anthropic.claude-sonnet-4-5-20250929-v1:0",
      },
    ]);
  });

  it("a geography's profile: the profile here, the model in each Region it routes to, only through the profile", () => {
    const profile = "arn:aws:bedrock:eu-west-1:123456789012:inference-profile/eu.amazon.nova-pro-v1:0";
    const [onProfile, onModels] = json("eu.amazon.nova-pro-v1:0");
    expect(onProfile).toEqual({
      Sid: "InvokeWriterProfile",
      Effect: "Allow",
      Action: "bedrock:InvokeModel",
      Resource: profile,
    });
    expect(onModels).toEqual({
      Sid: "InvokeWriterThroughProfile",
      Effect: "Allow",
      Action: "bedrock:InvokeModel",
      Resource: (INFERENCE_PROFILE_REGIONS.eu as readonly string[]).map(
        (region) => `arn:aws:bedrock:${region}::foundation-model/amazon.nova-pro-v1:0`,
      ),
      Condition: { StringEquals: { "bedrock:InferenceProfileArn": profile } },
    });
  });

  it("the tenant's own Regions replace the known list when given", () => {
    const [, onModels] = json("jp.anthropic.claude-haiku-4-5-20251001-v1:0", ["ap-northeast-1"]);
    expect(onModels?.Resource).toBe(
      "arn:aws:bedrock:ap-northeast-1::foundation-model/anthropic.claude-haiku-4-5-20251001-v1:0",
    );
  });

  it("a global profile: the model in any Region and the global model, only through the profile", () => {
    const [, onModels] = json("global.anthropic.claude-sonnet-4-5-20250929-v1:0");
    expect(onModels?.Resource).toEqual([
      "arn:aws:bedrock:*::foundation-model/anthropic.claude-sonnet-4-5-20250929-v1:0",
      "arn:aws:bedrock:::foundation-model/anthropic.claude-sonnet-4-5-20250929-v1:0",
    ]);
    expect(onModels?.Condition).toEqual({
      StringEquals: {
        "bedrock:InferenceProfileArn":
          "arn:aws:bedrock:eu-west-1:123456789012:inference-profile/global.anthropic.claude-sonnet-4-5-20250929-v1:0",
      },
    });
  });

  it.each([
    ["us.meta.llama3-3-70b-instruct-v1:0", "inference-profile"],
    ["apac.amazon.nova-lite-v1:0", "inference-profile"],
    ["au.anthropic.claude-sonnet-4-5-20250929-v1:0", "inference-profile"],
    ["amazon.nova-lite-v1:0", "foundation-model"],
    ["mistral.mistral-large-2407-v1:0", "foundation-model"],
  ])("%s is a %s", (id, kind) => {
    expect(bedrockTarget(id).kind).toBe(kind);
  });
});
