import {
  BUILT_IN_PROVIDERS,
  composeQuotas,
  DEFAULT_QUOTA_NAME,
  goccDefaultQuota,
  type ControlSet,
  type LimiterConfig,
  type QuotaSpec,
} from '@app/contracts';

/** Where a quota in force comes from (docs/contract.md, Admin GraphQL: quotasInForce). */
export type QuotaOrigin = 'admin' | 'config_file' | 'provider_model' | 'default';

export interface QuotaInForceEntry {
  readonly name: string;
  readonly source: QuotaOrigin;
  /** The provider whose profile serves a model quota. */
  readonly provider?: string;
  readonly match?: string;
  /** undefined when the admin cannot know them (a limiter's config file). */
  readonly limits?: QuotaSpec['limits'];
  /** False when the limits shown are an assumption or unknown. */
  readonly limitsKnown: boolean;
  /** True for every quota the admin does not own: upsertQuota of its name replaces it. */
  readonly readOnly: boolean;
  readonly overrideHint?: string;
  /** A live limiter replica reported it in its latest stats report. */
  readonly reported: boolean;
}

/**
 * What a limiter without CONFIG_FILE and with GoCC's MAX_REQUESTS / WINDOW_MILLIS defaults serves
 * besides the admin's quotas: the `default` quota only.
 */
const BARE_CONFIG: LimiterConfig = {
  format: 'native',
  quotas: [goccDefaultQuota()],
  providers: [],
};

const DEFAULT_HINT =
  'Built into every limiter: it serves each key no other quota claims, with GoCC’s defaults ' +
  '(100 requests per 1 s, queue of 400) unless the limiters set MAX_REQUESTS, ' +
  'MAX_REQUESTS_IN_QUEUE, WINDOW_MILLIS or `defaults:` in their config file, which the admin ' +
  'cannot see. Create an admin quota named `default` to replace it on every limiter.';

function modelHint(name: string, provider: string): string {
  return (
    `Model quota of the enabled provider ${provider}: change its RPM, TPM and RPD on the ` +
    `Providers page. A quota named ${name} (or matching ${name}) in the limiters' config file ` +
    `serves it instead. Create an admin quota named ${name} to replace it on every limiter.`
  );
}

function configModelHint(name: string, provider: string): string {
  return (
    `Model quota of the built-in provider ${provider}, enabled by the limiters' config file ` +
    '(`providers:`): the admin has published no provider profile. Create an admin quota named ' +
    `${name} to replace it, or enable ${provider} on the Providers page (the admin's profiles ` +
    'then decide which models are served).'
  );
}

function configHint(name: string): string {
  return (
    "Defined in the limiters' config file (CONFIG_FILE), which the admin cannot read: its limits " +
    `are not known here. Create an admin quota named ${name} to replace it on every limiter; ` +
    'deleting that admin quota brings the config quota back.'
  );
}

/**
 * Every quota in force, as far as the admin can know it: it composes its own control set as the
 * limiters do (composeQuotas) over a limiter's bare config (the `default` quota), then adds the
 * quotas the live limiters report that it does not know: those of their config files, names only.
 * Sorted by name.
 */
export function quotasInForce(
  control: ControlSet,
  reported: ReadonlySet<string>,
): QuotaInForceEntry[] {
  const admin = new Set(control.quotas.map((q) => q.spec.name));
  const providerOf = new Map<string, string>();
  for (const provider of [...control.providers].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (!provider.enabled) continue;
    for (const { model } of provider.models) {
      if (!providerOf.has(model)) providerOf.set(model, provider.name);
    }
  }
  const entries: QuotaInForceEntry[] = composeQuotas(BARE_CONFIG, control).map((spec) => {
    const common = {
      name: spec.name,
      ...(spec.match !== undefined && { match: spec.match }),
      limits: spec.limits,
      reported: reported.has(spec.name),
    };
    if (admin.has(spec.name)) {
      return { ...common, source: 'admin', limitsKnown: true, readOnly: false };
    }
    if (spec.name === DEFAULT_QUOTA_NAME) {
      return {
        ...common,
        source: 'default',
        limitsKnown: false,
        readOnly: true,
        overrideHint: DEFAULT_HINT,
      };
    }
    const provider = providerOf.get(spec.name) ?? '';
    return {
      ...common,
      source: 'provider_model',
      provider,
      limitsKnown: true,
      readOnly: true,
      overrideHint: modelHint(spec.name, provider),
    };
  });
  const known = new Set(entries.map((e) => e.name));
  for (const name of reported) {
    if (known.has(name)) continue;
    // Without admin profiles, a limiter serves the built-in models its config enables.
    const builtIn =
      control.providers.length === 0
        ? BUILT_IN_PROVIDERS.find((p) => p.models.some((m) => m.model === name))
        : undefined;
    entries.push(
      builtIn === undefined
        ? {
            name,
            source: 'config_file',
            limitsKnown: false,
            readOnly: true,
            overrideHint: configHint(name),
            reported: true,
          }
        : {
            name,
            source: 'provider_model',
            provider: builtIn.name,
            limitsKnown: false,
            readOnly: true,
            overrideHint: configModelHint(name, builtIn.name),
            reported: true,
          },
    );
  }
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
