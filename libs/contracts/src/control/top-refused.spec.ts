import { mergeTopRefused, SpaceSaving, TOP_REFUSED_K, type RefusedKey } from './top-refused';

/** `a*3 b` -> a a a b */
function stream(spec: string): string[] {
  return spec
    .split(' ')
    .filter((t) => t !== '')
    .flatMap((t) => {
      const [key, times] = t.split('*');
      return Array.from({ length: times === undefined ? 1 : Number(times) }, () => key!);
    });
}

function counted(k: number, spec: string): SpaceSaving {
  const top = new SpaceSaving(k);
  for (const key of stream(spec)) top.offer(key);
  return top;
}

/** `key:count/error`, most counted first. */
function shown(keys: readonly RefusedKey[]): string {
  return keys.map((r) => `${r.key}:${r.count}/${r.error}`).join(' ');
}

describe('SpaceSaving', () => {
  it.each([
    ['nothing offered', 3, '', ''],
    ['fewer keys than counters: exact', 3, 'a*3 b c*2', 'a:3/0 c:2/0 b:1/0'],
    ['exactly k keys: exact', 2, 'a b a', 'a:2/0 b:1/0'],
    // c takes b's counter over (the least, 1) and inherits 1 as its error bound.
    ['a new key replaces the least and inherits its count', 2, 'a*3 b c', 'a:3/0 c:2/1'],
    // Ties for the least: the oldest counter of them (a's) is the one taken over.
    ['ties at the least: the oldest is replaced', 2, 'a b c', 'c:2/1 b:1/0'],
    // c takes b's 1 (c 2/1), d takes c's 2 (d 3/2), e 4/3, f 5/4: a is never the least.
    ['a heavy hitter survives a churn of one-off keys', 2, 'a*5 b c d e f', 'a:5/0 f:5/4'],
    // z takes x's 1 (z 2/1), w takes y's (w 2/1), a takes z's 2 (a 3/2), then counts 9 more.
    ['the heavy hitter comes late', 2, 'x y z w a*10', 'a:12/2 w:2/1'],
    ['counts after a takeover keep adding', 2, 'a*2 b c c c', 'c:4/1 a:2/0'],
    ['one key', 1, 'a a b', 'b:3/2'],
  ])('%s', (_, k, spec, expected) => {
    const top = counted(k, spec);
    expect(shown(top.top())).toBe(expected);
    expect(top.total).toBe(stream(spec).length);
    expect(top.size).toBeLessThanOrEqual(k);
  });

  it('guarantees: every count bounds the truth, count - error <= truth <= count', () => {
    // A skewed stream of 20 keys with a fixed pseudo-random order (no clock, no Math.random).
    const keys: string[] = [];
    let seed = 7;
    for (let i = 0; i < 5_000; i++) {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      const r = seed / 2 ** 31;
      keys.push(`k${Math.floor(20 * r * r * r)}`);
    }
    const truth = new Map<string, number>();
    const top = new SpaceSaving(5);
    for (const key of keys) {
      top.offer(key);
      truth.set(key, (truth.get(key) ?? 0) + 1);
    }
    const held = top.top();
    expect(held).toHaveLength(5);
    for (const r of held) {
      const real = truth.get(r.key) ?? 0;
      expect(r.count - r.error).toBeLessThanOrEqual(real);
      expect(r.count).toBeGreaterThanOrEqual(real);
    }
    // Every key with more than n / k of the stream is held.
    for (const [key, n] of truth) {
      if (n > keys.length / 5) expect(held.map((r) => r.key)).toContain(key);
    }
    expect(held[0]!.key).toBe('k0');
  });

  it('holds at most k counters however many keys come, and forgets them on reset', () => {
    const top = new SpaceSaving(TOP_REFUSED_K);
    for (let i = 0; i < 100_000; i++) top.offer(`key-${i}`);
    expect(top.size).toBe(TOP_REFUSED_K);
    top.reset();
    expect(top.size).toBe(0);
    expect(top.total).toBe(0);
    expect(top.top()).toEqual([]);
  });

  it('refuses a k that holds nothing', () => {
    expect(() => new SpaceSaving(0)).toThrow(RangeError);
  });
});

describe('mergeTopRefused', () => {
  const r = (key: string, count: number, error = 0): RefusedKey => ({ key, count, error });

  it.each([
    ['no replicas', [], 3, ''],
    ['one replica, as it is', [[r('a', 3), r('b', 1)]], 3, 'a:3/0 b:1/0'],
    [
      'sums counts and error bounds per key',
      [
        [r('a', 3, 1), r('b', 2)],
        [r('b', 4, 2), r('c', 1)],
      ],
      3,
      'b:6/2 a:3/1 c:1/0',
    ],
    [
      'keeps the k most counted',
      [
        [r('a', 5), r('b', 4)],
        [r('c', 3), r('d', 2)],
      ],
      2,
      'a:5/0 b:4/0',
    ],
    [
      'a key small everywhere can win in sum',
      [
        [r('a', 5), r('x', 3)],
        [r('b', 5), r('x', 3)],
      ],
      1,
      'x:6/0',
    ],
  ])('%s', (_, lists, k, expected) => {
    expect(shown(mergeTopRefused(lists, k))).toBe(expected);
  });
});
