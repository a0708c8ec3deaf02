import { type App, type CfnElement, Validations } from "aws-cdk-lib";
import { AwsSolutionsChecks } from "cdk-nag";
import { TenantStack } from "./tenant-stack.ts";
import type { Tenant } from "./tenants.ts";

/** Stack name per tenant: the only name memgate chooses; every resource name is generated. */
export const stackName = (tenant: Tenant) => `memgate-${tenant.id}`;

/**
 * One TenantStack per tenant, checked by cdk-nag's AWS Solutions rules. Every finding memgate
 * accepts is acknowledged here, on the resource it concerns, with its reason.
 */
export function addTenantStacks(app: App, tenants: readonly Tenant[]): TenantStack[] {
  const stacks = tenants.map(
    (tenant) =>
      new TenantStack(app, stackName(tenant), {
        tenant,
        stackName: stackName(tenant),
        description: `memgate for tenant ${tenant.id}: agents' long-term memory with a loss gate`,
      }),
  );
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  for (const stack of stacks) acknowledge(stack);
  return stacks;
}

/**
 * The findings memgate accepts, each by its exact finding id and with its reason. Anything else
 * cdk-nag finds fails synth.
 */
function acknowledge(stack: TenantStack): void {
  const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
    stack.getLogicalId(construct.node.defaultChild as CfnElement);
  const findings: Array<[string, string]> = [
    [
      "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]",
      "The managed policy CDK gives every function to write its own log streams; nothing broader is attached.",
    ],
    [
      "AwsSolutions-IAM5[Resource::*]",
      "X-Ray's PutTraceSegments and PutTelemetryRecords (active tracing) have no resource-level permissions.",
    ],
    [
      `AwsSolutions-IAM5[Resource::<${logicalId(stack.table)}.Arn>/index/*]`,
      "The table's own indexes (bySequence for selection and the tail, byRebuildCheck for the sweep).",
    ],
    [
      `AwsSolutions-IAM5[Resource::<${logicalId(stack.bucket)}.Arn>/*]`,
      "Objects of the tenant's own artifact bucket; keys are per subject and artifact, created at run time.",
    ],
    [
      "AwsSolutions-IAM5[Action::s3:GetObject*]",
      "CDK's read grant on the tenant's bucket (object and its version).",
    ],
    [
      "AwsSolutions-IAM5[Action::s3:GetBucket*]",
      "CDK's read grant on the tenant's bucket (location, versioning).",
    ],
    ["AwsSolutions-IAM5[Action::s3:List*]", "CDK's read grant on the tenant's bucket (listing its keys)."],
    [
      "AwsSolutions-IAM5[Action::s3:Abort*]",
      "CDK's put grant: aborting the worker's own failed multipart uploads.",
    ],
    [
      "AwsSolutions-IAM5[Action::kms:GenerateDataKey*]",
      "Data keys of the tenant's own KMS key, for its encrypted bucket and queues.",
    ],
    ["AwsSolutions-IAM5[Action::kms:ReEncrypt*]", "CDK's encrypt grant on the tenant's own KMS key."],
  ];
  for (const [finding, reason] of findings)
    Validations.of(stack).acknowledge({ id: `AwsSolutions::${finding}`, reason });
  for (const route of stack.reviewPageRoutes)
    Validations.of(route).acknowledge({
      id: "AwsSolutions::AwsSolutions-APIG4",
      reason:
        "The review page's static HTML, script and style hold no memory; every API call the page makes carries the reviewer's JWT and goes through the authorizer.",
    });
}
