import { Injectable } from '@nestjs/common';
import { LimiterService } from '../engine-host/limiter.service';
import { ReadinessService } from '../engine-host/readiness.service';

/**
 * `redis`: cluster scope's store; `degraded` answers by onStoreFailure and does not unready.
 * `redisCircuitOpen`: the nodes whose keys are answered by onStoreFailure without asking them.
 */
export type ReadinessReport = ReturnType<ReadinessService['report']> & {
  redis: 'disabled' | 'ready' | 'degraded';
  redisCircuitOpen?: string[];
};

/** Liveness (the process serves HTTP) and readiness (config loaded, NATS subscribed if configured). */
@Injectable()
export class HealthService {
  constructor(
    private readonly readinessFlags: ReadinessService,
    private readonly limiter: LimiterService,
  ) {}

  liveness(): string {
    return 'OK';
  }

  readiness(): ReadinessReport {
    const cluster = this.limiter.cluster;
    const redis = cluster === undefined ? 'disabled' : cluster.degraded ? 'degraded' : 'ready';
    const open = cluster?.openCircuits() ?? [];
    return {
      ...this.readinessFlags.report(),
      redis,
      ...(open.length > 0 && { redisCircuitOpen: open }),
    };
  }
}
