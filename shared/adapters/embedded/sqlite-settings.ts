import { DEFAULT_SETTINGS, type TenantSettings } from "#ports/settings.ts";
import type { SqliteConnection } from "./sqlite-database.ts";

/** The store's settings: one row, the defaults under whatever was set. */
export function readSettings(db: SqliteConnection): TenantSettings {
  const row = db.statement("SELECT value FROM settings WHERE id = 1").get() as { value: string } | undefined;
  return row
    ? { ...DEFAULT_SETTINGS, ...(JSON.parse(row.value) as Partial<TenantSettings>) }
    : DEFAULT_SETTINGS;
}

/** Inside a write transaction: the patch over what is set (read in the same transaction). */
export function updateSettings(db: SqliteConnection, patch: Partial<TenantSettings>): TenantSettings {
  const next = { ...readSettings(db), ...patch };
  db.statement(
    "INSERT INTO settings (id, value) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET value = excluded.value",
  ).run(JSON.stringify(next));
  return next;
}
