import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { DEFAULT_SETTINGS, type TenantSettings } from "#ports/settings.ts";
import { SETTINGS_KEY, SettingsItem } from "./dynamo-items.ts";
import type { DynamoTable } from "./dynamo-table.ts";

/** The tenant's settings: one item outside every subject's partition, the defaults until set. */
export async function readSettings(table: DynamoTable): Promise<TenantSettings> {
  const { Item } = await table.doc.send(
    new GetCommand({ TableName: table.tableName, Key: SETTINGS_KEY, ConsistentRead: true }),
  );
  if (!Item) return DEFAULT_SETTINGS;
  const { model, latest, ...settings } = SettingsItem.parse(Item);
  return {
    ...settings,
    ...(model === undefined ? {} : { model }),
    ...(latest === undefined ? {} : { latest }),
  };
}

export async function updateSettings(
  table: DynamoTable,
  patch: Partial<TenantSettings>,
): Promise<TenantSettings> {
  const next = { ...(await readSettings(table)), ...patch };
  await table.doc.send(new PutCommand({ TableName: table.tableName, Item: { ...SETTINGS_KEY, ...next } }));
  return next;
}
