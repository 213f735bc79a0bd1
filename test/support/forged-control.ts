/** What a NATS client without the control keys sends in the tests and benches of signed control. */
import type { ControlQuota, StatsReport } from '@app/contracts';

/** A quota entry as the admin writes one, `name-*`, with a limit of a million a minute. */
export function forgedQuota(name: string): ControlQuota {
  return {
    spec: {
      name,
      match: `${name}-*`,
      limits: [
        {
          name: 'rpm',
          unit: 'requests',
          limit: 1_000_000,
          windowMs: 60_000,
          algorithm: 'fixed_window',
        },
      ],
    },
    version: 99,
    updatedAt: Date.now(),
  };
}

/** A stats report of `quotas` quotas (`quota-<i>`) from `replica`, as a limiter sends one. */
export function statsReport(replica: string, quotas: number): StatsReport {
  return {
    replica,
    at: Date.now(),
    quotas: Array.from({ length: quotas }, (_, i) => ({
      quota: `quota-${i}`,
      approved: i,
      denied: 0,
      queued: 0,
      activeKeys: 1,
      scope: 'local' as const,
    })),
  };
}
