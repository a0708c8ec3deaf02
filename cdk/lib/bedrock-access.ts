import { PolicyStatement } from "aws-cdk-lib/aws-iam";

/**
 * The Regions the cross-Region inference profiles of each geography route to (AWS's lists of
 * destination Regions, joined over the models that have a profile there). A profile id is the
 * geography, a dot and the model id: `us.anthropic.claude-sonnet-4-5-20250929-v1:0`. A tenant whose
 * profile routes somewhere new names its Regions itself (`bedrockRegions`).
 */
export const INFERENCE_PROFILE_REGIONS: Readonly<Record<string, readonly string[]>> = {
  us: ["us-east-1", "us-east-2", "us-west-1", "us-west-2"],
  "us-gov": ["us-gov-east-1", "us-gov-west-1"],
  eu: [
    "eu-central-1",
    "eu-central-2",
    "eu-north-1",
    "eu-south-1",
    "eu-south-2",
    "eu-west-1",
    "eu-west-2",
    "eu-west-3",
  ],
  apac: [
    "ap-east-2",
    "ap-northeast-1",
    "ap-northeast-2",
    "ap-northeast-3",
    "ap-south-1",
    "ap-south-2",
    "ap-southeast-1",
    "ap-southeast-2",
    "ap-southeast-3",
    "ap-southeast-4",
    "ap-southeast-5",
    "ap-southeast-7",
    "me-central-1",
  ],
  jp: ["ap-northeast-1", "ap-northeast-3"],
  au: ["ap-southeast-2", "ap-southeast-4"],
};

/** Global profiles route to every commercial Region. */
const GLOBAL = "global";

/** Where the stack is: the source Region of every model call. */
export interface BedrockScope {
  partition: string;
  region: string;
  account: string;
}

/** A Bedrock model id, read: a foundation model called in the stack's Region, or a profile. */
export type BedrockTarget =
  | { kind: "foundation-model"; modelId: string }
  | { kind: "inference-profile"; profileId: string; geography: string; modelId: string };

export function bedrockTarget(id: string): BedrockTarget {
  const dot = id.indexOf(".");
  const geography = dot > 0 ? id.slice(0, dot) : "";
  if (geography === GLOBAL || Object.hasOwn(INFERENCE_PROFILE_REGIONS, geography))
    return { kind: "inference-profile", profileId: id, geography, modelId: id.slice(dot + 1) };
  return { kind: "foundation-model", modelId: id };
}

/**
 * What a function needs to call one model with Converse (`bedrock:InvokeModel`; memgate never
 * streams): a foundation model in the stack's Region; or, for a cross-Region inference profile,
 * the profile in the stack's Region and the model in every Region the profile routes to, the
 * latter only through that profile (`bedrock:InferenceProfileArn`), never directly.
 */
export function invokeModelStatements(
  scope: BedrockScope,
  id: string,
  sid: string,
  regions?: readonly string[],
): PolicyStatement[] {
  const target = bedrockTarget(id);
  const model = (region: string) =>
    `arn:${scope.partition}:bedrock:${region}::foundation-model/${target.modelId}`;
  if (target.kind === "foundation-model")
    return [new PolicyStatement({ sid, actions: ["bedrock:InvokeModel"], resources: [model(scope.region)] })];
  const profile = `arn:${scope.partition}:bedrock:${scope.region}:${scope.account}:inference-profile/${target.profileId}`;
  // A global profile's model ARNs name any Region, or none (the global model itself).
  const models =
    target.geography === GLOBAL
      ? [model("*"), model("")]
      : (regions ?? INFERENCE_PROFILE_REGIONS[target.geography] ?? []).map(model);
  return [
    new PolicyStatement({ sid: `${sid}Profile`, actions: ["bedrock:InvokeModel"], resources: [profile] }),
    new PolicyStatement({
      sid: `${sid}ThroughProfile`,
      actions: ["bedrock:InvokeModel"],
      resources: models,
      conditions: { StringEquals: { "bedrock:InferenceProfileArn": profile } },
    }),
  ];
}
