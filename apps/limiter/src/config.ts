import { listenConfig, type Env, type ListenConfig } from '@app/contracts';

/** PORT (default 8080), HOST and LOG_LEVEL; invalid values stop the process at start. */
export function limiterListenConfig(env: Env = process.env): ListenConfig {
  return listenConfig(env, 'PORT', 8080);
}
