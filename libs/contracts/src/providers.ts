import { exactKeyMatch } from './key-match';
import { MS_PER_DAY, type QueueSpec, type QuotaSpec, type Scope } from './quota-spec';

/** One model's published limits; 0 means unlimited. */
export interface ModelProfile {
  readonly model: string;
  readonly maxRpm: number;
  readonly maxTpm: number;
  readonly maxRpd: number;
}

export interface ProviderProfile {
  readonly name: string;
  readonly models: readonly ModelProfile[];
}

/** docs/contract.md, Built-in provider profiles (a test holds the two equal). */
export const BUILT_IN_PROVIDERS: readonly ProviderProfile[] = [
  {
    name: 'gemini',
    models: [
      { model: 'gemini-3-pro-preview', maxRpm: 150, maxTpm: 1_000_000, maxRpd: 1000 },
      { model: 'gemini-3-flash-preview', maxRpm: 150, maxTpm: 1_000_000, maxRpd: 1000 },
      { model: 'gemini-2.5-pro', maxRpm: 150, maxTpm: 1_000_000, maxRpd: 1000 },
      { model: 'gemini-2.0-flash', maxRpm: 150, maxTpm: 1_000_000, maxRpd: 0 },
      { model: 'gemini-2.0-flash-lite', maxRpm: 0, maxTpm: 0, maxRpd: 0 },
    ],
  },
  {
    name: 'openai',
    models: [
      { model: 'gpt-4o', maxRpm: 500, maxTpm: 30_000, maxRpd: 0 },
      { model: 'gpt-4o-mini', maxRpm: 500, maxTpm: 200_000, maxRpd: 0 },
      { model: 'gpt-4-turbo', maxRpm: 500, maxTpm: 30_000, maxRpd: 0 },
      { model: 'o1', maxRpm: 500, maxTpm: 30_000, maxRpd: 0 },
      { model: 'o1-mini', maxRpm: 500, maxTpm: 200_000, maxRpd: 0 },
      { model: 'o3-mini', maxRpm: 500, maxTpm: 200_000, maxRpd: 0 },
    ],
  },
  {
    name: 'anthropic',
    models: [
      { model: 'claude-opus-4', maxRpm: 50, maxTpm: 40_000, maxRpd: 0 },
      { model: 'claude-sonnet-4', maxRpm: 50, maxTpm: 40_000, maxRpd: 0 },
      { model: 'claude-haiku-3.5', maxRpm: 50, maxTpm: 50_000, maxRpd: 0 },
    ],
  },
  { name: 'local', models: [] },
];

const PROVIDER_NAME = /^[a-z][a-z0-9_-]{0,63}$/;

/** `openai`, `anthropic`, or any new provider's name: a lowercase word, safe in a KV key. */
export function isProviderName(name: string): boolean {
  return PROVIDER_NAME.test(name);
}

export const PROVIDER_MINUTE_MS = 60_000;
/**
 * Providers reset "requests per day" at midnight Pacific time (Gemini documents it), so `rpd` is a
 * calendar-aligned fixed window in America/Los_Angeles, not a rolling 24 h: a rolling window
 * would keep refusing after the provider has already reset.
 */
export const PROVIDER_DAY_TIMEZONE = 'America/Los_Angeles';

/**
 * The wait queue of every model quota (PROVIDER_QUEUE_SIZE, PROVIDER_MAX_WAIT_MS): an LLM caller
 * would rather wait for the provider's minute to free capacity than handle a refusal, as
 * go-ratelimit's WaitForCapacity does. A minute covers any rpm or tpm refusal; a request refused
 * by rpd still times out after it.
 */
export const DEFAULT_PROVIDER_QUEUE: QueueSpec = { maxSize: 1000, maxWaitMs: PROVIDER_MINUTE_MS };

/** How model quotas are decided and queued (the limiter's PROVIDER_* settings). */
export interface ModelQuotaOptions {
  /** Where the limiter decides them (see composeQuotas). */
  readonly scope: Scope;
  /** Their wait queue; `undefined` means none (PROVIDER_QUEUE_SIZE=0). */
  readonly queue: QueueSpec | undefined;
}

export const DEFAULT_MODEL_OPTIONS: ModelQuotaOptions = {
  scope: 'local',
  queue: DEFAULT_PROVIDER_QUEUE,
};

/**
 * The quota serving model M: named M, matching key M exactly, limits rpm, tpm and rpd, and the
 * providers' wait queue (DEFAULT_PROVIDER_QUEUE unless `options` say otherwise).
 */
export function modelQuota(
  profile: ModelProfile,
  options: ModelQuotaOptions = DEFAULT_MODEL_OPTIONS,
): QuotaSpec {
  const { scope, queue } = options;
  return {
    name: profile.model,
    ...(scope === 'cluster' && { scope }),
    ...(queue !== undefined && { queue }),
    match: exactKeyMatch(profile.model),
    limits: [
      {
        name: 'rpm',
        unit: 'requests',
        limit: profile.maxRpm,
        windowMs: PROVIDER_MINUTE_MS,
        algorithm: 'sliding_window',
      },
      {
        name: 'tpm',
        unit: 'tokens',
        limit: profile.maxTpm,
        windowMs: PROVIDER_MINUTE_MS,
        algorithm: 'sliding_window',
      },
      {
        name: 'rpd',
        unit: 'requests',
        limit: profile.maxRpd,
        windowMs: MS_PER_DAY,
        algorithm: 'fixed_window',
        align: 'calendar',
        timezone: PROVIDER_DAY_TIMEZONE,
      },
    ],
  };
}

export function findProvider(
  name: string,
  profiles: readonly ProviderProfile[] = BUILT_IN_PROVIDERS,
): ProviderProfile | undefined {
  return profiles.find((profile) => profile.name === name);
}

/** The model quotas of the enabled providers, in table order; unknown names have no models. */
export function providerQuotas(
  enabled: readonly string[],
  profiles: readonly ProviderProfile[] = BUILT_IN_PROVIDERS,
  options: ModelQuotaOptions = DEFAULT_MODEL_OPTIONS,
): QuotaSpec[] {
  const wanted = new Set(enabled);
  return profiles
    .filter((profile) => wanted.has(profile.name))
    .flatMap((profile) => profile.models.map((model) => modelQuota(model, options)));
}
