import { Injectable } from '@nestjs/common';

export type NatsState = 'disabled' | 'connecting' | 'subscribed' | 'disconnected' | 'closed';

/**
 * What /readyz reports (CONTRACT.md section 4: ready once config is loaded and NATS is subscribed,
 * when NATS is configured). The config loader and the NATS transport set it; nobody else writes.
 */
@Injectable()
export class ReadinessService {
  configLoaded = false;
  nats: NatsState = 'disabled';
  /** Last config problem, shown by /readyz (the last good config stays in force). */
  configError: string | undefined;

  isReady(): boolean {
    return this.configLoaded && (this.nats === 'disabled' || this.nats === 'subscribed');
  }

  report(): { ready: boolean; config: string; nats: NatsState; configError?: string } {
    return {
      ready: this.isReady(),
      config: this.configLoaded ? 'loaded' : 'loading',
      nats: this.nats,
      ...(this.configError !== undefined && { configError: this.configError }),
    };
  }
}
