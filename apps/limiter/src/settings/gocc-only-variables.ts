import type { Env, EnvName } from '@app/contracts';

/**
 * GoCC's variables that this limiter does not read, with what does their job here
 * (docs/migrating.md). GoCC's environment must start the limiter as it is, but silently ignoring
 * INSTANCE_URLS would let an operator believe N replicas share one limit.
 */
const GOCC_ONLY_VARIABLES: Partial<Record<EnvName, string>> = {
  INSTANCE_URLS:
    "is GoCC's distributed mode and is not read: replicas share a NATS queue group, each counting a local quota on its own; give a quota `scope: cluster` (with REDIS_URL) for one limit across replicas",
  SERVER_TYPE: 'is not read: HTTP/1.1 and HTTP/2 cleartext are both served on PORT',
  LOG_2XX: 'is not read: request logging follows LOG_LEVEL',
  LOG_4XX: 'is not read: request logging follows LOG_LEVEL',
  LOG_5XX: 'is not read: request logging follows LOG_LEVEL',
  LOG_INCLUDES_SOURCE: 'is not read',
};

/** One line per GoCC-only variable set (non-empty) in `env`. */
export function goccOnlyVariableWarnings(env: Env = process.env): string[] {
  return Object.entries(GOCC_ONLY_VARIABLES)
    .filter(([name]) => (env[name as EnvName]?.trim() ?? '') !== '')
    .map(([name, why]) => `${name} ${why} (docs/migrating.md)`);
}
