import { Engine, type HeldKey, type KeyListCursor, type QuotaSpec } from './index';

const T0 = 1_800_000_000_000;
const quotas: QuotaSpec[] = [
  {
    name: 'default',
    limits: [
      { name: 'rps', unit: 'requests', limit: 5, windowMs: 1_000, algorithm: 'fixed_window' },
    ],
  },
  {
    name: 'hourly',
    match: 'h-*',
    limits: [
      { name: 'rph', unit: 'requests', limit: 5, windowMs: 3_600_000, algorithm: 'fixed_window' },
    ],
  },
];

function listAll(engine: Engine, pageSize: number, now: number): HeldKey[][] {
  const pages: HeldKey[][] = [];
  let cursor: KeyListCursor | undefined;
  do {
    const page = engine.listKeys(pageSize, now, cursor);
    pages.push(page.keys);
    cursor = page.next;
  } while (cursor !== undefined && pages.length < 10_000);
  return pages;
}

describe('listing held keys', () => {
  it('pages through every key of every quota once, never more than a page at a time', () => {
    const engine = new Engine(quotas, { idPrefix: 't', shards: 7 });
    const expected = new Set<string>();
    for (let i = 0; i < 3_000; i++) {
      const key = i % 3 === 0 ? `h-${i}` : `k-${i}`;
      engine.acquire({ key, cost: { requests: 1 } }, T0);
      expected.add(`${key.startsWith('h-') ? 'hourly' : 'default'} ${key}`);
    }

    const pages = listAll(engine, 100, T0);
    const listed = pages.flat().map((k) => `${k.quota} ${k.key}`);

    expect(Math.max(...pages.map((p) => p.length))).toBeLessThanOrEqual(100);
    expect(listed).toHaveLength(expected.size);
    expect(new Set(listed)).toEqual(expected);
  });

  it('leaves out keys whose state went idle, before the sweep drops them', () => {
    const engine = new Engine(quotas, { idPrefix: 't', idleSweepMs: 60_000 });
    engine.acquire({ key: 'short', cost: { requests: 1 } }, T0);
    engine.acquire({ key: 'h-long', cost: { requests: 1 } }, T0);
    const later = T0 + 1_500;

    expect(engine.footprint().keys).toBe(2);
    expect(listAll(engine, 10, later).flat()).toEqual([{ quota: 'hourly', key: 'h-long' }]);
  });

  it('stops after a bounded number of slots, even when none of them is listed', () => {
    const engine = new Engine(quotas, { idPrefix: 't', shards: 1, idleSweepMs: 600_000 });
    for (let i = 0; i < 5_000; i++) engine.acquire({ key: `k-${i}`, cost: { requests: 1 } }, T0);
    engine.acquire({ key: 'h-last', cost: { requests: 1 } }, T0);
    const later = T0 + 1_500; // every k-* went idle; the sweep has not dropped them yet

    const first = engine.listKeys(1, later);
    const pages = listAll(engine, 1, later);

    expect(first.keys).toEqual([]);
    expect(first.next).toBeDefined();
    expect(pages.length).toBeGreaterThan(3);
    expect(pages.flat()).toEqual([{ quota: 'hourly', key: 'h-last' }]);
  });

  it('answers an empty engine with no keys and no cursor', () => {
    const engine = new Engine(quotas, { idPrefix: 't' });
    expect(engine.listKeys(10, T0)).toEqual({ keys: [], next: undefined });
  });
});
