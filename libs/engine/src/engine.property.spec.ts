import fc from 'fast-check';
import {
  compileQuota,
  Engine,
  PendingAcquire,
  type AcquireInput,
  type AlgorithmName,
  type Decision,
  type KeyStats,
  type LimitSpec,
  type QuotaSpec,
} from './index';
import { brokenBound, limitArb } from './limit-arbitraries.test-util';

// Properties of the engine on a virtual clock: `now` is a plain number that only the test moves.
const T0 = 1_800_000_000_000;
const RECEIPT_TTL_MS = 600_000;
const IDEMPOTENCY_TTL_MS = 60_000;

// ---------------------------------------------------------------------------------- generators

/** One quota named `q`: a requests limit and maybe a tokens limit, of any algorithms. */
function quotaArb(
  options: {
    algorithm?: AlgorithmName;
    queue?: boolean;
    concurrency?: boolean;
    minWaitMs?: number;
  } = {},
) {
  return fc
    .record({
      requests: limitArb('rps', 'requests', options.algorithm),
      tokens: fc.option(limitArb('tps', 'tokens', options.algorithm), { nil: undefined }),
      queue: options.queue
        ? fc.record({
            maxSize: fc.integer({ min: 1, max: 4 }),
            maxWaitMs: fc.integer({ min: options.minWaitMs ?? 1, max: 5000 }),
          })
        : fc.constant(undefined),
      concurrency: options.concurrency
        ? fc.option(
            fc.record({
              max: fc.integer({ min: 1, max: 3 }),
              leaseTtlMs: fc.integer({ min: 1, max: 2000 }),
            }),
            {
              nil: undefined,
            },
          )
        : fc.constant(undefined),
    })
    .map(({ requests, tokens, queue, concurrency }): QuotaSpec => ({
      name: 'q',
      limits: tokens === undefined ? [requests] : [requests, tokens],
      ...(queue === undefined ? {} : { queue }),
      ...(concurrency === undefined ? {} : { concurrency }),
    }));
}

/** true with probability weight / (weight + 1). */
const mostly = (weight: number) =>
  fc.oneof({ arbitrary: fc.constant(true), weight }, { arbitrary: fc.constant(false), weight: 1 });

/** Mostly small steps, so windows fill up, sometimes long ones, so they reset. */
const dtArb = fc.oneof(
  fc.constant(0),
  fc.integer({ min: 0, max: 40 }),
  fc.integer({ min: 0, max: 1600 }),
);
/** Short steps: queues build up. */
const shortDtArb = fc.oneof(
  fc.constant(0),
  fc.integer({ min: 0, max: 20 }),
  fc.integer({ min: 0, max: 300 }),
);

interface AcquireOp {
  readonly kind: 'acquire';
  readonly dt: number;
  readonly key: number;
  readonly requests: number;
  readonly tokens: number;
  readonly wait: boolean;
  /** Whether the host calls advance at every wake-up before this step (false: it runs late). */
  readonly advance: boolean;
}
interface PickOp {
  readonly kind: 'release' | 'cancel';
  readonly dt: number;
  /** Which earlier admission (release) or waiter (cancel), modulo how many there are. */
  readonly pick: number;
}
type Op = AcquireOp | PickOp;

function acquireOpArb(
  keys: number,
  wait: fc.Arbitrary<boolean>,
  dt: fc.Arbitrary<number>,
  minRequests = 0,
): fc.Arbitrary<AcquireOp> {
  return fc.record({
    kind: fc.constant('acquire' as const),
    dt,
    key: fc.integer({ min: 0, max: keys - 1 }),
    requests: fc.integer({ min: minRequests, max: 5 }),
    tokens: fc.integer({ min: 0, max: 5 }),
    wait,
    advance: mostly(4),
  });
}

function opsArb(options: {
  keys: number;
  wait: boolean;
  release: boolean;
  cancel: boolean;
  max: number;
  dt?: fc.Arbitrary<number>;
  /** Every acquire costs at least this many requests. */
  minRequests?: number;
}) {
  const dt = options.dt ?? dtArb;
  const acquire = acquireOpArb(
    options.keys,
    options.wait ? fc.boolean() : fc.constant(false),
    dt,
    options.minRequests,
  );
  const pick = (kind: 'release' | 'cancel') =>
    fc.record({ kind: fc.constant(kind), dt, pick: fc.nat() }) as fc.Arbitrary<Op>;
  const arbs: fc.Arbitrary<Op>[] = [acquire, acquire, acquire];
  if (options.release) arbs.push(pick('release'));
  if (options.cancel) arbs.push(pick('cancel'));
  return fc.array(fc.oneof(...arbs), { minLength: 1, maxLength: options.max, size: 'max' });
}

// ---------------------------------------------------------------------------------- simulation

interface Admission {
  readonly seq: number;
  readonly key: string;
  readonly at: number;
  readonly requests: number;
  readonly tokens: number;
  readonly requestId: string;
}
interface Release {
  readonly seq: number;
  readonly at: number;
  readonly admission: Admission;
}
interface Waiting {
  readonly pending: PendingAcquire;
  readonly key: string;
  readonly enqueuedAt: number;
  readonly op: AcquireOp;
}

/**
 * What a host does: advance at every wake-up up to `t`, then to `t`. A host that ran late
 * (wake-ups before `from`, the last time it told the engine) advances at `from`: time never
 * goes backwards here.
 */
function runUntil(engine: Engine, t: number, from = -Infinity): void {
  for (let at = engine.nextWakeAt(); at <= t; at = engine.nextWakeAt()) {
    engine.advance(Math.max(at, from));
  }
  engine.advance(t);
}

/**
 * Runs ops against quota `q` and records every admission (direct, or of a waiter when it is
 * settled), every successful release, and every FIFO violation as it happens.
 */
class Simulation {
  now = T0;
  seq = 0;
  readonly admissions: Admission[] = [];
  readonly releases: Release[] = [];
  readonly waiters: Waiting[] = [];
  readonly fifoViolations: string[] = [];

  constructor(readonly engine: Engine) {}

  run(ops: readonly Op[]): this {
    for (const op of ops) this.step(op);
    return this;
  }

  /** Lets every waiter finish: timeouts are bounded by the queue's maxWaitMs. */
  settle(): this {
    const from = this.now;
    this.now += 10_000;
    runUntil(this.engine, this.now, from);
    return this;
  }

  private step(op: Op): void {
    const from = this.now;
    this.now += op.dt;
    if (op.kind !== 'acquire' || op.advance) runUntil(this.engine, this.now, from);
    switch (op.kind) {
      case 'acquire':
        return this.acquire(op);
      case 'release': {
        const a = this.admissions[op.pick % Math.max(1, this.admissions.length)];
        if (a === undefined) return;
        // The release comes first: waiters it lets in are recorded while it runs.
        const seq = this.seq++;
        const out = this.engine.release(
          { key: a.key, quota: 'q', requestId: a.requestId },
          this.now,
        );
        if (out.ok && out.value) this.releases.push({ seq, at: this.now, admission: a });
        return;
      }
      case 'cancel': {
        const w = this.waiters[op.pick % Math.max(1, this.waiters.length)];
        w?.pending.cancel(this.now);
        return;
      }
    }
  }

  private acquire(op: AcquireOp): void {
    const key = `k${op.key}`;
    const cost = { requests: op.requests, tokens: op.tokens };
    const r = this.engine.acquire({ key, quota: 'q', cost, wait: op.wait }, this.now);
    if (r instanceof PendingAcquire) {
      const w: Waiting = { pending: r, key, enqueuedAt: this.now, op };
      this.waiters.push(w);
      const settle = r.settle.bind(r);
      r.settle = (d: Decision) => {
        if (r.settled === undefined && d.allowed) this.admitWaiter(w, d);
        settle(d);
      };
    } else if (r.allowed) {
      if (this.waiters.some((w) => w.key === key && w.pending.settled === undefined)) {
        this.fifoViolations.push(
          `${key}: a plain request was admitted at ${this.now} while a waiter waited`,
        );
      }
      this.record(key, this.now, op, r.requestId);
    }
  }

  private admitWaiter(w: Waiting, d: Decision): void {
    const i = this.waiters.indexOf(w);
    const ahead = this.waiters
      .slice(0, i)
      .filter((x) => x.key === w.key && x.pending.settled === undefined);
    if (ahead.length > 0) {
      this.fifoViolations.push(`${w.key}: waiter ${i} overtook ${ahead.length} earlier ones`);
    }
    this.record(w.key, w.enqueuedAt + d.waitedMs, w.op, d.requestId);
  }

  private record(key: string, at: number, op: AcquireOp, requestId: string): void {
    this.admissions.push({
      seq: this.seq++,
      key,
      at,
      requests: op.requests,
      tokens: op.tokens,
      requestId,
    });
  }
}

function costIn(a: Admission, unit: string): number {
  return unit === 'tokens' ? a.tokens : a.requests;
}

/** The first way the admissions of one key break `limit`, or undefined. */
function overAdmission(limit: LimitSpec, admissions: readonly Admission[]): string | undefined {
  const list = admissions.map((a) => ({ at: a.at, cost: costIn(a, limit.unit) }));
  return brokenBound(limit, list, T0);
}

function byKey(admissions: readonly Admission[]): Admission[][] {
  const groups = new Map<string, Admission[]>();
  for (const a of admissions) groups.set(a.key, [...(groups.get(a.key) ?? []), a]);
  return [...groups.values()];
}

/**
 * What an exact sliding window counts at `now`: the cost admitted in (now - windowMs, now] that
 * was not released by then (a release after the cost left gives nothing back, and needs none).
 */
function countedAt(
  limit: LimitSpec,
  sim: Simulation,
  key: string,
  now: number,
): { counted: number; admissions: string } {
  const released = new Set(
    sim.releases.filter((r) => r.at <= now).map((r) => r.admission.requestId),
  );
  const live = sim.admissions.filter(
    (a) =>
      a.key === key &&
      a.at <= now &&
      a.at + limit.windowMs > now &&
      !released.has(a.requestId) &&
      costIn(a, limit.unit) > 0,
  );
  return {
    counted: live.reduce((n, a) => n + costIn(a, limit.unit), 0),
    admissions: live.map((a) => `${costIn(a, limit.unit)}@${a.at - T0}`).join(' '),
  };
}

/** The limits of `quota` that keep an exact log (compile.ts decides). */
function loggedLimits(quota: QuotaSpec): LimitSpec[] {
  const compiled = compileQuota(quota).limits;
  return quota.limits.filter((l) => compiled.find((c) => c.name === l.name)?.logSize);
}

function stats(engine: Engine, key: string, now: number): KeyStats {
  const out = engine.stats({ key, quota: 'q' }, now);
  if (!out.ok) throw new Error(out.reason);
  return out.value;
}

// ---------------------------------------------------------------------------------- properties

describe('Engine properties', () => {
  it('never admits more than a limit allows (waiters included, no releases)', () => {
    fc.assert(
      fc.property(
        quotaArb({ queue: true }),
        opsArb({ keys: 2, wait: true, release: false, cancel: true, max: 40 }),
        (quota, ops) => {
          const sim = new Simulation(new Engine([quota], { shards: 2 })).run(ops).settle();
          for (const admissions of byKey(sim.admissions)) {
            for (const limit of quota.limits) {
              expect(overAdmission(limit, admissions)).toBeUndefined();
            }
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('sliding_window as a log counts exactly the cost of the last windowMs, not one ms more', () => {
    let logged = 0;
    fc.assert(
      fc.property(
        quotaArb({ algorithm: 'sliding_window', queue: true }),
        // Every request costs a request: a log of (instant, cost) under an rpm then never fills.
        opsArb({ keys: 2, wait: true, release: true, cancel: true, max: 40, minRequests: 1 }),
        (quota, ops) => {
          const limits = loggedLimits(quota);
          if (limits.length > 0) logged++;
          const sim = new Simulation(new Engine([quota], { shards: 2 }));
          for (const op of ops) {
            sim.run([op]);
            for (const key of ['k0', 'k1']) {
              const held = stats(sim.engine, key, sim.now).limits;
              for (const limit of limits) {
                const { counted, admissions } = countedAt(limit, sim, key, sim.now);
                const used = held.find((l) => l.name === limit.name)?.used ?? 0;
                expect({ at: sim.now - T0, limit: limit.name, used, admissions }).toEqual({
                  at: sim.now - T0,
                  limit: limit.name,
                  used: counted,
                  admissions,
                });
              }
            }
          }
        },
      ),
      { numRuns: 1000 },
    );
    expect(logged).toBeGreaterThan(500);
  });

  it('a sliding limit changing regime or precision over its window never frees capacity', () => {
    // Limits on both sides of the log's 64: a change moves a key between sub-buckets and a log.
    const size = fc.oneof(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 65, max: 70 }));
    const version = fc.record({
      requests: size,
      tokens: fc.option(fc.integer({ min: 1, max: 80 }), { nil: undefined }),
      precision: fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(
        fc.constantFrom(7, 250, 1000),
        version,
        version,
        opsArb({ keys: 2, wait: false, release: false, cancel: false, max: 40 }),
        opsArb({ keys: 2, wait: false, release: false, cancel: false, max: 40 }),
        (windowMs, before, after, ops, later) => {
          const spec = (v: typeof before): QuotaSpec => {
            const l = (name: string, unit: string, limit: number): LimitSpec => ({
              name,
              unit,
              limit,
              windowMs,
              algorithm: 'sliding_window',
              ...(v.precision === undefined ? {} : { precision: v.precision }),
            });
            return {
              name: 'q',
              limits: [
                l('rps', 'requests', v.requests),
                ...(v.tokens === undefined ? [] : [l('tps', 'tokens', v.tokens)]),
              ],
            };
          };
          const sim = new Simulation(new Engine([spec(before)], { shards: 2 })).run(ops);
          const q = spec(after);
          sim.engine.setQuotas([q], sim.now);
          const changed = sim.seq;
          sim.run(later);
          // Every admission after the change fits the new limit with all that the window holds,
          // admitted before the change or after it (a limit new in the change starts empty).
          const kept = q.limits.filter((l) => spec(before).limits.some((b) => b.name === l.name));
          for (const admissions of byKey(sim.admissions)) {
            for (const limit of kept) {
              const list = admissions.filter((a) => costIn(a, limit.unit) > 0);
              for (const b of list.filter((a) => a.seq >= changed)) {
                const inWindow = list.filter((a) => a.at > b.at - windowMs && a.at <= b.at);
                const sum = inWindow.reduce((n, a) => n + costIn(a, limit.unit), 0);
                if (sum > limit.limit) {
                  throw new Error(`${limit.name} at ${b.at - T0}: ${sum} > ${limit.limit}`);
                }
              }
            }
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('fixed_window: admitted minus released cost never exceeds the limit in a window', () => {
    fc.assert(
      fc.property(
        quotaArb({ algorithm: 'fixed_window', queue: true }),
        opsArb({ keys: 2, wait: true, release: true, cancel: false, max: 40 }),
        (quota, ops) => {
          const sim = new Simulation(new Engine([quota], { shards: 2 })).run(ops).settle();
          // Replay admissions and releases in the order they happened. A release gives the cost
          // back only when it falls in the window of the admission (GoCC).
          const events: (Admission & { chargedAt?: number })[] = [
            ...sim.admissions,
            ...sim.releases.map((r) => ({
              ...r.admission,
              seq: r.seq,
              at: r.at,
              chargedAt: r.admission.at,
            })),
          ].sort((x, y) => x.seq - y.seq);
          for (const limit of quota.limits) {
            const w = limit.windowMs;
            const windowOf = (t: number) => t - (t % w);
            const net = new Map<string, number>();
            for (const e of events) {
              const cost = costIn(e, limit.unit);
              const window = `${e.key}@${windowOf(e.at)}`;
              if (e.chargedAt === undefined) {
                net.set(window, (net.get(window) ?? 0) + cost);
                expect(net.get(window)).toBeLessThanOrEqual(limit.limit);
              } else if (windowOf(e.chargedAt) === windowOf(e.at)) {
                net.set(window, (net.get(window) ?? 0) - cost);
              }
            }
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('admits waiters in strict FIFO order per key, and nobody overtakes them', () => {
    fc.assert(
      fc.property(
        quotaArb({ queue: true, concurrency: true, minWaitMs: 500 }),
        opsArb({ keys: 2, wait: true, release: true, cancel: true, max: 50, dt: shortDtArb }),
        (quota, ops) => {
          const sim = new Simulation(new Engine([quota], { shards: 2 })).run(ops).settle();
          expect(sim.fifoViolations).toEqual([]);
          // Waiters admitted per key, in admission order, are in enqueue order.
          for (const key of ['k0', 'k1']) {
            const order = sim.admissions
              .filter((a) => a.key === key)
              .map((a) =>
                sim.waiters.findIndex(
                  (w) => w.pending.settled?.requestId === a.requestId && w.key === key,
                ),
              )
              .filter((i) => i >= 0);
            expect(order).toEqual([...order].sort((x, y) => x - y));
          }
          expect(sim.waiters.every((w) => w.pending.settled !== undefined)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('charges nothing for a refused request', () => {
    const requestArb = fc.record({
      dt: dtArb,
      key: fc.integer({ min: 0, max: 2 }),
      requests: fc.integer({ min: 0, max: 9 }),
      tokens: fc.integer({ min: 0, max: 9 }),
      wait: fc.boolean(),
      pastDeadline: mostly(8).map((b) => !b),
    });
    fc.assert(
      fc.property(
        quotaArb({ queue: true, concurrency: true }),
        fc.array(requestArb, { minLength: 1, maxLength: 40, size: 'max' }),
        (quota, requests) => {
          const engine = new Engine([quota], { shards: 2 });
          let now = T0;
          for (const r of requests) {
            now += r.dt;
            runUntil(engine, now);
            const key = `k${r.key}`;
            const before = stats(engine, key, now);
            const waiters = engine.footprint().waiters;
            const input: AcquireInput = {
              key,
              quota: 'q',
              cost: { requests: r.requests, tokens: r.tokens },
              wait: r.wait,
              ...(r.pastDeadline ? { deadline: now - 1 } : {}),
            };
            const d = engine.acquire(input, now);
            if (d instanceof PendingAcquire || d.allowed) continue;
            const after = stats(engine, key, now);
            expect({ ...after, denied: 0 }).toEqual({ ...before, denied: 0 });
            expect(after.denied - before.denied).toBeLessThanOrEqual(1);
            expect(engine.footprint().waiters).toBe(waiters);
          }
        },
      ),
      { numRuns: 800 },
    );
  });

  it.each([
    ['any algorithm', undefined],
    // Mostly logs (limits of 1..8): exact, so the instant the oldest needed cost leaves.
    ['sliding_window', 'sliding_window' as const],
  ])('retryAfterMs is honest (%s): refused at t + r - 1, admitted at t + r', (_name, algorithm) => {
    const historyArb = fc.array(
      fc.record({
        dt: shortDtArb,
        requests: fc.integer({ min: 0, max: 4 }),
        tokens: fc.integer({ min: 0, max: 4 }),
      }),
      { maxLength: 15, size: 'max' },
    );
    let honest = 0;
    let runs = 0;
    fc.assert(
      fc.property(
        quotaArb({ algorithm }),
        historyArb,
        fc.integer({ min: 0, max: 2999 }),
        fc.record({
          requests: fc.integer({ min: 1, max: 4 }),
          tokens: fc.integer({ min: 0, max: 4 }),
        }),
        (quota, history, offset, probe) => {
          runs++;
          // Replays the same history into a fresh engine, ending with the refused probe at t.
          const replay = (): [Engine, number, Decision | PendingAcquire] => {
            const engine = new Engine([quota], { shards: 1 });
            let now = T0 + offset;
            for (const h of history) {
              now += h.dt;
              engine.acquire(
                { key: 'k', quota: 'q', cost: { requests: h.requests, tokens: h.tokens } },
                now,
              );
            }
            return [engine, now, engine.acquire({ key: 'k', quota: 'q', cost: probe }, now)];
          };
          const [, t, first] = replay();
          if (first instanceof PendingAcquire || first.code !== 'RATE_LIMITED') return;
          honest++;
          const r = first.retryAfterMs;
          expect(r).toBeGreaterThanOrEqual(1);
          const [early] = replay();
          expect(early.acquire({ key: 'k', quota: 'q', cost: probe }, t + r - 1)).toMatchObject({
            allowed: false,
            code: 'RATE_LIMITED',
          });
          const [onTime] = replay();
          expect(onTime.acquire({ key: 'k', quota: 'q', cost: probe }, t + r)).toMatchObject({
            allowed: true,
            code: 'OK',
          });
        },
      ),
      { numRuns: 1500 },
    );
    // Most cases must actually test a refusal.
    expect(honest / runs).toBeGreaterThan(0.3);
  });

  it('decide answers as acquire would and leaves no trace', () => {
    fc.assert(
      fc.property(
        quotaArb({ queue: true, concurrency: true }),
        opsArb({ keys: 2, wait: true, release: true, cancel: true, max: 30 }),
        fc.record({ key: fc.integer({ min: 0, max: 1 }), requests: fc.nat(5), tokens: fc.nat(5) }),
        (quota, ops, probe) => {
          const sim = new Simulation(new Engine([quota], { shards: 2 })).run(ops);
          const { engine, now } = sim;
          const input = {
            key: `k${probe.key}`,
            quota: 'q',
            cost: { requests: probe.requests, tokens: probe.tokens },
          };
          const footprint = engine.footprint();
          const before = stats(engine, input.key, now);
          const decided = engine.decide(input, now);
          expect(engine.footprint()).toEqual(footprint);
          expect(stats(engine, input.key, now)).toEqual(before);
          const acquired = engine.acquire(input, now) as Decision;
          const fields = [
            'allowed',
            'code',
            'limit',
            'remaining',
            'resetMs',
            'retryAfterMs',
            'limitName',
          ] as const;
          const pick = (d: Decision) => Object.fromEntries(fields.map((f) => [f, d[f]]));
          expect(pick(decided)).toEqual(pick(acquired));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('memory returns to its baseline once every key went idle', () => {
    const quotasArb = fc.tuple(
      quotaArb({ queue: true, concurrency: true }),
      quotaArb({ concurrency: true }),
      quotaArb({ queue: true }),
    );
    const actionArb = fc.record({
      dt: dtArb,
      quota: fc.integer({ min: 0, max: 2 }),
      key: fc.integer({ min: 0, max: 49 }),
      kind: fc.constantFrom(
        'acquire',
        'acquire',
        'wait',
        'release',
        'usage',
        'settle',
        'cancel',
        'decide',
        'stats',
      ),
      clientId: fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined }),
      requests: fc.nat(4),
      tokens: fc.nat(6),
      pick: fc.nat(),
    });
    fc.assert(
      fc.property(
        quotasArb,
        fc.array(actionArb, { minLength: 1, maxLength: 80, size: 'max' }),
        (specs, actions) => {
          const quotas = specs.map((q, i) => ({ ...q, name: `q${i}` }));
          const engine = new Engine(quotas, { shards: 4 });
          const admitted: { key: string; quota: string; requestId: string; leaseId?: string }[] =
            [];
          const waiters: PendingAcquire[] = [];
          let now = T0;
          for (const a of actions) {
            now += a.dt;
            runUntil(engine, now);
            const key = `key-${a.key}`;
            const quota = `q${a.quota}`;
            const cost = { requests: a.requests, tokens: a.tokens };
            const requestId = a.clientId === undefined ? undefined : `id-${a.clientId}`;
            const earlier = admitted[a.pick % Math.max(1, admitted.length)];
            switch (a.kind) {
              case 'acquire':
              case 'wait': {
                const r = engine.acquire(
                  { key, quota, cost, requestId, wait: a.kind === 'wait' },
                  now,
                );
                if (r instanceof PendingAcquire) waiters.push(r);
                else if (r.allowed)
                  admitted.push({ key, quota, requestId: r.requestId, leaseId: r.leaseId });
                break;
              }
              case 'release':
                // By requestId, or by leaseId alone.
                if (earlier !== undefined) {
                  const requestId = a.pick % 2 === 0 ? earlier.requestId : undefined;
                  engine.release({ ...earlier, requestId }, now);
                }
                break;
              case 'usage':
                engine.usage({ key, quota, cost }, now);
                break;
              case 'settle':
                if (earlier !== undefined) engine.usage({ ...earlier, cost }, now);
                break;
              case 'cancel':
                waiters[a.pick % Math.max(1, waiters.length)]?.cancel(now);
                break;
              case 'decide':
                engine.decide({ key, quota, cost }, now);
                break;
              case 'stats':
                engine.stats({ key, quota }, now);
                break;
            }
          }
          // Idle: run every wake-up, then past the receipt TTL and the idempotency window.
          let wakes = 0;
          for (
            let at = engine.nextWakeAt();
            at < Infinity && wakes < 100_000;
            at = engine.nextWakeAt(), wakes++
          ) {
            engine.advance(at);
            now = Math.max(now, at);
          }
          engine.advance(now + RECEIPT_TTL_MS + IDEMPOTENCY_TTL_MS);
          expect(engine.footprint()).toEqual({
            keys: 0,
            timers: 0,
            receipts: 0,
            remembered: 0,
            waiters: 0,
          });
          expect(engine.nextWakeAt()).toBe(Infinity);
          expect(waiters.every((w) => w.settled !== undefined)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  describe('robustness: garbage never throws and charges nothing', () => {
    const isAmount = (n: unknown) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
    const isValidCost = (c: unknown) =>
      c === undefined ||
      isAmount(c) ||
      (typeof c === 'object' &&
        c !== null &&
        !Array.isArray(c) &&
        Object.values(c).every(isAmount));
    const garbageKey = fc.anything().filter((k) => typeof k !== 'string' || k.length === 0);
    const garbageCost = fc.anything().filter((c) => !isValidCost(c));
    const garbageQuota = fc
      .anything()
      .filter((q) => q !== undefined && q !== 'default' && q !== 'q');
    const field = <T>(valid: fc.Arbitrary<T>, garbage: fc.Arbitrary<unknown>) =>
      fc.oneof(
        valid.map((value) => ({ garbage: false, value }) as const),
        garbage.map((value) => ({ garbage: true, value })),
      );

    const ops = ['acquire', 'decide', 'release', 'usage', 'stats'] as const;
    const quotas: QuotaSpec[] = [
      {
        name: 'default',
        limits: [
          { name: 'rps', unit: 'requests', limit: 5, windowMs: 1000, algorithm: 'fixed_window' },
        ],
        queue: { maxSize: 2, maxWaitMs: 1000 },
      },
      {
        name: 'q',
        match: 'q-*',
        limits: [
          { name: 'tps', unit: 'tokens', limit: 5, windowMs: 1000, algorithm: 'token_bucket' },
        ],
        concurrency: { max: 1, leaseTtlMs: 1000 },
      },
    ];

    it('answers INVALID_REQUEST or UNKNOWN_QUOTA', () => {
      fc.assert(
        fc.property(
          fc.constantFrom(...ops),
          field(fc.constantFrom('k', 'q-1'), garbageKey),
          field(fc.constantFrom(undefined, 'default', 'q'), garbageQuota),
          field(fc.constantFrom(undefined, 1, { tokens: 2 }), garbageCost),
          fc.boolean(),
          (op, key, quota, cost, wait) => {
            const engine = new Engine(quotas, { shards: 2 });
            engine.acquire({ key: 'k', requestId: 'r' }, T0);
            engine.acquire({ key: 'q-1', requestId: 'r' }, T0);
            const footprint = engine.footprint();
            const probe = () => [engine.stats({ key: 'k' }, T0), engine.stats({ key: 'q-1' }, T0)];
            const before = probe();
            const input = {
              key: key.value,
              quota: quota.value,
              cost: cost.value,
              wait,
              requestId: 'r',
            } as never;
            const usesCost = op === 'acquire' || op === 'decide' || op === 'usage';
            // A quota that is not a non-empty string is malformed; a well-formed unknown name is not.
            const quotaMalformed =
              quota.garbage && !(typeof quota.value === 'string' && quota.value.length > 0);
            const expected =
              key.garbage || (usesCost && cost.garbage) || quotaMalformed
                ? 'INVALID_REQUEST'
                : quota.garbage
                  ? 'UNKNOWN_QUOTA'
                  : undefined;
            fc.pre(expected !== undefined);

            let answer: { code?: string; reason?: string; allowed?: boolean; ok?: boolean };
            switch (op) {
              case 'acquire':
              case 'decide':
                answer = engine[op](input, T0 + 1) as Decision;
                expect(answer.allowed).toBe(false);
                break;
              case 'release':
              case 'usage':
              case 'stats':
                answer = engine[op](input, T0 + 1);
                expect(answer.ok).toBe(false);
                break;
            }
            expect(answer.code).toBe(expected);
            expect(answer.reason).toMatch(
              expected === 'INVALID_REQUEST' ? /^(key|cost|quota)\b/ : /^quota: /,
            );
            expect(engine.footprint()).toEqual(footprint);
            expect(probe()).toEqual(before);
          },
        ),
        { numRuns: 2000 },
      );
    });
  });
});
