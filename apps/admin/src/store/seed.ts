import { BUILT_IN_PROVIDERS, type ProviderProfile } from '@app/contracts';
import type { EntityManager } from '@mikro-orm/better-sqlite';
import { BuiltInSeedRow, ModelQuotaRow, ProviderRow } from './entities';
import type { StoreOrm } from './orm-config';

/** The ledger's model for a provider's own row. */
const PROVIDER_ITSELF = '';

export interface SeedResult {
  readonly providers: number;
  readonly models: number;
}

/**
 * Seeds the built-in provider profiles (docs/contract.md, Concepts), disabled, into a migrated
 * database.
 *
 * The choice: a ledger table, builtin_seeds, remembers every built-in provider and model name
 * ever seeded into this file. A name in the ledger is never seeded again, whatever became of its
 * row, so an operator's edit stays as it is and a deleted provider or model stays deleted across
 * restarts. A name not yet in the ledger (a fresh file, or a model a later release adds to
 * BUILT_IN_PROVIDERS) is inserted only when no row of that name exists (an operator's own row of
 * the same name wins), and is then written to the ledger. A new built-in model of a provider
 * whose row was deleted is recorded as seen but not inserted: the provider stays gone.
 * A per-row "seeded" flag could not do this (a deleted row takes its flag with it), and seeding
 * inside a migration could not add models of later releases without a migration each.
 *
 * Runs in one transaction at every start, after the migrations and before anything reads.
 * Seeding writes no audit entry: nobody changed anything.
 */
export async function seedBuiltInProviders(
  orm: StoreOrm,
  now: number,
  profiles: readonly ProviderProfile[] = BUILT_IN_PROVIDERS,
): Promise<SeedResult> {
  return orm.em.fork().transactional(async (em: EntityManager) => {
    let providers = 0;
    let models = 0;
    const ledger = await em.find(BuiltInSeedRow, {});
    const seen = new Set(ledger.map((row) => `${row.provider}\u0000${row.model}`));
    const isSeen = (provider: string, model: string) => seen.has(`${provider}\u0000${model}`);
    const remember = (provider: string, model: string) => {
      em.create(BuiltInSeedRow, { provider, model, seededAt: now });
    };

    for (const profile of profiles) {
      let providerExists = (await em.findOne(ProviderRow, { name: profile.name })) !== null;
      if (!isSeen(profile.name, PROVIDER_ITSELF)) {
        if (!providerExists) {
          em.create(ProviderRow, { name: profile.name, enabled: false });
          providerExists = true;
          providers++;
        }
        remember(profile.name, PROVIDER_ITSELF);
      }
      for (const model of profile.models) {
        if (isSeen(profile.name, model.model)) continue;
        const existing = await em.findOne(ModelQuotaRow, {
          provider: profile.name,
          model: model.model,
        });
        if (providerExists && existing === null) {
          em.create(ModelQuotaRow, {
            provider: profile.name,
            model: model.model,
            maxRpm: model.maxRpm,
            maxTpm: model.maxTpm,
            maxRpd: model.maxRpd,
          });
          models++;
        }
        remember(profile.name, model.model);
      }
    }
    return { providers, models };
  });
}
