import { Injectable } from '@nestjs/common';
import { NatsConnectionService, type AdminNatsState } from '../control';

export interface AdminReadiness {
  readonly ready: boolean;
  readonly nats: AdminNatsState;
  /** Why NATS is not connected (credentials refused, TLS, unreachable). */
  readonly natsError?: string;
}

/**
 * Liveness: the process is up and serving HTTP. Readiness: NATS is connected when configured
 * (without it, changes are stored but reach no limiter).
 */
@Injectable()
export class HealthService {
  constructor(private readonly nats: NatsConnectionService) {}

  liveness(): string {
    return 'OK';
  }

  readiness(): AdminReadiness {
    const nats = this.nats.state;
    const error = this.nats.lastError;
    return {
      ready: nats === 'disabled' || nats === 'connected',
      nats,
      ...(error !== undefined && nats !== 'connected' && { natsError: error }),
    };
  }
}
