import type { QuotaFieldsFragment } from '../../api/generated';
import { loadAllQuotas, QUOTA_PAGE } from './load-quotas';
import { filterQuotas, limitSummary } from './quota-list';

type StoredLimit = QuotaFieldsFragment['limits'][number];

const limit = (fields: Partial<StoredLimit>): StoredLimit => ({
  name: 'rpm',
  limit: 100,
  windowMs: 60_000,
  algorithm: 'sliding_window',
  unit: 'requests',
  burst: null,
  precision: null,
  align: null,
  timezone: null,
  ...fields,
});

describe('limitSummary', () => {
  it('reads amount, window and algorithm', () => {
    expect(limitSummary(limit({}))).toBe('100 / 1m sliding_window');
    expect(limitSummary(limit({ windowMs: 250, algorithm: 'fixed_window' }))).toBe(
      '100 / 250ms fixed_window',
    );
  });

  it('names a unit other than requests, and says unlimited for 0', () => {
    expect(limitSummary(limit({ unit: 'tokens', limit: 5000 }))).toBe(
      '5000 tokens / 1m sliding_window',
    );
    expect(limitSummary(limit({ limit: 0, windowMs: 86_400_000 }))).toBe(
      'unlimited / 1d sliding_window',
    );
  });
});

describe('filterQuotas', () => {
  const quotas = [
    { name: 'gpt-4o', match: 'team:*' },
    { name: 'default', match: null },
    { name: 'uploads', match: 're:^GPT-.*' },
  ];

  it('keeps every quota for a blank search', () => {
    expect(filterQuotas(quotas, '  ')).toEqual(quotas);
  });

  it('matches name or match, in any case', () => {
    expect(filterQuotas(quotas, 'GPT').map((q) => q.name)).toEqual(['gpt-4o', 'uploads']);
    expect(filterQuotas(quotas, 'team').map((q) => q.name)).toEqual(['gpt-4o']);
    expect(filterQuotas(quotas, 'nothing')).toEqual([]);
  });
});

describe('loadAllQuotas', () => {
  const named = (n: number) => ({ name: `q${String(n).padStart(4, '0')}` }) as QuotaFieldsFragment;

  it('asks page after page, after the last name, until a short page', async () => {
    const stored = Array.from({ length: QUOTA_PAGE * 2 + 3 }, (_, i) => named(i));
    const asked: (string | undefined)[] = [];
    const all = await loadAllQuotas((first, after) => {
      asked.push(after);
      const start = after === undefined ? 0 : stored.findIndex((q) => q.name === after) + 1;
      return Promise.resolve(stored.slice(start, start + first));
    });
    expect(all).toEqual(stored);
    expect(asked).toEqual([undefined, named(QUOTA_PAGE - 1).name, named(QUOTA_PAGE * 2 - 1).name]);
  });

  it('stops after an empty page when the count is a whole number of pages', async () => {
    const stored = Array.from({ length: QUOTA_PAGE }, (_, i) => named(i));
    let calls = 0;
    const all = await loadAllQuotas((first, after) => {
      calls += 1;
      return Promise.resolve(after === undefined ? stored.slice(0, first) : []);
    });
    expect(all).toHaveLength(QUOTA_PAGE);
    expect(calls).toBe(2);
  });
});
