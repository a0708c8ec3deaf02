// Tenant stacks synthesised offline, and the functions' policies read out of their templates.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { expect } from "vitest";
import { addTenantStacks } from "../../cdk/lib/memgate-app.ts";
import { parseTenants, type Tenant } from "../../cdk/lib/tenants.ts";

/** An app that synthesises without bundling the Lambdas (the `cdk synth` test bundles for real). */
export function synth(tenants: Tenant[]) {
  const outdir = mkdtempSync(join(tmpdir(), "memgate-cdk-"));
  const app = new App({ outdir, context: { "aws:cdk:bundling-stacks": [] } });
  const stacks = addTenantStacks(app, tenants);
  app.synth();
  return { outdir, stacks, templates: stacks.map((stack) => Template.fromStack(stack)) };
}

/** One tenant as the tenants file would hold it, defaults applied. */
export const tenant = (fields: Record<string, unknown>) =>
  parseTenants(JSON.stringify([fields]), "test")[0] as Tenant;

export type Resource = { Type: string; Properties?: Record<string, unknown> };

export function resourcesOf(template: Template): Record<string, Resource> {
  return template.toJSON().Resources;
}

export interface Statement {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

/**
 * Each function's policy statements, by function ("api", "worker", "outbox", "sweep", "audit"):
 * the inline policy of the role the function runs as, checked to be the role's only one.
 */
export function functionPolicies(template: Template): Record<string, Statement[]> {
  const resources = resourcesOf(template);
  const policies: Record<string, Statement[]> = {};
  for (const [id, resource] of Object.entries(resources)) {
    if (resource.Type !== "AWS::Lambda::Function") continue;
    const roleRef = resource.Properties?.Role as { "Fn::GetAtt": [string, string] };
    const roleId = roleRef["Fn::GetAtt"][0];
    const role = resources[roleId] as Resource;
    const inline = role.Properties?.Policies as Array<{ PolicyDocument: { Statement: Statement[] } }>;
    expect(inline, `${roleId} holds one inline policy`).toHaveLength(1);
    expect(role.Properties?.ManagedPolicyArns, `${roleId} has no managed policy`).toBeUndefined();
    // ApiFunctionXXXXXXXX is the api, WorkerFunctionXXXXXXXX the worker, …
    const name = id.replace(/Function[0-9A-F]{8}$/, "").toLowerCase();
    policies[name] = (inline[0] as { PolicyDocument: { Statement: Statement[] } }).PolicyDocument.Statement;
  }
  return policies;
}

export const listOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);

export const actionsOf = (statements: readonly Statement[]) =>
  statements.flatMap((statement) => listOf(statement.Action) as string[]);

export const statementNamed = (statements: readonly Statement[] | undefined, sid: string) =>
  statements?.find((statement) => statement.Sid === sid);

/** A CloudFormation value written flat: references as <LogicalId> and <LogicalId.Attribute>. */
export function flat(value: unknown): string {
  if (typeof value === "string") return value;
  const record = value as Record<string, unknown>;
  const join = record["Fn::Join"];
  if (Array.isArray(join)) return (join[1] as unknown[]).map(flat).join(String(join[0]));
  const getAtt = record["Fn::GetAtt"];
  if (Array.isArray(getAtt)) return `<${getAtt[0]}.${getAtt[1]}>`;
  if ("Ref" in record) return `<${record.Ref}>`;
  return JSON.stringify(value);
}

export const ROOT = join(import.meta.dirname, "../..");

/** Properties that give a resource a physical name: none may be a literal (two tenants share an account). */
export const NAME_PROPERTIES = [
  "TableName",
  "BucketName",
  "QueueName",
  "TopicName",
  "FunctionName",
  "RoleName",
  "AlarmName",
  "DashboardName",
  "LogGroupName",
  "RuleName",
  "KeyAlias",
  "ManagedPolicyName",
];

/** The route keys API Gateway would match ("POST /v1/subjects/{subject}/events"). */
export const routeKey = (route: { method: string; path: string }) => `${route.method} ${route.path}`;

/** The execute-api ARN's tail a role policy names for a route (path parameters as *). */
export const invokeTail = (route: { method: string; path: string }) =>
  `/$default/${route.method}${route.path.replace(/\{[^}]+\}/g, "*")}`;
