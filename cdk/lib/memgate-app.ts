import { type App, Validations } from "aws-cdk-lib";
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
 * The findings memgate accepts, each on the construct it concerns. The wildcards of the functions'
 * policies and of the role policies are acknowledged where they are granted (MemgateFunction.allow,
 * TenantStack), finding by finding; here, the review page's routes. Anything else cdk-nag finds
 * fails synth.
 */
function acknowledge(stack: TenantStack): void {
  for (const route of stack.reviewPageRoutes)
    Validations.of(route).acknowledge({
      id: "AwsSolutions::AwsSolutions-APIG4",
      reason:
        "The review page's static HTML, script and style hold no memory; every API call the page makes carries the reviewer's JWT and goes through the authorizer.",
    });
}
