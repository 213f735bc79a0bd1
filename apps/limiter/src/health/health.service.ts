import { Injectable } from '@nestjs/common';
import { ReadinessService } from '../engine-host/readiness.service';

export type ReadinessReport = ReturnType<ReadinessService['report']>;

/** Liveness (the process serves HTTP) and readiness (config loaded, NATS subscribed if configured). */
@Injectable()
export class HealthService {
  constructor(private readonly readinessFlags: ReadinessService) {}

  liveness(): string {
    return 'OK';
  }

  readiness(): ReadinessReport {
    return this.readinessFlags.report();
  }
}
