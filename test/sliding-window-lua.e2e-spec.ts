/**
 * The cluster scripts' sliding_window (lua/sliding_window.lua, lua/sliding_log.lua, lua/adopt.lua)
 * against the same table of instants as the engine's (libs/engine/src/algorithms/
 * sliding-cases.test-util.ts), run in the real Redis with `now` given by each step: the twins
 * cannot drift apart without one of the two failing. fixed_window and token_bucket likewise, on
 * theirs (window-bucket-cases.test-util.ts): clock steps and debt.
 */
import { compileQuota, type LimitSpec } from '@app/engine';
import { Redis } from 'ioredis';
import { join } from 'node:path';
import {
  expected,
  limitUnderTest,
  runOnEngine,
  SLIDING_CASES,
  type SlidingCase,
} from '../libs/engine/src/algorithms/sliding-cases.test-util';
import { WINDOW_AND_BUCKET_CASES } from '../libs/engine/src/algorithms/window-bucket-cases.test-util';
import { scriptAlgorithm, script } from '../apps/limiter/src/cluster/cluster-script';

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const HARNESS_FILE = join(__dirname, 'support', 'algorithm-harness.lua');
const HARNESS = script(['sliding_window'], HARNESS_FILE);
const WINDOW_AND_BUCKET_HARNESS = script(['fixed_window', 'token_bucket'], HARNESS_FILE);

/** The limit under test as the cluster store gives it to the scripts. */
function scriptLimit(limits: readonly LimitSpec[], name: string) {
  const l = limitUnderTest(compileQuota({ name: 'q', limits }), name);
  return {
    algorithm: scriptAlgorithm(l),
    limit: l.limit,
    windowMs: l.windowMs,
    bucketMs: l.bucketMs,
    ringSize: l.ringSize,
    capacity: l.capacity,
    logSize: l.logSize,
    logUnits: l.logUnits,
    layout: l.layoutKey,
  };
}

function harnessInput(c: SlidingCase): string {
  const name = c.limits[0]!.name;
  const steps = c.steps.map((step) => {
    switch (step[0]) {
      case 'take':
      case 'usage':
        return { op: step[0], at: step[1], cost: step[2] };
      case 'refund':
        return { op: step[0], at: step[1], chargedAt: step[2], cost: step[3] };
      case 'state':
        return { op: step[0], at: step[1] };
      case 'change':
        return { op: step[0], at: step[1], limit: scriptLimit(step[2], name) };
    }
  });
  return JSON.stringify({ limit: scriptLimit(c.limits, name), steps });
}

describe('the Lua algorithms, against the engine on one table (real Redis)', () => {
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });

  afterAll(async () => {
    await redis.quit();
  });

  it.each(SLIDING_CASES)('$name', async (c) => {
    const answered = (await redis.eval(HARNESS, 0, harnessInput(c))) as number[][];
    expect(answered).toEqual(expected(c));
    expect(runOnEngine(c)).toEqual(answered);
  });

  it.each(WINDOW_AND_BUCKET_CASES)('$name', async (c) => {
    const input = harnessInput(c);
    const answered = (await redis.eval(WINDOW_AND_BUCKET_HARNESS, 0, input)) as number[][];
    expect(answered).toEqual(expected(c));
    expect(runOnEngine(c)).toEqual(answered);
  });
});
