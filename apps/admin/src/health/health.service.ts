import { Injectable } from '@nestjs/common';

/** Liveness: the process is up and serving HTTP. */
@Injectable()
export class HealthService {
  liveness(): string {
    return 'OK';
  }
}
