import { RemovalPolicy, type Stack } from "aws-cdk-lib";
import {
  HttpApi,
  HttpMethod,
  HttpNoneAuthorizer,
  type HttpRoute,
  HttpStage,
  LogGroupLogDestination,
} from "aws-cdk-lib/aws-apigatewayv2";
import { HttpIamAuthorizer, HttpJwtAuthorizer } from "aws-cdk-lib/aws-apigatewayv2-authorizers";
import { HttpLambdaIntegration } from "aws-cdk-lib/aws-apigatewayv2-integrations";
import { ManagedPolicy, PolicyStatement } from "aws-cdk-lib/aws-iam";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { API_ROLES, API_ROUTES, type ApiRole, routesOf } from "#runtime/api-roles.ts";
import { REVIEW_PAGE_PATHS } from "#runtime/settings.ts";
import type { MemgateFunction } from "./memgate-function.ts";
import { acknowledgeWildcards } from "./nag.ts";
import type { Tenant } from "./tenants.ts";

/** The tenant's HTTP API: the routes of CONTRACT §6 and the review page's, on one stage. */
export interface TenantApi {
  api: HttpApi;
  /** The API's routes (CONTRACT §6), one per entry of API_ROUTES, with the roles that may call them. */
  apiRoutes: HttpRoute[];
  /** The review page's static routes: the only ones without an authorizer. */
  reviewPageRoutes: HttpRoute[];
  stage: HttpStage;
  /** IAM authorization: one managed policy per role, naming the routes it may invoke (for tenants to attach). */
  rolePolicies: Partial<Record<ApiRole, ManagedPolicy>>;
}

/** A construct id's word with its first letter in capitals (`api` → `Api`). */
export const capitalised = (word: string) => `${word.charAt(0).toUpperCase()}${word.slice(1)}`;

/**
 * The HTTP API over the api function, in `stack` itself: a JWT authorizer when the tenant names
 * an issuer (each route asks for its roles' scopes), else IAM with one managed policy per role;
 * the review page's static files unauthenticated; access logs kept three months.
 */
export function tenantApi(stack: Stack, tenant: Tenant, apiFunction: MemgateFunction): TenantApi {
  const accessLogGroup = new LogGroup(stack, "ApiAccessLogs", {
    retention: RetentionDays.THREE_MONTHS,
    removalPolicy: RemovalPolicy.RETAIN,
  });
  // No $default route: a request reaches the function only on a route of CONTRACT §6, and each
  // route says which roles may call it (API_ROUTES).
  const api = new HttpApi(stack, "HttpApi", {
    description: `memgate ${tenant.id}: agents' memory API (CONTRACT §6)`,
    createDefaultStage: false,
    defaultAuthorizer: tenant.jwt
      ? new HttpJwtAuthorizer("JwtAuthorizer", tenant.jwt.issuer, { jwtAudience: tenant.jwt.audience })
      : new HttpIamAuthorizer(),
  });
  const apiIntegration = new HttpLambdaIntegration("ApiIntegration", apiFunction);
  const { jwt } = tenant;
  const apiRoutes = API_ROUTES.flatMap((route) =>
    api.addRoutes({
      path: route.path,
      methods: [HttpMethod[route.method]],
      integration: apiIntegration,
      // The JWT authorizer lets a token through when it holds one of the route's scopes.
      ...(jwt ? { authorizationScopes: route.roles.map((role) => `${jwt.scopePrefix}${role}`) } : {}),
    }),
  );
  // The review page's static files hold no memory (the page sends the reviewer's JWT with each
  // API call); a browser cannot sign requests with SigV4, so they are served unauthenticated.
  const pageIntegration = new HttpLambdaIntegration("ReviewPageIntegration", apiFunction);
  const reviewPageRoutes = Object.values(REVIEW_PAGE_PATHS).flatMap((path) =>
    api.addRoutes({
      path,
      methods: [HttpMethod.GET],
      integration: pageIntegration,
      authorizer: new HttpNoneAuthorizer(),
    }),
  );
  const stage = new HttpStage(stack, "DefaultStage", {
    httpApi: api,
    stageName: "$default",
    autoDeploy: true,
    throttle: { rateLimit: 200, burstLimit: 400 },
    accessLogSettings: { destination: new LogGroupLogDestination(accessLogGroup) },
  });
  // IAM authorization: what each role may invoke, as managed policies the tenant attaches to
  // its callers' roles (the stack's outputs name them).
  const rolePolicies = jwt ? {} : rolePoliciesFor(stack, tenant, api, stage);
  return { api, apiRoutes, reviewPageRoutes, stage, rolePolicies };
}

/** Per role, a managed policy allowing execute-api:Invoke on exactly its routes (any path parameter). */
function rolePoliciesFor(
  stack: Stack,
  tenant: Tenant,
  api: HttpApi,
  stage: HttpStage,
): Partial<Record<ApiRole, ManagedPolicy>> {
  const policies: Partial<Record<ApiRole, ManagedPolicy>> = {};
  for (const role of API_ROLES) {
    const statement = new PolicyStatement({
      sid: "InvokeTheRoutesOfTheRole",
      actions: ["execute-api:Invoke"],
      resources: routesOf(role).map((route) =>
        api.arnForExecuteApi(route.method, route.path.replace(/\{[^}]+\}/g, "*"), stage.stageName),
      ),
    });
    const policy = new ManagedPolicy(stack, `${capitalised(role)}ApiPolicy`, {
      description: `memgate ${tenant.id}: the ${role} role's routes of the HTTP API`,
      statements: [statement],
    });
    acknowledgeWildcards(
      policy,
      statement,
      "A route's path parameter (the subject or the artifact id): the role may call that route for any of them.",
    );
    policies[role] = policy;
  }
  return policies;
}
