import { Injectable } from '@nestjs/common';

export type NatsState = 'disabled' | 'connecting' | 'subscribed' | 'disconnected' | 'closed';

/**
 * Where the admin's control set in force comes from: `synced` (watching the KV bucket), `cached`
 * (the copy kept under DATA_DIR, or the last one seen before NATS went away), `none` (no control
 * set known: the limiter's own config alone). Undefined without NATS: there is no control plane.
 */
export type ControlState = 'synced' | 'cached' | 'none';

/**
 * What /readyz reports (docs/contract.md, HTTP: ready once config is loaded and NATS is subscribed,
 * when NATS is configured). The config loader, the NATS transport and the control plane set it;
 * nobody else writes.
 */
@Injectable()
export class ReadinessService {
  configLoaded = false;
  nats: NatsState = 'disabled';
  /** Why NATS is not subscribed: the last failure (credentials refused, TLS, unreachable). */
  natsError: string | undefined;
  /** Last config problem, shown by /readyz (the last good config stays in force). */
  configError: string | undefined;
  /** Informational: the limiter serves with or without the admin's set (see ControlState). */
  control: ControlState | undefined;
  /** Last control set refused by the engine (the last good one stays in force). */
  controlError: string | undefined;

  isReady(): boolean {
    return this.configLoaded && (this.nats === 'disabled' || this.nats === 'subscribed');
  }

  report(): {
    ready: boolean;
    config: string;
    nats: NatsState;
    natsError?: string;
    configError?: string;
    control?: ControlState;
    controlError?: string;
  } {
    return {
      ready: this.isReady(),
      config: this.configLoaded ? 'loaded' : 'loading',
      nats: this.nats,
      ...(this.natsError !== undefined &&
        this.nats !== 'subscribed' && { natsError: this.natsError }),
      ...(this.configError !== undefined && { configError: this.configError }),
      ...(this.control !== undefined && { control: this.control }),
      ...(this.controlError !== undefined && { controlError: this.controlError }),
    };
  }
}
