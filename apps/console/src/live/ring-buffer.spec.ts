import { RingBuffer } from './ring-buffer';

describe('RingBuffer', () => {
  it('keeps items oldest first until full', () => {
    const ring = new RingBuffer<number>(3);
    ring.push(1);
    ring.push(2);
    expect(ring.size).toBe(2);
    expect(ring.map((x) => x)).toEqual([1, 2]);
    expect(ring.newest()).toBe(2);
  });

  it('overwrites the oldest item once full, never growing past its capacity', () => {
    const ring = new RingBuffer<number>(3);
    for (let i = 1; i <= 7; i++) ring.push(i);
    expect(ring.size).toBe(3);
    expect(ring.map((x) => x)).toEqual([5, 6, 7]);
    expect(ring.at(0)).toBe(5);
    expect(ring.at(3)).toBeUndefined();
    expect(ring.at(-1)).toBeUndefined();
  });

  it('drops stale items from the oldest end only', () => {
    const ring = new RingBuffer<number>(4);
    for (const x of [1, 2, 9, 3, 4]) ring.push(x); // holds 2, 9, 3, 4
    expect(ring.dropOldestWhile((x) => x < 5)).toBe(1);
    expect(ring.map((x) => x)).toEqual([9, 3, 4]);
    ring.push(10);
    ring.push(11);
    expect(ring.map((x) => x)).toEqual([3, 4, 10, 11]);
    expect(ring.dropOldestWhile(() => true)).toBe(4);
    expect(ring.size).toBe(0);
    expect(ring.newest()).toBeUndefined();
  });

  it('starts over when cleared', () => {
    const ring = new RingBuffer<string>(2);
    ring.push('a');
    ring.push('b');
    ring.push('c');
    ring.clear();
    ring.push('d');
    expect(ring.map((x) => x)).toEqual(['d']);
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(() => new RingBuffer(0)).toThrow(/capacity/);
    expect(() => new RingBuffer(1.5)).toThrow(/capacity/);
  });
});
