/**
 * What an engine keeps for client requestIds: 1 000 000 acquires over 10 000 keys, each parsed
 * from a JSON body as a host parses it, with a new requestId shaped as the SDK makes them, or with
 * none. Virtual time runs at 50 000 requests/s, so every id is inside the 60 s idempotency window
 * when the run ends. Measured in a fresh process (--expose-gc), after two full collections.
 */
import { Engine, type QuotaSpec } from '../../libs/engine/src';

export interface IdMemory {
  /** process.memoryUsage() after the run: RSS, V8 heap used, typed arrays (bytes). */
  readonly rss: number;
  readonly heap: number;
  readonly arrayBuffers: number;
  /** Ids the engine remembers after the run. */
  readonly remembered: number;
  /** The same, 11 virtual minutes later (answers and receipts expired). */
  readonly laterHeap: number;
  readonly laterRemembered: number;
}

export const ID_ACQUIRES = 1_000_000;
const KEYS = 10_000;
const spec: QuotaSpec = {
  name: 'default',
  limits: [
    { name: 'rps', unit: 'requests', limit: 1e9, windowMs: 1000, algorithm: 'fixed_window' },
  ],
};

export function idMemory(withIds: boolean, count: number): IdMemory {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  const engine = new Engine([spec], { shards: 25 });
  // As the SDK's RequestIdGenerator: a random base64url prefix, then a counter in base 36.
  const prefix = 'q3Z0dGVzdC1wcmVmaXgtMTIzNA-';
  let now = Date.UTC(2026, 10, 21);
  for (let i = 0; i < count; i++) {
    const body = withIds
      ? `{"key":"user-${i % KEYS}","requestId":"${prefix}${i.toString(36)}"}`
      : `{"key":"user-${i % KEYS}"}`;
    engine.acquire(JSON.parse(body) as { key: string }, now);
    if (i % 1000 === 999) {
      now += 20;
      engine.advance(now);
    }
  }
  gc();
  gc();
  const after = process.memoryUsage();
  const remembered = engine.footprint().remembered;
  engine.advance(now + 11 * 60_000);
  gc();
  gc();
  return {
    rss: after.rss,
    heap: after.heapUsed,
    arrayBuffers: after.arrayBuffers,
    remembered,
    laterHeap: process.memoryUsage().heapUsed,
    laterRemembered: engine.footprint().remembered,
  };
}
