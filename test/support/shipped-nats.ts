/**
 * nats-server started with the NATS configuration the deployments ship (k8s/nats/nats.conf: the
 * file docker-compose.yml mounts and k8s/ makes a ConfigMap of), or another output of its
 * generator, its users' passwords in its environment as Compose and Kubernetes give them,
 * JetStream on and its log in a file.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NATS_USERS, type NatsUser } from '../../scripts/nats-config';
import { NATS_CONFIG_FILE } from '../deploy/nats-config-file';
import { freePort } from './limiter-process';
import { startNatsServer, stopProcess } from './nats-process';

const ROOT = join(__dirname, '..', '..');

export interface ShippedNats {
  readonly url: string;
  /** `Publish user subject` and `Subscribe user subject[ queue]`: what the server refused. */
  violations(): string[];
  stop(): Promise<void>;
}

/**
 * `passwords`: each user's, by its variable (NATS_CALLER_PASSWORD, ...). `config`: the text of
 * another configuration (scripts/nats-config.ts with options) instead of the shipped file.
 */
export async function startShippedNats(
  dir: string,
  passwords: Readonly<Record<(typeof NATS_USERS)[NatsUser], string>> &
    Readonly<Record<string, string>>,
  config?: string,
): Promise<ShippedNats> {
  const logFile = join(dir, 'nats.log');
  const port = await freePort();
  let configFile = join(ROOT, NATS_CONFIG_FILE);
  if (config !== undefined) {
    configFile = join(dir, 'nats.conf');
    writeFileSync(configFile, config);
  }
  const server = await startNatsServer(port, {
    configFile,
    storeDir: join(dir, 'js'),
    logFile,
    env: passwords,
  });
  return {
    url: `nats://127.0.0.1:${port}`,
    violations: () =>
      [...readFileSync(logFile, 'utf8').matchAll(VIOLATION)].map(([, kind, user, subject, queue]) =>
        [kind === 'Publish' ? 'Publish' : 'Subscribe', user, subject, queue]
          .filter((part) => part !== undefined)
          .join(' '),
      ),
    stop: () => stopProcess(server),
  };
}

// nats-server's lines: `Publish Violation - User "caller", Subject "x"` and
// `Subscription Violation - User "caller", Subject "x", Queue: "q", SID 2`.
const VIOLATION =
  /(Publish|Subscription) Violation - User "([^"]+)", Subject "([^"]+)"(?:, Queue: "([^"]+)")?/g;
