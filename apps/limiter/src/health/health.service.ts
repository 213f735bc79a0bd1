import { Injectable } from '@nestjs/common';

/** Liveness: the process is up and serving HTTP. Readiness (/readyz) will live beside it. */
@Injectable()
export class HealthService {
  liveness(): string {
    return 'OK';
  }
}
