import { listenConfig, type ListenConfig } from '@app/contracts';

/** ADMIN_PORT (default 8081), HOST (shared with the limiter) and LOG_LEVEL. */
export function adminListenConfig(env: NodeJS.ProcessEnv = process.env): ListenConfig {
  return listenConfig(env, 'ADMIN_PORT', 8081);
}
