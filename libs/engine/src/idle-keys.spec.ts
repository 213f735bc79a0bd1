import { Engine, PendingAcquire, type KeyStats, type QuotaSpec } from './index';

// GoCC keeps an idle instance for 3 windows; the engine drops a key as soon as its state equals a
// fresh key's (docs/contract.md, GoCC's routes). This shows that, for a GoCC quota, dropping at
// once answers exactly what keeping it would: after 1 or 2 idle windows the key reads as new.
const T0 = 1_800_000_000_000;
const WINDOW_MS = 1_000;
const SWEEP_MS = 100;
const GOCC_LIKE: QuotaSpec = {
  name: 'default',
  limits: [
    { name: 'rps', unit: 'requests', limit: 3, windowMs: WINDOW_MS, algorithm: 'fixed_window' },
  ],
  queue: { maxSize: 2, maxWaitMs: 10_000 },
};

/** The key's stats without its name, so two keys' states compare equal. */
function statsOf(engine: Engine, key: string, now: number): KeyStats {
  const out = engine.stats({ key }, now);
  if (!out.ok) throw new Error(`stats refused: ${out.code}`);
  return { ...out.value, key: '' };
}

function runUntil(engine: Engine, t: number): void {
  for (let at = engine.nextWakeAt(); at <= t; at = engine.nextWakeAt()) engine.advance(at);
  engine.advance(t);
}

describe('idle keys of a GoCC quota', () => {
  it.each([1, 2])('read as a fresh key after %i idle window(s), and are dropped', (windows) => {
    const engine = new Engine([GOCC_LIKE], { idPrefix: 't', idleSweepMs: SWEEP_MS });
    for (let i = 0; i < 4; i++) {
      const answer = engine.acquire({ key: 'used', cost: { requests: 1 } }, T0);
      expect(answer instanceof PendingAcquire).toBe(false);
    }
    expect(statsOf(engine, 'used', T0)).toMatchObject({ approved: 3, denied: 1 });

    // Memory returns within one sweep interval of the key going idle.
    const later = T0 + windows * WINDOW_MS + SWEEP_MS;
    runUntil(engine, later);

    expect(engine.footprint().keys).toBe(0);
    expect(statsOf(engine, 'used', later)).toEqual(statsOf(engine, 'never-used', later));
    const again = engine.acquire({ key: 'used', cost: { requests: 1 } }, later);
    expect(again).toMatchObject({ allowed: true });
    expect(statsOf(engine, 'used', later).limits[0]).toMatchObject({ used: 1, remaining: 2 });
  });
});
