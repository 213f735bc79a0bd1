import type { QuotaFieldsFragment } from '../../api/generated';
import {
  EMPTY_LIMIT,
  EMPTY_QUOTA,
  formFromQuota,
  formPaths,
  toQuotaInput,
  type QuotaForm,
} from './quota-form';

const stored: QuotaFieldsFragment = {
  name: 'gpt-4o',
  match: 'team:*',
  scope: 'cluster',
  shadow: true,
  clientOverrides: true,
  lease: 'off',
  onStoreFailure: 'closed',
  version: 3,
  updatedAt: '2024-05-01T10:00:00Z',
  limits: [
    {
      name: 'rpm',
      limit: 100,
      windowMs: 60_000,
      algorithm: 'token_bucket',
      unit: 'requests',
      burst: 20,
      precision: null,
      align: null,
      timezone: null,
    },
    {
      name: 'daily',
      limit: 5000,
      windowMs: 86_400_000,
      algorithm: 'fixed_window',
      unit: 'tokens',
      burst: null,
      precision: null,
      align: 'calendar',
      timezone: 'Europe/Paris',
    },
  ],
  queue: { maxSize: 10, maxWaitMs: 2000 },
  concurrency: { max: 4, leaseTtlMs: 30_000 },
};

const form = (fields: Partial<QuotaForm>): QuotaForm => ({
  ...EMPTY_QUOTA,
  name: 'q',
  limits: [{ ...EMPTY_LIMIT, name: 'rpm', limit: '10', window: '1s' }],
  ...fields,
});

describe('formFromQuota', () => {
  it('fills every field, the window from windowMs', () => {
    const filled = formFromQuota(stored);
    expect(filled).toMatchObject({
      name: 'gpt-4o',
      match: 'team:*',
      scope: 'cluster',
      shadow: true,
      clientOverrides: true,
      lease: 'off',
      onStoreFailure: 'closed',
      queueMaxSize: '10',
      queueMaxWaitMs: '2000',
      concurrencyMax: '4',
      concurrencyLeaseTtlMs: '30000',
    });
    expect(filled.limits.map((l) => [l.window, l.burst, l.align, l.timezone])).toEqual([
      ['1m', '20', '', ''],
      ['1d', '', 'calendar', 'Europe/Paris'],
    ]);
  });

  it('leaves absent parts empty', () => {
    const filled = formFromQuota({
      ...stored,
      match: null,
      onStoreFailure: null,
      queue: null,
      concurrency: null,
    });
    expect([
      filled.match,
      filled.onStoreFailure,
      filled.queueMaxSize,
      filled.concurrencyMax,
    ]).toEqual(['', '', '', '']);
  });
});

describe('toQuotaInput', () => {
  it('gives back what a stored quota holds (window as text)', () => {
    expect(toQuotaInput(formFromQuota(stored))).toEqual({
      ok: true,
      input: {
        name: 'gpt-4o',
        match: 'team:*',
        scope: 'cluster',
        shadow: true,
        clientOverrides: true,
        lease: 'off',
        onStoreFailure: 'closed',
        queue: { maxSize: 10, maxWaitMs: 2000 },
        concurrency: { max: 4, leaseTtlMs: 30_000 },
        limits: [
          {
            name: 'rpm',
            limit: 100,
            window: '1m',
            algorithm: 'token_bucket',
            unit: 'requests',
            burst: 20,
          },
          {
            name: 'daily',
            limit: 5000,
            window: '1d',
            algorithm: 'fixed_window',
            unit: 'tokens',
            align: 'calendar',
            timezone: 'Europe/Paris',
          },
        ],
      },
    });
  });

  it('sends empty optional fields as absent, never "" or 0', () => {
    const result = toQuotaInput(form({ match: '  ' }));
    expect(result).toEqual({
      ok: true,
      input: {
        name: 'q',
        scope: 'local',
        shadow: false,
        clientOverrides: false,
        lease: 'auto',
        limits: [{ name: 'rpm', limit: 10, window: '1s', algorithm: 'fixed_window' }],
      },
    });
  });

  it('sends concurrency without a TTL when only max is given', () => {
    const result = toQuotaInput(form({ concurrencyMax: ' 3 ' }));
    expect(result.ok && result.input.concurrency).toEqual({ max: 3 });
  });

  it('refuses a number field that is not a whole number, at its path', () => {
    const limits = [{ ...EMPTY_LIMIT, name: 'rpm', limit: '1e3', window: '1s', burst: '2.5' }];
    expect(toQuotaInput(form({ limits, queueMaxSize: 'ten', queueMaxWaitMs: '5' }))).toEqual({
      ok: false,
      issues: [
        { field: 'input.limits[0].limit', message: 'must be a whole number' },
        { field: 'input.limits[0].burst', message: 'must be a whole number' },
        { field: 'input.queue.maxSize', message: 'must be a whole number' },
      ],
    });
  });

  it('says a whole number beyond 2^53-1 is too large', () => {
    expect(toQuotaInput(form({ concurrencyMax: '9007199254740993' }))).toEqual({
      ok: false,
      issues: [{ field: 'input.concurrency.max', message: 'is too large (at most 2^53-1)' }],
    });
  });

  it('requires a limit amount', () => {
    const limits = [{ ...EMPTY_LIMIT, name: 'rpm', window: '1s' }];
    expect(toQuotaInput(form({ limits }))).toEqual({
      ok: false,
      issues: [{ field: 'input.limits[0].limit', message: 'is required' }],
    });
  });

  it('leaves range checks to the admin: negative numbers are sent', () => {
    const result = toQuotaInput(form({ queueMaxSize: '-1', queueMaxWaitMs: '0' }));
    expect(result.ok && result.input.queue).toEqual({ maxSize: -1, maxWaitMs: 0 });
  });

  it('refuses half a queue and a TTL without a max', () => {
    expect(toQuotaInput(form({ queueMaxWaitMs: '100', concurrencyLeaseTtlMs: '5' }))).toEqual({
      ok: false,
      issues: [
        { field: 'input.queue.maxSize', message: 'a queue needs both max size and max wait' },
        { field: 'input.concurrency.max', message: 'is required when a lease TTL is given' },
      ],
    });
    const noWait = toQuotaInput(form({ queueMaxSize: '5' }));
    expect(noWait.ok ? [] : noWait.issues.map((i) => i.field)).toEqual(['input.queue.maxWaitMs']);
  });
});

describe('formPaths', () => {
  it('names every control, per limit', () => {
    const paths = formPaths(form({ limits: [EMPTY_LIMIT, EMPTY_LIMIT] }));
    expect(paths).toContain('input.queue.maxWaitMs');
    expect(paths).toContain('input.limits[1].timezone');
    expect(paths).not.toContain('input.limits[2].name');
  });
});
