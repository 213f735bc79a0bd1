import type { NormalisedAcquire } from '@app/contracts';
import { compileQuota, refusal, type Decision, type QuotaSpec } from '@app/engine';
import type { ClusterQuotaEntry } from '../cluster-decision';
import type { ClusterOutcome, LeaseAsk, LeaseGrant } from '../redis-quota-store';
import { LeaseBook, type LeaseHost, type LeaseOptions, type LeaseStore } from './lease-book';
import type { Pending } from './slice';

const spec: QuotaSpec = {
  name: 'q',
  scope: 'cluster',
  limits: [
    { name: 'rpm', unit: 'requests', limit: 10_000, windowMs: 60_000, algorithm: 'fixed_window' },
    { name: 'tpm', unit: 'tokens', limit: 1_000_000, windowMs: 60_000, algorithm: 'fixed_window' },
  ],
};
const q: ClusterQuotaEntry = {
  name: 'q',
  limits: compileQuota(spec).limits,
  concurrency: undefined,
  spec,
  leasable: true,
};
const req = (requests = 1, tokens = 10, key = 'k'): NormalisedAcquire => ({
  key,
  quota: 'q',
  cost: { requests, tokens },
});
/** Redis's clock: unrelated to the process's. */
const R = 1_700_000_000_000;
const T0 = 5_000;

const outcome = (over: Partial<ClusterOutcome>): ClusterOutcome => ({
  allowed: true,
  code: 'OK',
  now: R,
  retryAfterMs: 0,
  refusing: -1,
  seq: 0,
  replayed: false,
  inFlight: 0,
  approved: 0,
  denied: 0,
  limits: [
    { used: 0, resetMs: 60_000 },
    { used: 0, resetMs: 60_000 },
  ],
  ...over,
});
/** A grant of `granted` per limit charged at Redis's `now`, spendable for `span` ms there. */
const grant = (seq: number, granted: number[], span = 1_000, now = R): LeaseGrant => ({
  outcome: outcome({ seq, now }),
  granted,
  until: granted.map(() => now + span),
  notes: [],
});
const refused = (retryAfterMs: number, refusing = 0): LeaseGrant => ({
  outcome: outcome({ allowed: false, code: 'RATE_LIMITED', retryAfterMs, refusing }),
  granted: [0, 0],
  until: [0, 0],
  notes: [],
});

interface Call {
  readonly key: string;
  readonly ask: LeaseAsk;
  readonly resolve: (g: LeaseGrant) => void;
  readonly reject: (e: unknown) => void;
}
interface Settle {
  readonly key: string;
  readonly chargedAt: number;
  readonly until: readonly number[];
  readonly delta: readonly number[];
}

/** Records every lease call; the test answers each with a grant it builds, when it wants. */
class ScriptedStore implements LeaseStore {
  readonly calls: Call[] = [];
  readonly settles: Settle[] = [];

  lease(_q: ClusterQuotaEntry, key: string, ask: LeaseAsk): Promise<LeaseGrant> {
    return new Promise((resolve, reject) => this.calls.push({ key, ask, resolve, reject }));
  }

  settle(
    _q: ClusterQuotaEntry,
    key: string,
    chargedAt: number,
    until: readonly number[],
    delta: readonly number[],
  ): Promise<ClusterOutcome> {
    this.settles.push({ key, chargedAt, until, delta });
    return Promise.resolve(outcome({}));
  }

  get asks(): LeaseAsk[] {
    return this.calls.map((c) => c.ask);
  }

  get last(): Call {
    return this.calls[this.calls.length - 1]!;
  }
}

/** Lets the book's continuations of a settled grant run. */
const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const OPTIONS: LeaseOptions = {
  hotRate: 4,
  horizonMs: 100,
  ttlMs: 1_000,
  idleMs: 250,
  maxKeys: 100,
};

function setup(options: Partial<LeaseOptions> = {}) {
  const clock = { now: T0 };
  const store = new ScriptedStore();
  const again: Pending[] = [];
  const failed: [Pending, unknown][] = [];
  const host: LeaseHost = {
    storeFor: () => store,
    now: () => clock.now,
    failed: (_q, p, error) => {
      failed.push([p, error]);
      return refusal('UNAVAILABLE', p.requestId, p.input.key, 'q', 'failed');
    },
    again: (_q, p) => {
      again.push(p);
      return Promise.resolve(refusal('RATE_LIMITED', p.requestId, p.input.key, 'q', 'again'));
    },
  };
  const book = new LeaseBook({ ...OPTIONS, ...options }, 'r1-', 3, host, false);
  let n = 0;
  /** Admits one request; a sync Decision, a Promise, or undefined (not leased). */
  const admit = (input = req(), counted = true) => book.admit(q, input, `id${n++}`, counted);
  /** Admits and expects a sync answer. */
  const now = (input = req(), counted = true): Decision => {
    const d = admit(input, counted);
    if (d === undefined || d instanceof Promise)
      throw new Error(`not decided now: ${d === undefined ? 'not leased' : 'waits'}`);
    return d;
  };
  /** Admits and expects to wait for a grant. */
  const later = (input = req(), counted = true): Promise<Decision> => {
    const d = admit(input, counted);
    if (!(d instanceof Promise)) throw new Error('decided without waiting');
    return d;
  };
  /** What is left of the key's slice: an idle sweep gives it back (the slice leaves the book). */
  const leftBySweep = (): readonly number[] => {
    const calls = store.calls.length;
    clock.now += OPTIONS.idleMs;
    book.sweep();
    expect(store.calls.length).toBe(calls + 1);
    return store.last.ask.unspent;
  };
  return { clock, store, again, failed, book, admit, now, later, leftBySweep };
}

describe('LeaseBook: hot keys', () => {
  it('decides in Redis until the key is hot on this replica (rate 50/s: 13 in a period)', () => {
    const { admit, store, book } = setup({ hotRate: 50 });
    for (let i = 0; i < 12; i++) expect(admit()).toBeUndefined();
    expect(admit()).toBeInstanceOf(Promise);
    expect(store.calls).toHaveLength(1);
    expect(book.keys).toBe(1);
  });

  it('maxKeys bounds the keys leased: beyond it admit returns undefined', () => {
    const { admit, book, store, clock } = setup({ maxKeys: 2 });
    expect(admit(req(1, 1, 'a'))).toBeInstanceOf(Promise);
    expect(admit(req(1, 1, 'b'))).toBeInstanceOf(Promise);
    expect(admit(req(1, 1, 'c'))).toBeUndefined();
    expect(book.keys).toBe(2);
    // Known keys still lease.
    expect(admit(req(1, 1, 'a'))).toBeInstanceOf(Promise);
    store.calls[0]!.reject(new Error('down'));
    return settled().then(() => {
      expect(book.keys).toBe(1);
      clock.now += 1;
      expect(admit(req(1, 1, 'c'))).toBeInstanceOf(Promise);
      expect(book.keys).toBe(2);
    });
  });
});

describe('LeaseBook: spend deadline', () => {
  // Asked at T0, answered at T0+30 with until - now = 100: spendable through T0+98.
  it.each([
    [0, true],
    [98, true],
    [99, false],
    [150, false],
  ])('at T0+%p from the slice: %p', async (dt, fromSlice) => {
    const { later, admit, store, clock } = setup();
    const first = later();
    clock.now = T0 + 30;
    store.last.resolve(grant(7, [10, 1000], 100));
    expect((await first).allowed).toBe(true);
    clock.now = T0 + Math.max(30, dt);
    const d = admit();
    if (fromSlice) {
      expect(d).toMatchObject({ allowed: true, code: 'OK' });
      expect(store.calls).toHaveLength(1);
    } else {
      expect(d).toBeInstanceOf(Promise);
      expect(store.calls).toHaveLength(2);
      expect(store.last.ask).toMatchObject({ prevSeq: 7, unspent: [9, 990] });
    }
  });

  it('the nearest until of all limits bounds the slice', async () => {
    const { later, admit, store, clock } = setup();
    const first = later();
    store.last.resolve({ ...grant(7, [10, 1000]), until: [R + 100, R + 60] });
    await first;
    clock.now = T0 + 58;
    expect(admit()).toMatchObject({ allowed: true });
    clock.now = T0 + 59;
    expect(admit()).toBeInstanceOf(Promise);
  });
});

describe('LeaseBook: pending requests while a grant is in flight', () => {
  it('answers them in arrival order, one ask in flight, asking again for the rest', async () => {
    const { later, store, clock } = setup();
    const order: string[] = [];
    const track = (name: string, p: Promise<Decision>) =>
      p.then((d) => {
        order.push(name);
        return d;
      });
    const a = track('a', later(req(1, 10)));
    clock.now = T0 + 1;
    const b = track('b', later(req(1, 10)));
    const c = track('c', later(req(1, 10)));
    expect(store.asks).toEqual([
      {
        holder: 'r1-',
        prevSeq: 0,
        replicas: 3,
        ttlMs: 1_000,
        horizonMs: 100,
        approved: 0,
        denied: 0,
        want: [expect.any(Number), expect.any(Number)],
        need: [1, 10],
        unspent: [0, 0],
      },
    ]);
    clock.now = T0 + 5;
    store.calls[0]!.resolve(grant(7, [2, 1_000]));
    await settled();
    expect(order).toEqual(['a', 'b']);
    // c is not covered: one more ask, for c.
    expect(store.calls).toHaveLength(2);
    expect(store.asks[1]).toMatchObject({
      prevSeq: 7,
      need: [1, 10],
      unspent: [0, 980],
      approved: 2,
    });
    const d = track('d', later(req(1, 10)));
    expect(store.calls).toHaveLength(2);
    store.calls[1]!.resolve(grant(8, [1, 1_000]));
    await settled();
    expect(order).toEqual(['a', 'b', 'c']);
    expect(store.calls).toHaveLength(3);
    expect(store.asks[2]).toMatchObject({
      prevSeq: 8,
      need: [1, 10],
      unspent: [0, 990],
      approved: 1,
    });
    store.calls[2]!.resolve(grant(9, [5, 1_000]));
    await settled();
    expect(order).toEqual(['a', 'b', 'c', 'd']);
    const ds = await Promise.all([a, b, c, d]);
    expect(ds.map((x) => [x.allowed, x.requestId])).toEqual([
      [true, 'r1-l0'],
      [true, 'r1-l1'],
      [true, 'r1-l2'],
      [true, 'r1-l3'],
    ]);
  });

  it('a newcomer waits behind a head the slice cannot cover', async () => {
    const { later, store } = setup();
    const a = later(req(1, 10));
    const b = later(req(1, 2_000));
    store.calls[0]!.resolve(grant(7, [10, 1_000]));
    expect((await a).allowed).toBe(true);
    // The slice has 990 tokens: c could spend them, but b is first.
    const c = later(req(1, 10));
    expect(store.calls).toHaveLength(2);
    expect(store.asks[1]).toMatchObject({ need: [1, 2_000], unspent: [9, 990] });
    store.calls[1]!.resolve(grant(8, [2, 2_010]));
    expect((await b).allowed).toBe(true);
    expect((await c).allowed).toBe(true);
    expect(store.calls).toHaveLength(2);
  });
});

describe('LeaseBook: a refused grant', () => {
  // Refusals are cached from the ask until min(retryAfter, horizon 100): [retryAfter, until].
  it.each([
    [500, 100],
    [30, 30],
  ])(
    'retryAfter %p: pending refused, later requests refused until T0+%p, then asked',
    async (retry, until) => {
      const { later, now, admit, store, clock, book } = setup();
      const a = later();
      clock.now = T0 + 2;
      const b = later(req(), false); // a waiter's retry: not counted in the key's stats
      clock.now = T0 + 10;
      store.calls[0]!.resolve(refused(retry, 1));
      for (const d of await Promise.all([a, b])) {
        expect(d).toMatchObject({ allowed: false, code: 'RATE_LIMITED', limitName: 'tpm' });
        expect(d.retryAfterMs).toBe(retry - 10);
      }
      for (const dt of [until / 2, until - 1]) {
        clock.now = T0 + dt;
        expect(now()).toMatchObject({
          allowed: false,
          code: 'RATE_LIMITED',
          retryAfterMs: Math.max(1, retry - dt),
        });
      }
      expect(store.calls).toHaveLength(1);
      clock.now = T0 + until;
      expect(admit()).toBeInstanceOf(Promise);
      expect(store.calls).toHaveLength(2);
      expect(store.asks[1]).toMatchObject({ prevSeq: 0, unspent: [0, 0], approved: 0, denied: 3 });
      expect(book.counters).toMatchObject({ grants: 0, granted: 0, admitted: 0, refused: 4 });
    },
  );
});

describe('LeaseBook: the ask', () => {
  it('gives back the last grant: prevSeq, unspent (left becomes 0), approved/denied since', async () => {
    const { later, now, store, clock, book, leftBySweep } = setup();
    const a = later(req(1, 10));
    store.calls[0]!.resolve(grant(7, [5, 500]));
    await a;
    clock.now = T0 + 10;
    now(req(1, 10));
    now(req(1, 10));
    // The grant's deadline (T0+999) passes: b asks, giving back what is left.
    clock.now = T0 + 999;
    const b = later(req(1, 10));
    expect(store.asks[1]).toMatchObject({
      prevSeq: 7,
      unspent: [2, 470],
      approved: 3,
      denied: 0,
      need: [1, 10],
    });
    store.calls[1]!.resolve(grant(8, [1, 100], 1_000, R + 999));
    expect((await b).allowed).toBe(true);
    // The new slice is the new grant only (the old left went back with the ask).
    const gave = store.calls.length;
    expect(leftBySweep()).toEqual([0, 90]);
    expect(store.asks[gave]).toMatchObject({ prevSeq: 8, want: [0, 0], need: [0, 0], approved: 1 });
    expect(book.counters).toEqual({
      grants: 2,
      granted: 505 + 101,
      returned: 472 + 90,
      admitted: 4,
      refused: 0,
    });
  });

  it('wants at least the queued cost', async () => {
    const { later, store, clock } = setup({ horizonMs: 1 });
    const a = later(req(1, 10));
    clock.now = T0 + 500;
    const b = later(req(1, 10));
    const c = later(req(1, 20));
    store.calls[0]!.resolve(grant(7, [1, 10]));
    await a;
    expect(store.asks[1]).toMatchObject({ need: [1, 10], want: [2, 30] });
    store.calls[1]!.resolve(grant(8, [2, 30]));
    await Promise.all([b, c]);
  });

  it('wants about rate x horizon at a steady rate (500/s, horizon 100 ms: 50)', async () => {
    const { later, admit, store, clock } = setup();
    let t = T0;
    const first = later(req(1, 10));
    for (let round = 0; round < 12; round++) {
      store.last.resolve(grant(round + 1, [50, 500], 1_000, R + (t - T0)));
      await settled();
      for (;;) {
        t += 2;
        clock.now = t;
        if (admit(req(1, 10)) instanceof Promise) break;
      }
    }
    await first;
    const wants = store.asks.map((a) => a.want);
    const [requests, tokens] = wants[wants.length - 1]!;
    expect(requests).toBeGreaterThanOrEqual(50);
    expect(requests).toBeLessThanOrEqual(51);
    expect(tokens).toBeGreaterThanOrEqual(500);
    expect(tokens).toBeLessThanOrEqual(510);
  });
});

describe('LeaseBook: the ask near the end of capacity', () => {
  /** A grant after which Redis had `left` requests (and plenty of tokens) left to give. */
  const grantLeaving = (seq: number, granted: number[], left: number): LeaseGrant => ({
    ...grant(seq, granted),
    outcome: outcome({
      seq,
      limits: [
        { used: 10_000 - left, resetMs: 60_000 },
        { used: 0, resetMs: 60_000 },
      ],
    }),
  });

  /** Demand of 500/s (50 per 100 ms horizon) measured over one ask; then 2 requests queue. */
  async function askAfter(last: LeaseGrant): Promise<LeaseAsk> {
    const { later, store, clock } = setup();
    const first = later(req(1, 10));
    clock.now = T0 + 100;
    for (let i = 0; i < 49; i++) void later(req(1, 10));
    store.calls[0]!.resolve(grant(1, [0, 0]));
    await settled();
    store.calls[1]!.resolve(last);
    await first;
    await settled();
    clock.now = T0 + 200;
    void later(req(1, 10));
    void later(req(1, 10));
    return store.last.ask;
  }

  it('wants the demand over the horizon while Redis has replicas x demand left, else only the requests in hand', async () => {
    const far = await askAfter(grantLeaving(2, [50, 500], 10_000));
    const demand = far.want[0]!;
    expect(demand).toBeGreaterThan(1);
    expect((await askAfter(grantLeaving(2, [50, 500], 3 * demand))).want).toEqual(far.want);
    // Less left: a slice sized for demand to come would strand units here if it went elsewhere.
    // Tokens, far from their end, still want their demand.
    const near = await askAfter(grantLeaving(2, [50, 500], 3 * demand - 1));
    expect(near.want).toEqual([1, far.want[1]]);
    expect(near.need).toEqual([1, 10]);
  });

  it('after a refusal, wants only the requests in hand', async () => {
    const { later, store, clock } = setup();
    const waiting = [later(req(1, 10))];
    for (let i = 0; i < 20; i++) waiting.push(later(req(1, 10)));
    store.calls[0]!.resolve(refused(50));
    for (const d of await Promise.all(waiting)) expect(d.code).toBe('RATE_LIMITED');
    clock.now = T0 + 200;
    void later(req(1, 10));
    // Its demand (21 requests in 200 ms) would want more than it holds.
    expect(store.last.ask.want).toEqual([1, 10]);
  });
});

describe('LeaseBook: idle give-back', () => {
  it('after idleMs a sweep sends a want-0 ask with the unspent units and drops the slice', async () => {
    const { later, now, store, clock, book } = setup();
    const a = later(req(1, 10));
    store.calls[0]!.resolve(grant(7, [5, 500]));
    await a;
    clock.now = T0 + 10;
    now(req(1, 10));
    clock.now = T0 + 259;
    book.sweep();
    expect(store.calls).toHaveLength(1);
    expect(book.keys).toBe(1);
    clock.now = T0 + 260;
    book.sweep();
    expect(store.calls).toHaveLength(2);
    expect(store.asks[1]).toMatchObject({
      prevSeq: 7,
      want: [0, 0],
      need: [0, 0],
      unspent: [3, 480],
      approved: 2,
    });
    expect(book.keys).toBe(0);
    expect(book.counters.returned).toBe(483);
    // The key starts over: a new slice, nothing to give back.
    clock.now = T0 + 261;
    expect(later()).toBeInstanceOf(Promise);
    expect(store.asks[2]).toMatchObject({ prevSeq: 0, unspent: [0, 0], approved: 0 });
  });

  it('a slice waiting for its grant is not swept', () => {
    const { later, store, clock, book } = setup();
    void later();
    clock.now = T0 + 10_000;
    book.sweep();
    expect(store.calls).toHaveLength(1);
    expect(book.keys).toBe(1);
  });
});

describe('LeaseBook: revoke', () => {
  it('requests waiting for a revoked slice are decided again', async () => {
    const { later, store, again, book } = setup();
    const a = later();
    const b = later();
    book.revoke(['other', 'q']);
    expect(book.keys).toBe(0);
    store.calls[0]!.resolve(grant(7, [5, 500]));
    expect(await a).toMatchObject({ reason: 'again' });
    expect(await b).toMatchObject({ reason: 'again' });
    expect(again.map((p) => p.requestId)).toEqual(['id0', 'id1']);
  });

  it('nothing is spent from a revoked slice; its admissions are no longer its own', async () => {
    const { later, now, store, book } = setup();
    const a = later();
    store.calls[0]!.resolve(grant(7, [5, 500]));
    const admitted = (await a).requestId;
    now();
    book.revoke(['q']);
    expect(later()).toBeInstanceOf(Promise);
    expect(store.asks[1]).toMatchObject({ prevSeq: 0, unspent: [0, 0], approved: 0 });
    // The quota changed: its old layout must never be written to Redis again. The units stay
    // counted (under, never over).
    expect(await book.release(admitted)).toBe(false);
    expect(store.settles).toEqual([]);
  });
});

describe('LeaseBook: store failure', () => {
  it('pending are answered by host.failed and the slice is dropped', async () => {
    const { later, now, store, failed, book, clock } = setup();
    const a = later();
    store.calls[0]!.resolve(grant(7, [1, 500]));
    await a;
    clock.now = T0 + 1;
    const b = later();
    const c = later();
    const error = new Error('redis down');
    store.calls[1]!.reject(error);
    expect(await b).toMatchObject({ code: 'UNAVAILABLE', reason: 'failed' });
    expect(await c).toMatchObject({ code: 'UNAVAILABLE' });
    expect(failed.map(([p, e]) => [p.requestId, e])).toEqual([
      ['id1', error],
      ['id2', error],
    ]);
    expect(book.keys).toBe(0);
    // A new slice: nothing of the old one is given back.
    expect(() => now()).toThrow('not decided now');
    expect(store.asks[2]).toMatchObject({ prevSeq: 0, unspent: [0, 0] });
  });
});

describe('LeaseBook: release and usage of its own admissions', () => {
  it('while the grant lives: into the slice (left grows back, shrinks)', async () => {
    const { later, now, store, book, leftBySweep } = setup();
    const a = later(req(1, 10));
    store.calls[0]!.resolve(grant(7, [5, 500]));
    const first = (await a).requestId;
    const second = now(req(1, 100)).requestId;
    expect([first, second]).toEqual(['r1-l0', 'r1-l1']);
    expect(book.owns(second)).toBe(true);
    expect(await book.release(second)).toBe(true);
    expect(await book.release(second)).toBe(false);
    expect(await book.usage(second, { requests: 1, tokens: 5 })).toBe(false);
    // left [4, 490]: 10 tokens of `first` become 300.
    expect(await book.usage(first, { requests: 1, tokens: 300 })).toBe(true);
    // 700 more does not fit into 200 left: charged in Redis.
    expect(await book.usage(first, { requests: 1, tokens: 1_000 })).toBe(true);
    expect(store.settles).toEqual([
      { key: 'k', chargedAt: R, until: [R + 1_000, R + 1_000], delta: [0, 700] },
    ]);
    expect(leftBySweep()).toEqual([4, 200]);
    // Released after the grant ended: in Redis, all of its settled cost.
    expect(await book.release(first)).toBe(true);
    expect(store.settles[1]).toEqual({
      key: 'k',
      chargedAt: R,
      until: [R + 1_000, R + 1_000],
      delta: [-1, -1_000],
    });
  });

  it('notes from other replicas: a release or usage there gives the cost back here, once', async () => {
    const { later, now, store, book, leftBySweep, clock } = setup();
    const a = later(req(1, 10));
    store.calls[0]!.resolve(grant(7, [5, 500]));
    const first = (await a).requestId;
    const second = now(req(1, 100)).requestId;
    clock.now = T0 + 1_000; // the slice is spent out: the next request asks again
    const b = later(req(1, 10));
    store.calls[1]!.resolve({
      ...grant(8, [5, 500], 1_000, R + 1_000),
      notes: [
        { kind: 'release', id: second },
        { kind: 'usage', id: first },
        { kind: 'release', id: second }, // twice: given back once
        { kind: 'release', id: 'r9-l0' }, // not ours
      ],
    });
    await b;
    await settled();
    // Their grant ended: given back where it was charged, each once.
    expect(store.settles).toEqual([
      { key: 'k', chargedAt: R, until: [R + 1_000, R + 1_000], delta: [-1, -100] },
      { key: 'k', chargedAt: R, until: [R + 1_000, R + 1_000], delta: [-1, -10] },
    ]);
    expect(await book.release(second)).toBe(false);
    expect(leftBySweep()).toEqual([4, 490]);
  });

  it("after the grant's deadline, or with a renewal in flight: a settle of that grant", async () => {
    const { later, admit, store, book, clock } = setup();
    const a = later();
    store.calls[0]!.resolve(grant(7, [2, 500], 100));
    const first = (await a).requestId;
    clock.now = T0 + 99;
    expect(await book.release(first)).toBe(true);
    expect(store.settles).toEqual([
      { key: 'k', chargedAt: R, until: [R + 100, R + 100], delta: [-1, -10] },
    ]);
    const b = later();
    store.calls[1]!.resolve(grant(8, [2, 500], 100, R + 99));
    const second = (await b).requestId;
    const third = admit();
    expect(third).toMatchObject({ allowed: true });
    // A renewal in flight: `second`'s grant went back with the ask.
    clock.now = T0 + 150;
    expect(admit()).toBeInstanceOf(Promise);
    expect(await book.usage(second, { requests: 1, tokens: 30 })).toBe(true);
    expect(store.settles[1]).toEqual({
      key: 'k',
      chargedAt: R + 99,
      until: [R + 199, R + 199],
      delta: [0, 20],
    });
  });

  it.each(['r1-lzz', 'r1-l', 'r1-l-1', 'r2-l0', 'x', ''])('unknown id %j: false', async (id) => {
    const { later, store, book } = setup();
    const a = later();
    store.calls[0]!.resolve(grant(7, [2, 500]));
    await a;
    expect(await book.release(id)).toBe(false);
    expect(await book.usage(id, { requests: 1 })).toBe(false);
    expect(store.settles).toEqual([]);
  });
});

describe('LeaseBook: requests that cost nothing', () => {
  /** driver.lua's answer to an ask that wants nothing: code 0, no grant (seq 0), untils 0. */
  const empty: LeaseGrant = {
    outcome: outcome({ seq: 0 }),
    granted: [0, 0],
    until: [0, 0],
    notes: [],
  };

  it('a new slice does not ask for an empty grant: Redis decides the request', async () => {
    const { admit, store } = setup();
    const d = admit(req(0, 0));
    // Before the fix: the ask wanted [0, 0], Redis granted nothing, and the book asked again
    // after each reply, forever, never answering the request.
    for (let i = 0; i < 5 && store.calls.length > i; i++) {
      store.calls[i]!.resolve(empty);
      await settled();
    }
    expect(store.asks.map((a) => a.want)).toEqual([]);
    expect(d).toBeUndefined();
  });

  it('a live slice admits it; behind waiters it goes to Redis', async () => {
    const { later, admit, store } = setup();
    const a = later(req(1, 10));
    expect(admit(req(0, 0))).toBeUndefined();
    store.calls[0]!.resolve(grant(7, [1, 10]));
    await a;
    expect(admit(req(0, 0))).toMatchObject({ allowed: true });
    expect(store.calls).toHaveLength(1);
  });
});
