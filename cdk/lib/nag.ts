import { Stack, Validations } from "aws-cdk-lib";
import type { PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { IConstruct } from "constructs";

/**
 * Acknowledges, on the construct that holds the policy (a role with inline policies, a managed
 * policy), exactly the AwsSolutions-IAM5 findings one statement raises: each action and each
 * resource holding a wildcard, named as cdk-nag names them (references flattened to `<LogicalId>`
 * and `<LogicalId.Attribute>`). Nothing else on the construct, and nothing elsewhere, is covered:
 * a wildcard added without a reason still fails synth.
 */
export function acknowledgeWildcards(holder: IConstruct, statement: PolicyStatement, reason: string): void {
  const stack = Stack.of(holder);
  const findings = [
    ...statement.actions.filter((action) => action.includes("*")).map((action) => `Action::${action}`),
    ...statement.resources
      .map((resource) => flatten(stack.resolve(resource)))
      .filter((resource) => resource.includes("*"))
      .map((resource) => `Resource::${resource}`),
  ];
  for (const finding of findings) acknowledge(holder, `AwsSolutions-IAM5[${finding}]`, reason);
}

/** One AWS Solutions finding acknowledged on one construct (and what it holds), with its reason. */
export function acknowledge(construct: IConstruct, finding: string, reason: string): void {
  Validations.of(construct).acknowledge({ id: `AwsSolutions::${finding}`, reason });
}

/** A resolved CloudFormation value as cdk-nag writes it in a finding id. */
function flatten(value: unknown): string {
  if (typeof value === "string") return value.replace(/\$\{/g, "<").replace(/\}/g, ">");
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  const record = value as Record<string, unknown>;
  const join = record["Fn::Join"];
  if (Array.isArray(join)) return (join[1] as unknown[]).map(flatten).join(String(join[0]));
  const getAtt = record["Fn::GetAtt"];
  if (Array.isArray(getAtt)) return `<${flatten(getAtt[0])}.${flatten(getAtt[1])}>`;
  if ("Ref" in record) return `<${flatten(record.Ref)}>`;
  return JSON.stringify(value);
}
