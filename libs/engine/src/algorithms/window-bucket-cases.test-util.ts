import type { LimitSpec } from '../types';
import type { SlidingCase } from './sliding-cases.test-util';

/**
 * Tables of instants for fixed_window and token_bucket, in the form of the sliding window's
 * (sliding-cases.test-util.ts), run on the engine (window-bucket-cases.spec.ts) and on the cluster
 * scripts in real Redis (test/sliding-window-lua.e2e-spec.ts): the twins answer alike when the
 * clock steps back, and a bucket owes alike.
 */
const T0 = 1_700_000_000_000; // a multiple of 1000
const HOUR = 3_600_000;

const fixed = (limit: number): LimitSpec => ({
  name: 'l',
  unit: 'requests',
  limit,
  windowMs: 1000,
  algorithm: 'fixed_window',
});
const bucket = (limit: number): LimitSpec => ({ ...fixed(limit), algorithm: 'token_bucket' });

export const WINDOW_AND_BUCKET_CASES: readonly SlidingCase[] = [
  {
    name: 'fixed: a step back within the window changes nothing; before it, the count holds a window from now',
    limits: [fixed(2)],
    steps: [
      ['take', T0 + 500, 2, 0],
      ['take', T0 + 100, 1, 900],
      ['take', T0 - 2000, 1, 1000],
      ['state', T0 - 2000, 2, 1000],
      ['take', T0 - 1001, 1, 1],
      ['take', T0 - 1000, 2, 0],
      ['take', T0 - 999, 1, 999],
    ],
  },
  {
    name: 'fixed: a clock an hour ahead and back locks the key one window, not an hour',
    limits: [fixed(2)],
    steps: [
      ['take', T0 + HOUR + 10, 2, 0],
      ['take', T0 + HOUR + 20, 1, 980],
      ['take', T0 + 5, 1, 1000],
      ['take', T0 + 1004, 1, 1],
      ['take', T0 + 1005, 2, 0],
      ['take', T0 + 1006, 1, 994],
    ],
  },
  {
    name: 'fixed: after a step back, a release gives back what was charged since, not before',
    limits: [fixed(2)],
    steps: [
      ['take', T0 + HOUR, 1, 0],
      ['take', T0 + 10, 1, 0],
      ['refund', T0 + 20, T0 + HOUR, 1],
      ['take', T0 + 20, 1, 990],
      ['refund', T0 + 30, T0 + 10, 1],
      ['take', T0 + 30, 1, 0],
    ],
  },
  {
    name: 'bucket: a clock stepping back refills from the new now: what is owed is owed from then',
    limits: [bucket(10)],
    steps: [
      ['take', T0 + 1000, 10, 0],
      ['take', T0, 1, 100],
      ['take', T0 + 99, 1, 1],
      ['take', T0 + 100, 1, 0],
      ['take', T0 + 100, 1, 100],
    ],
  },
  {
    name: 'bucket: a clock an hour ahead and back: retryAfterMs is the refill, and it holds',
    limits: [bucket(10)],
    steps: [
      ['take', T0 + HOUR, 10, 0],
      ['take', T0 + HOUR, 1, 100],
      ['take', T0, 2, 200],
      ['take', T0 + 199, 2, 1],
      ['take', T0 + 200, 2, 0],
    ],
  },
  {
    name: 'bucket: usage past its tokens owes one burst at most, refilled in two bursts’ time',
    limits: [bucket(10)],
    steps: [
      ['take', T0, 10, 0],
      ['usage', T0, 100],
      ['state', T0, 20, 2000],
      ['take', T0, 1, 1100],
      ['take', T0 + 1099, 1, 1],
      ['take', T0 + 1100, 1, 0],
    ],
  },
];
