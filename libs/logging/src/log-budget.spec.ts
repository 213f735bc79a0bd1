import { LogBudget } from './log-budget';

// A virtual clock: jest's fake timers move Date.now and performance.now, and fire timers only when
// told.
beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
afterEach(() => jest.useRealTimers());

function budget(perWindow = 3, windowMs = 1000) {
  const summaries: number[] = [];
  return { summaries, budget: new LogBudget(perWindow, windowMs, (n) => summaries.push(n)) };
}

describe('LogBudget', () => {
  it('lets perWindow lines through, counts the rest, and hands the count over when the window ends', () => {
    const { budget: b, summaries } = budget(3);
    const taken = Array.from({ length: 10 }, () => b.take());
    expect(taken).toEqual([true, true, true, false, false, false, false, false, false, false]);
    expect(summaries).toEqual([]);
    jest.advanceTimersByTime(999);
    expect(summaries).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(summaries).toEqual([7]);
    // A new window: lines go through again, and nothing more is reported for the old one.
    expect(b.take()).toBe(true);
    jest.advanceTimersByTime(5_000);
    expect(summaries).toEqual([7]);
  });

  it('writes no count line when nothing was suppressed', () => {
    const { budget: b, summaries } = budget(3);
    b.take();
    b.take();
    jest.advanceTimersByTime(10_000);
    b.flush();
    expect(summaries).toEqual([]);
  });

  it('starts its window at the first line after the last window ended', () => {
    const { budget: b, summaries } = budget(1);
    expect(b.take()).toBe(true);
    jest.advanceTimersByTime(1_500); // idle: no window runs
    expect(b.take()).toBe(true);
    jest.advanceTimersByTime(999);
    expect(b.take()).toBe(false); // still the window begun 999 ms ago
    jest.advanceTimersByTime(1);
    expect(summaries).toEqual([1]);
    expect(b.take()).toBe(true);
  });

  it('keeps its windows a second long when the wall clock is set back', () => {
    const { budget: b, summaries } = budget(1);
    expect(b.take()).toBe(true);
    expect(b.take()).toBe(false);
    // NTP steps the system clock back an hour: Date.now() goes back, elapsed time does not.
    jest.setSystemTime(Date.now() - 3_600_000);
    jest.advanceTimersByTime(1_000);
    expect(summaries).toEqual([1]);
    expect(b.take()).toBe(true);
  });

  it('hands over the count at flush (shutdown), once', () => {
    const { budget: b, summaries } = budget(1);
    b.take();
    b.take();
    b.take();
    b.flush();
    expect(summaries).toEqual([2]);
    jest.advanceTimersByTime(10_000);
    b.flush();
    expect(summaries).toEqual([2]);
  });

  it('bounds a flood: at most perWindow + 1 lines a window, and every event is written or counted', () => {
    const perWindow = 10;
    const { budget: b, summaries } = budget(perWindow);
    let written = 0;
    const events = 100_000;
    // 100 000 events over 20 s of virtual time: 5 000 a second.
    for (let i = 0; i < events; i++) {
      if (b.take()) written++;
      if (i % 25 === 0) jest.advanceTimersByTime(5);
    }
    b.flush();
    const windows = 20 + 1;
    expect(written + summaries.length).toBeLessThanOrEqual(windows * (perWindow + 1));
    expect(written + summaries.reduce((a, n) => a + n, 0)).toBe(events);
  });
});
