import {
  ConfigError,
  type ConfigIssue,
  type GoccSettings,
  type ModelProfile,
  type QuotaSpec,
} from '@app/contracts';

/**
 * `importConfig(document, format)` (docs/contract.md, Admin GraphQL): `yaml` is this project's
 * config file (docs/contract.md, Config file) or go-ratelimit's `ratelimits.yaml`; `gocc` is GoCC's
 * JSON config.
 */
export type ImportFormat = 'yaml' | 'gocc';

export const IMPORT_FORMATS: readonly ImportFormat[] = ['yaml', 'gocc'];

export interface ImportOptions {
  /** MAX_REQUESTS and friends of the admin: what GoCC keys left at 0 fall back to. */
  readonly gocc: GoccSettings;
  /** Epoch ms of the import: go-ratelimit's usage windows are read relative to it. */
  readonly now: number;
}

/** What an imported document asks the admin to do; nothing has been applied yet. */
export interface ImportPlan {
  source: 'native' | 'go-ratelimit' | 'gocc';
  /** To upsert in the admin. */
  quotas: QuotaSpec[];
  /** Provider names to enable. */
  enableProviders: string[];
  /** Model limits to set (go-ratelimit quotas for models of a known provider). */
  models: { provider: string; model: ModelProfile }[];
  /** Usage state to record on the limiters (the contract's usage operation, no requestId). */
  usage: { quota: string; key: string; cost: { requests: number; tokens: number } }[];
  /** What was approximated or skipped, in words an operator understands. */
  notes: string[];
}

/** Larger documents are refused before they are parsed. */
export const MAX_IMPORT_DOCUMENT_BYTES = 4 * 1024 * 1024;

/** Names the document in ConfigError messages: `document: line 3, quotas[0].name: ...`. */
export const IMPORT_SOURCE = 'document';

/** Refuses the whole document with one issue. */
export function refuse(message: string, path = '', line?: number, column?: number): never {
  const issue: ConfigIssue = {
    path,
    message,
    ...(line !== undefined && { line }),
    ...(column !== undefined && { column }),
  };
  throw new ConfigError([issue], IMPORT_SOURCE);
}
