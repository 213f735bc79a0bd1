import { WriteOrder } from './write-order';

describe('WriteOrder', () => {
  /** A map with its write order, as Idempotency keeps them. */
  function owner() {
    const map = new Map<string, number>();
    const order = new WriteOrder();
    let stamp = 0;
    const isCurrent = (key: string, s: number): boolean => map.get(key) === s;
    const write = (key: string): void => {
      map.set(key, ++stamp);
      order.push(key, stamp);
    };
    return { map, order, write, isCurrent };
  }

  it('gives the oldest current key, skipping keys written again since', () => {
    const { order, write, isCurrent, map } = owner();
    for (const key of ['a', 'b', 'c', 'a']) write(key);
    expect(order.shift(isCurrent)).toBe('b');
    map.delete('b');
    expect(order.shift(isCurrent)).toBe('c');
    map.delete('c');
    expect(order.shift(isCurrent)).toBe('a');
    map.delete('a');
    expect(order.shift(isCurrent)).toBeUndefined();
  });

  it('evicts oldest first while told to, and stops at the first entry it may not take', () => {
    const { order, write, isCurrent, map } = owner();
    for (const key of ['a', 'b', 'c', 'd']) write(key);
    write('a');
    order.evictWhile(isCurrent, (key) => key !== 'd' && map.delete(key));
    expect([...map.keys()].sort()).toEqual(['a', 'd']);
    // 'd' was refused and stays first; 'a' (written last) follows it.
    map.delete('d');
    expect(order.shift(isCurrent)).toBe('a');
  });

  it('keeps its order across compaction of a long consumed front', () => {
    const { order, write, isCurrent, map } = owner();
    for (let i = 0; i < 10_000; i++) {
      write(`k${i}`);
      if (map.size > 100) map.delete(order.shift(isCurrent)!);
    }
    expect(map.size).toBe(100);
    expect(order.shift(isCurrent)).toBe('k9900');
  });
});
