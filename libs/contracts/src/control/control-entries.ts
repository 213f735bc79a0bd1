import type { ModelProfile } from '../providers';
import type { QuotaSpec } from '../quota-spec';

/** A quota the admin manages, as the KV bucket holds it. */
export interface ControlQuota {
  readonly spec: QuotaSpec;
  /** 1 on creation, +1 on every change. */
  readonly version: number;
  /** Epoch ms of the last change. */
  readonly updatedAt: number;
}

/** A provider profile as the admin holds it: its models' limits and whether it is served. */
export interface ControlProvider {
  readonly name: string;
  readonly enabled: boolean;
  readonly models: readonly ModelProfile[];
}

/** Everything the admin publishes: the limiters' overlay on their own config. */
export interface ControlSet {
  readonly quotas: readonly ControlQuota[];
  readonly providers: readonly ControlProvider[];
}

export type ControlEntry =
  | { readonly kind: 'quota'; readonly quota: ControlQuota }
  | { readonly kind: 'provider'; readonly provider: ControlProvider };

const QUOTA_PREFIX = 'quota.';
const PROVIDER_PREFIX = 'provider.';

/**
 * KV keys allow [-/_=.A-Za-z0-9] and no empty tokens; quota names may hold `:` and dots anywhere,
 * so the name travels hex-encoded in the key (and in clear in the value).
 */
export function quotaEntryKey(name: string): string {
  return QUOTA_PREFIX + Buffer.from(name, 'utf8').toString('hex');
}

/** Provider names are [a-z][a-z0-9_-]*: safe in a key as they are. */
export function providerEntryKey(name: string): string {
  return PROVIDER_PREFIX + name;
}

export type EntryKind = 'quota' | 'provider';

export function entryKindOf(key: string): EntryKind | undefined {
  if (key.startsWith(QUOTA_PREFIX)) return 'quota';
  if (key.startsWith(PROVIDER_PREFIX)) return 'provider';
  return undefined;
}

export function encodeEntry(entry: ControlEntry): { key: string; value: string } {
  switch (entry.kind) {
    case 'quota':
      return { key: quotaEntryKey(entry.quota.spec.name), value: JSON.stringify(entry.quota) };
    case 'provider':
      return {
        key: providerEntryKey(entry.provider.name),
        value: JSON.stringify(entry.provider),
      };
  }
}
