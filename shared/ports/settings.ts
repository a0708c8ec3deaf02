import type { LatestRule } from "#domain/schemas.ts";

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
  /**
   * The store's default `latest` rules (CONTRACT §2, selector v3): what a subject whose policy
   * sets none of its own follows. Changed only through `changeStoreLatest`, which applies it to
   * every subject's clock.
   */
  latest?: LatestRule[];
  /**
   * The summary's token budget (cl100k_base, CONTRACT §4a) when a consolidation is given none
   * (`--budget`); null: the deployment's default (a tenant stack's `budgetTokens`), else none.
   */
  budget: number | null;
}

export const DEFAULT_SETTINGS: TenantSettings = {
  publishMode: "live",
  recallBypass: false,
  rebuildAfterEvents: 50,
  budget: null,
};

export interface SettingsPort {
  settings(): Promise<TenantSettings>;
  updateSettings(patch: Partial<TenantSettings>): Promise<TenantSettings>;
}
