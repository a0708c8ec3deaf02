// The CDK app: one memgate stack per tenant, from `-c tenants='[…]'` or `-c tenantsFile=PATH`
// (default cdk/tenants.json). A bad tenants file stops synth with one line naming the field.
import { join } from "node:path";
import { App } from "aws-cdk-lib";
import { addTenantStacks } from "../lib/memgate-app.ts";
import { PROJECT_ROOT } from "../lib/memgate-function.ts";
import { TenantsError, tenantsFromContext } from "../lib/tenants.ts";

const app = new App();
try {
  const tenants = tenantsFromContext(
    { tenants: app.node.tryGetContext("tenants"), tenantsFile: app.node.tryGetContext("tenantsFile") },
    join(PROJECT_ROOT, "cdk", "tenants.json"),
  );
  addTenantStacks(app, tenants);
} catch (error) {
  if (!(error instanceof TenantsError)) throw error;
  console.error(`memgate: ${error.message}`);
  process.exit(1);
}
app.synth();
