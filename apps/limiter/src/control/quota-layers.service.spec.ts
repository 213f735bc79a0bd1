import {
  goccDefaultQuota,
  type ControlQuota,
  type ControlSet,
  type LimiterConfig,
} from '@app/contracts';
import { Logger } from '@nestjs/common';
import { LimiterService } from '../engine-host/limiter.service';
import { ReadinessService } from '../engine-host/readiness.service';
import { readLimiterSettings } from '../settings/limiter-settings';
import { QuotaLayersService } from './quota-layers.service';

const settings = readLimiterSettings({ NATS_URL: '', MAX_REQUESTS: '7' });
const quota = (name: string, limit: number, match?: string): ControlQuota => ({
  spec: {
    name,
    ...(match !== undefined && { match }),
    limits: [{ name: 'rps', unit: 'requests', limit, windowMs: 60_000, algorithm: 'fixed_window' }],
  },
  version: 1,
  updatedAt: 0,
});
const control = (...quotas: ControlQuota[]): ControlSet => ({ quotas, providers: [] });
const config = (...quotas: ControlQuota[]): LimiterConfig => ({
  format: 'native',
  quotas: [goccDefaultQuota(settings.gocc), ...quotas.map((q) => q.spec)],
  providers: [],
});

describe('QuotaLayersService', () => {
  beforeAll(() => {
    Logger.overrideLogger(false);
  });

  let limiter: LimiterService;
  let readiness: ReadinessService;
  let layers: QuotaLayersService;
  let applied: number;

  beforeEach(() => {
    limiter = new LimiterService(settings);
    readiness = new ReadinessService();
    layers = new QuotaLayersService(settings, limiter, readiness);
    applied = 0;
    layers.onApplied(() => applied++);
  });
  afterEach(() => limiter.onModuleDestroy());

  const limitOf = (quotaName: string | undefined, key = 'k'): number | undefined =>
    limiter.quotaSpecFor(key, quotaName)?.limits[0]?.limit;

  it('puts the admin set over the config, and the config under a later control set', () => {
    expect(layers.setControl(control(quota('api', 100, 'api-*')))).toBe(true);
    expect(limitOf('api')).toBe(100);
    expect(limitOf(undefined, 'api-1')).toBe(100);
    expect(limitOf('default')).toBe(7); // the config layer without a file: the GoCC default

    layers.setConfig(config(quota('api', 3), quota('own', 4)));
    expect(limitOf('api')).toBe(100); // the admin's quota replaces the config's of that name
    expect(limitOf('own')).toBe(4);

    expect(layers.setControl(control())).toBe(true);
    expect(limitOf('api')).toBe(3); // the config's quota again
    expect(applied).toBe(3);
    expect(layers.stats).toEqual({ applied: 2, refused: 0 });
  });

  it('refuses an admin quota whose match pattern another quota has; the last good set stays', () => {
    layers.setConfig(config(quota('mine', 5, 'shared-*')));
    expect(layers.setControl(control(quota('api', 100, 'api-*')))).toBe(true);
    expect(layers.setControl(control(quota('theirs', 9, 'shared-*')))).toBe(false);
    expect(readiness.controlError).toBe(
      'quota "theirs": match: "shared-*" is the same pattern as quota "mine"',
    );
    expect(limitOf('api')).toBe(100);
    expect(limitOf('theirs')).toBeUndefined();
    expect(limitOf(undefined, 'shared-1')).toBe(5);
    expect(layers.stats).toEqual({ applied: 1, refused: 1 });

    // The config that held the pattern changes: the refused set is tried again, and now fits.
    layers.setConfig(config(quota('mine', 5, 'other-*')));
    expect(limitOf('theirs')).toBe(9);
    expect(limitOf('api')).toBeUndefined();
    expect(readiness.controlError).toBeUndefined();
    expect(layers.controlInForce).toEqual(control(quota('theirs', 9, 'shared-*')));
  });

  it('takes the same set again without recomposing; a refused set again stays refused', () => {
    expect(layers.setControl(control(quota('api', 100)))).toBe(true);
    expect(layers.setControl(control(quota('api', 100)))).toBe(true);
    expect(applied).toBe(1);
    layers.setConfig(config(quota('mine', 5, 'shared-*')));
    const clash = control(quota('theirs', 9, 'shared-*'));
    expect(layers.setControl(clash)).toBe(false);
    expect(layers.setControl(control(quota('api', 100)))).toBe(true); // back to the one in force
    expect(layers.setControl(clash)).toBe(false);
    expect(layers.stats).toEqual({ applied: 1, refused: 2 });
    // Still wanted: a config that fits it puts it in force.
    layers.setConfig(config());
    expect(layers.controlInForce).toEqual(clash);
  });

  it('serves a model two providers list once, from the first by name', () => {
    const twice: ControlSet = {
      quotas: [],
      providers: ['b', 'a'].map((name, i) => ({
        name,
        enabled: true,
        models: [{ model: 'm', maxRpm: i + 1, maxTpm: 0, maxRpd: 0 }],
      })),
    };
    expect(layers.setControl(twice)).toBe(true);
    expect(limitOf('m')).toBe(2);
  });

  it("serves a model's key by an admin quota whose match is the model's key, not by refusing the set", () => {
    const set: ControlSet = {
      quotas: [quota('my-gpt', 3, 'gpt-4o')],
      providers: [
        {
          name: 'openai',
          enabled: true,
          models: [
            { model: 'gpt-4o', maxRpm: 9, maxTpm: 0, maxRpd: 0 },
            { model: 'o1', maxRpm: 8, maxTpm: 0, maxRpd: 0 },
          ],
        },
      ],
    };
    expect(layers.setControl(set)).toBe(true);
    expect(readiness.controlError).toBeUndefined();
    expect(limiter.quotaSpecFor('gpt-4o')?.name).toBe('my-gpt');
    expect(limitOf(undefined, 'gpt-4o')).toBe(3);
    expect(limitOf('gpt-4o')).toBeUndefined(); // the model's own quota yields to the admin's
    expect(limitOf('o1')).toBe(8);
  });

  it('keeps the last good set when the engine refuses the composition', () => {
    expect(layers.setControl(control(quota('api', 100)))).toBe(true);
    // Entries are checked before they get here; a set built in code can still hold what the
    // engine refuses, and must not replace the one in force.
    const good = quota('api', 100);
    const broken = control({
      ...good,
      spec: {
        ...good.spec,
        limits: [
          { name: 'rps', unit: 'requests', limit: 5, windowMs: 0, algorithm: 'fixed_window' },
        ],
      },
    });
    expect(layers.setControl(broken)).toBe(false);
    expect(readiness.controlError).toContain('windowMs');
    expect(limitOf('api')).toBe(100);
    expect(layers.controlInForce).toEqual(control(quota('api', 100)));
  });

  it('throws for a config the engine refuses with the control set, changing nothing', () => {
    layers.setControl(control(quota('theirs', 9, 'shared-*')));
    expect(() => layers.setConfig(config(quota('mine', 5, 'shared-*')))).toThrow(
      'is the same pattern as quota "mine"',
    );
    expect(limitOf('mine')).toBeUndefined();
    expect(limitOf('theirs')).toBe(9);
  });

  it('serves admin provider profiles in place of the config providers', () => {
    layers.setConfig({ ...config(), providers: ['openai'] });
    expect(limitOf('gpt-4o')).toBe(500);
    layers.setControl({
      quotas: [],
      providers: [
        {
          name: 'openai',
          enabled: true,
          models: [{ model: 'gpt-4o', maxRpm: 9, maxTpm: 0, maxRpd: 0 }],
        },
      ],
    });
    expect(limitOf('gpt-4o')).toBe(9);
    expect(limitOf('gpt-4o-mini')).toBeUndefined();
  });

  describe('setConfigInSlices (a reload of CONFIG_FILE)', () => {
    /** Enough quotas that preparing them takes several turns of the event loop. */
    const many = (n: number): ControlQuota[] =>
      Array.from({ length: n }, (_, i) => quota(`t${i}`, 2, `tenant-${i}-*`));

    it('puts a large config in force, answering requests between its slices', async () => {
      let turns = 0;
      const counting = setInterval(() => turns++, 0);
      await layers.setConfigInSlices(config(...many(20_000)));
      clearInterval(counting);
      expect(turns).toBeGreaterThan(0); // timers ran while it was prepared
      expect(limitOf(undefined, 'tenant-19999-x')).toBe(2);
      expect(limiter.quotaSpecFor('tenant-123-x', undefined)?.name).toBe('t123');
      expect(applied).toBe(1);
    });

    it('composes again with a control set put in force meanwhile, losing neither', async () => {
      const reload = layers.setConfigInSlices(config(quota('mine', 5), ...many(20_000)));
      // While the config is prepared, the admin's set arrives and goes in force at once.
      expect(layers.setControl(control(quota('api', 100, 'api-*')))).toBe(true);
      expect(limitOf('api')).toBe(100);
      expect(limitOf('mine')).toBeUndefined();
      await reload;
      expect(limitOf('mine')).toBe(5);
      expect(limitOf('api')).toBe(100);
      expect(limitOf(undefined, 'tenant-7-x')).toBe(2);
      expect(layers.controlInForce).toEqual(control(quota('api', 100, 'api-*')));
    });

    it('rejects a config the engine refuses, changing nothing', async () => {
      layers.setControl(control(quota('theirs', 9, 'shared-*')));
      await expect(
        layers.setConfigInSlices(config(quota('mine', 5, 'shared-*'), ...many(2_000))),
      ).rejects.toThrow('is the same pattern as quota "mine"');
      expect(limitOf('mine')).toBeUndefined();
      expect(limitOf('theirs')).toBe(9);
    });
  });
});
