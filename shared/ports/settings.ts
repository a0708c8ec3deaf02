/** Per-tenant switches (embedded: per store): where a gate-passed artifact goes, and recall bypass. */
export interface TenantSettings {
  /** live: publish through the CAS; shadow: record as SHADOW and wait for review. */
  publishMode: "live" | "shadow";
  /** When on, recall serves raw events only (the operator's bypass during an incident). */
  recallBypass: boolean;
  /** A summary whose uncovered tail reaches this many events is rebuilt. */
  rebuildAfterEvents: number;
  /** The model a command or `memgate serve` uses when none is named (CONTRACT §5 model names); default deterministic-v1. */
  model?: string;
}

export const DEFAULT_SETTINGS: TenantSettings = {
  publishMode: "live",
  recallBypass: false,
  rebuildAfterEvents: 50,
};

export interface SettingsPort {
  settings(): Promise<TenantSettings>;
  updateSettings(patch: Partial<TenantSettings>): Promise<TenantSettings>;
}
