import { connect, type NatsConnection } from 'nats';
import { DEFAULT_CONNECTION_NAME, type RateLimitModuleOptions } from './rate-limit.options';

/** The NATS connection the client uses, and whether the module opened it (and so must drain it). */
export class RateLimitConnection {
  constructor(
    readonly connection: NatsConnection,
    readonly owned: boolean,
  ) {}

  static async open(options: RateLimitModuleOptions): Promise<RateLimitConnection> {
    if (options.connection !== undefined && options.servers !== undefined) {
      throw new TypeError('RateLimitModule: give either `connection` or `servers`, not both');
    }
    if (options.connection !== undefined) {
      if (options.nats !== undefined) {
        throw new TypeError('RateLimitModule: `nats` options are for `servers`, not `connection`');
      }
      return new RateLimitConnection(options.connection, false);
    }
    if (options.servers === undefined) {
      throw new TypeError('RateLimitModule: `servers` or `connection` is required');
    }
    const servers = typeof options.servers === 'string' ? options.servers : [...options.servers];
    const name = options.connectionName ?? DEFAULT_CONNECTION_NAME;
    // Reconnect for as long as NATS is away: nats.js gives up after 10 attempts by default, and a
    // closed connection would answer every guarded call by the failure policy until a restart.
    const connection = await connect({
      maxReconnectAttempts: -1,
      ...options.nats,
      servers,
      name,
    });
    return new RateLimitConnection(connection, true);
  }

  /** Drains the connection the module opened; a caller's connection is left as it is. */
  async close(): Promise<void> {
    if (this.owned && !this.connection.isClosed()) await this.connection.drain();
  }
}
