import { inWindows } from './in-windows';

/** A task per item that finishes when the test says so. */
function gate() {
  const started: number[] = [];
  const release = new Map<number, () => void>();
  const work = (item: number) =>
    new Promise<void>((resolve, reject) => {
      started.push(item);
      release.set(item, () => (item < 0 ? reject(new Error(`item ${item}`)) : resolve()));
    });
  return { started, work, finish: (item: number) => release.get(item)?.() };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('inWindows', () => {
  it('keeps at most `limit` calls in flight, starting the next as one finishes, in order', async () => {
    const { started, work, finish } = gate();
    const done = inWindows([1, 2, 3, 4, 5], 2, work);
    await turn();
    expect(started).toEqual([1, 2]);
    finish(2);
    await turn();
    expect(started).toEqual([1, 2, 3]);
    finish(1);
    finish(3);
    await turn();
    expect(started).toEqual([1, 2, 3, 4, 5]);
    finish(4);
    finish(5);
    await expect(done).resolves.toBeUndefined();
  });

  it('stops starting calls after a failure and rejects with it', async () => {
    const { started, work, finish } = gate();
    const done = inWindows([1, -2, 3, 4], 2, work);
    await turn();
    finish(-2);
    await turn();
    finish(1);
    await expect(done).rejects.toThrow('item -2');
    expect(started).toEqual([1, -2]);
  });

  it('resolves at once for no items', async () => {
    await expect(
      inWindows([], 8, () => Promise.reject(new Error('never'))),
    ).resolves.toBeUndefined();
  });
});
