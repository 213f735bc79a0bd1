import type { LimitSpec, QuotaSpec } from '@app/contracts';
import { isPersisted, parseQuotaSnapshot, storedUntil } from './persisted-quotas';

const limit = (windowMs: number, value = 10): LimitSpec => ({
  name: `w${windowMs}`,
  unit: 'requests',
  limit: value,
  windowMs,
  algorithm: 'fixed_window',
});
const quota = (limits: LimitSpec[], extra: Partial<QuotaSpec> = {}): QuotaSpec => ({
  name: 'q',
  limits,
  ...extra,
});

describe('isPersisted', () => {
  it('keeps quotas with an enforced window of a minute or more, or a concurrency cap', () => {
    expect(isPersisted(quota([limit(1000)]))).toBe(false);
    expect(isPersisted(quota([limit(59_999)]))).toBe(false);
    expect(isPersisted(quota([limit(1000), limit(60_000)]))).toBe(true);
    expect(isPersisted(quota([limit(86_400_000, 0)]))).toBe(false); // unlimited: nothing counted
    expect(isPersisted(quota([], { concurrency: { max: 2, leaseTtlMs: 1000 } }))).toBe(true);
  });
});

describe('storedUntil', () => {
  const snapshot = {
    name: 'q',
    limits: [limit(60_000)],
    stride: 7,
    keys: [],
    rows: [],
    leases: [{ key: 'k', id: 'l', requestId: 'r', expiresAt: 5_000_000_000 }],
  };

  it('keeps an old-format quota for its longest window plus a day, and while leases live', () => {
    expect(storedUntil({ ...snapshot, leases: [] }, 0)).toBe(86_400_000 + 60_000);
    expect(storedUntil(snapshot, 0)).toBe(5_000_000_000);
  });
});

describe('parseQuotaSnapshot', () => {
  it('refuses what restore could not load', () => {
    expect(parseQuotaSnapshot('not json')).toBeUndefined();
    expect(parseQuotaSnapshot('null')).toBeUndefined();
    expect(parseQuotaSnapshot('{"name":"q","stride":5,"limits":[],"keys":[]}')).toBeUndefined();
    const ok = '{"name":"q","stride":5,"limits":[],"keys":[],"rows":[],"leases":[]}';
    expect(parseQuotaSnapshot(ok)?.name).toBe('q');
  });
});
