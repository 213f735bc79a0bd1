import {
  HISTORY_WINDOW_MS,
  LiveHistory,
  SAMPLES_PER_QUOTA,
  type StatsUpdateInput,
} from './history';

const START = Date.parse('2024-05-01T12:00:00.000Z');

function update(
  secondsIn: number,
  quotas: [name: string, approved: number, denied: number, keys?: number, queued?: number][],
  replicas = 1,
): StatsUpdateInput {
  return {
    at: new Date(START + secondsIn * 1000).toISOString(),
    replicas,
    quotas: quotas.map(([quota, approved, denied, activeKeys = 0, queued = 0]) => ({
      quota,
      approved,
      denied,
      activeKeys,
      queued,
    })),
  };
}

describe('LiveHistory', () => {
  it('turns successive counters into rates per quota, with the gauges as reported', () => {
    const history = new LiveHistory();
    history.ingest(update(0, [['chat', 100, 0, 3, 1]]));
    history.ingest(update(2, [['chat', 140, 6, 4, 0]]));
    const [chat] = history.quotas();
    expect(chat?.name).toBe('chat');
    expect(chat?.samples.size).toBe(2);
    expect(chat?.latest()).toEqual({
      atMs: START + 2000,
      admitted: 20,
      refused: 3,
      keys: 4,
      waiting: 0,
    });
    expect(chat?.rateColumns()).toEqual([
      [START / 1000, START / 1000 + 2],
      [null, 20],
      [null, 3],
    ]);
    expect(chat?.gaugeColumns()).toEqual([
      [START / 1000, START / 1000 + 2],
      [3, 4],
      [1, 0],
    ]);
  });

  it('measures the rate after a too-early update from the reading before it', () => {
    const history = new LiveHistory();
    history.ingest(update(0, [['chat', 100, 0]]));
    history.ingest(update(0.3, [['chat', 130, 0]]));
    history.ingest(update(1.3, [['chat', 230, 0]]));
    expect(history.quotas()[0]?.samples.map((s) => s.admitted)).toEqual([null, null, 100]);
  });

  it('lists quotas by name as they first show up, and the replicas of the last update', () => {
    const history = new LiveHistory();
    expect(history.replicas).toBeUndefined();
    history.ingest(update(0, [['b', 0, 0]], 2));
    history.ingest(
      update(
        1,
        [
          ['a', 0, 0],
          ['b', 0, 0],
        ],
        3,
      ),
    );
    expect(history.quotas().map((q) => q.name)).toEqual(['a', 'b']);
    expect(history.replicas).toBe(3);
  });

  it('hands out the same columns until the next update, then new ones', () => {
    const history = new LiveHistory();
    history.ingest(update(0, [['chat', 0, 0]]));
    const chat = history.quotas()[0]!;
    const first = chat.rateColumns();
    expect(chat.rateColumns()).toBe(first);
    history.ingest(update(1, [['chat', 1, 0]]));
    expect(chat.rateColumns()).not.toBe(first);
  });

  it('leaves a gap, and no rate after it, while a quota is not reported', () => {
    const history = new LiveHistory();
    history.ingest(update(0, [['chat', 10, 0, 1]]));
    history.ingest(update(1, []));
    history.ingest(update(2, [['chat', 50, 0, 2]]));
    history.ingest(update(3, [['chat', 60, 0, 2]]));
    const chat = history.quotas()[0]!;
    expect(chat.samples.map((s) => [s.admitted, s.keys])).toEqual([
      [null, 1],
      [null, null],
      [null, 2],
      [10, 2],
    ]);
  });

  it('breaks the lines after a silence (an admin restart), and gives no rate across it', () => {
    const history = new LiveHistory();
    history.ingest(update(0, [['chat', 10, 0, 1]]));
    history.ingest(update(1, [['chat', 20, 0, 1]]));
    history.ingest(update(9, [['chat', 100, 0, 3]]));
    history.ingest(update(10, [['chat', 105, 0, 3]]));
    const chat = history.quotas()[0]!;
    expect(chat.samples.map((s) => [s.atMs - START, s.admitted, s.keys])).toEqual([
      [0, null, 1],
      [1000, 10, 1],
      [1001, null, null],
      [9000, null, 3],
      [10000, 5, 3],
    ]);
  });

  it('keeps the last 10 minutes only, and forgets a quota with nothing left in them', () => {
    const history = new LiveHistory();
    history.ingest(
      update(0, [
        ['old', 0, 0],
        ['chat', 0, 0],
      ]),
    );
    for (let s = 1; s <= 700; s++) history.ingest(update(s, [['chat', s, 0]]));
    const [chat] = history.quotas();
    expect(history.quotas()).toHaveLength(1);
    expect(chat?.name).toBe('chat');
    expect(chat?.samples.size).toBe(HISTORY_WINDOW_MS / 1000 + 1);
    expect(chat?.samples.at(0)?.atMs).toBe(START + 100_000);
    expect(chat?.latest()?.admitted).toBe(1);
  });

  it('never holds more than its capacity, however often updates come', () => {
    const history = new LiveHistory();
    for (let i = 0; i < SAMPLES_PER_QUOTA * 3; i++)
      history.ingest(update(i / 10, [['chat', i, 0]]));
    expect(history.quotas()[0]?.samples.size).toBe(SAMPLES_PER_QUOTA);
  });

  it('ignores an update that is not after the last one, and starts over if the clock moved back', () => {
    const history = new LiveHistory();
    history.ingest(update(100, [['chat', 0, 0]]));
    expect(history.ingest(update(100, [['chat', 5, 0]]))).toBe(false);
    expect(history.ingest(update(99, [['chat', 5, 0]]))).toBe(false);
    expect(history.quotas()[0]?.samples.size).toBe(1);
    expect(history.ingest(update(10, [['other', 0, 0]]))).toBe(true);
    expect(history.quotas().map((q) => [q.name, q.samples.size])).toEqual([['other', 1]]);
    expect(history.ingest({ at: 'not a date', replicas: 1, quotas: [] })).toBe(false);
  });
});
