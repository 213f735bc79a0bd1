import {
  DEFAULT_NATS_INBOX_PREFIXES,
  DEFAULT_NATS_SUBJECT_PREFIX,
  isValidSubjectPrefix,
  listenConfig,
  parseFlag,
  parsePositiveInt,
  readDataDir,
  readGoccSettings,
  type Env,
  type GoccSettings,
  type ListenConfig,
} from '@app/contracts';
import { natsConnectionOptions } from '@app/nats-connection';
import type { ConnectionOptions } from 'nats';
import { readOriginPolicy, type OriginPolicy } from '../origin/origin-policy';
import { adminBinding } from './admin-binding';
import { readAdminTokens, type AdminTokens } from './admin-tokens';
import { readAdminSigning, type AdminSigning } from './admin-signing';

/** The admin's environment (docs/contract.md, Environment), read once at start and validated. */
export interface AdminSettings {
  /** The host follows the binding rule (admin-binding.ts), not HOST alone. */
  readonly listen: ListenConfig;
  /** Logged at start when mutations are open to whoever reaches the address. */
  readonly listenWarning: string | undefined;
  /** Which Host and Origin headers a request may carry (origin-policy.ts). */
  readonly origins: OriginPolicy;
  /**
   * How to reach NATS (NATS_URL, NATS_CREDS, NATS_TOKEN, NATS_USER/NATS_PASSWORD, NATS_TLS_*) and
   * the prefix of its reply inboxes (NATS_INBOX_PREFIX); undefined when NATS_URL is empty: run
   * without NATS (changes are stored but reach no limiter; stats stay empty).
   */
  readonly nats: ConnectionOptions | undefined;
  readonly subjectPrefix: string;
  /** The SQLite file lives here, as `admin.sqlite`. */
  readonly dataDir: string;
  /** ADMIN_TOKEN(S) and ADMIN_READ_TOKEN(S): who may write and read, by name. */
  readonly tokens: AdminTokens;
  /** NODE_ENV=production: no introspection, no GraphiQL. */
  readonly production: boolean;
  /**
   * ADMIN_OPERATION_TIMEOUT_MS: a query not answered by then answers OPERATION_TIMEOUT; a
   * mutation starts no further root field after it.
   */
  readonly operationTimeoutMs: number;
  /** MAX_REQUESTS and friends: what a GoCC document imported without them falls back to. */
  readonly gocc: GoccSettings;
  /** CONSOLE_DIR: where the web console's built files are; undefined: look in the usual places. */
  readonly consoleDir: string | undefined;
  /** CONTROL_SEED, REPORT_PUBLIC_KEYS. */
  readonly signing: AdminSigning;
}

export const ADMIN_SETTINGS = Symbol('AdminSettings');

export const DEFAULT_OPERATION_TIMEOUT_MS = 10_000;
const MAX_OPERATION_TIMEOUT_MS = 600_000;

/** Tokens are compared as given; whitespace around them is a copy-paste accident, not a secret. */
export function readAdminSettings(env: Env = process.env): AdminSettings {
  const subjectPrefix = env['NATS_SUBJECT_PREFIX']?.trim() || DEFAULT_NATS_SUBJECT_PREFIX;
  if (!isValidSubjectPrefix(subjectPrefix)) {
    throw new Error(`NATS_SUBJECT_PREFIX is not a valid subject prefix: "${subjectPrefix}"`);
  }
  const tokens = readAdminTokens(env);
  const binding = adminBinding({
    host: env['HOST']?.trim() || undefined,
    adminTokenSet: tokens.guardWrites,
    insecure: parseFlag('ADMIN_INSECURE', env['ADMIN_INSECURE']),
  });
  return {
    listen: { ...listenConfig(env, 'ADMIN_PORT', 8081), host: binding.host },
    listenWarning: binding.warning,
    origins: readOriginPolicy(env, binding.host),
    nats: natsConnectionOptions(env, 'ratelimit-admin', DEFAULT_NATS_INBOX_PREFIXES.admin),
    subjectPrefix,
    dataDir: readDataDir(env),
    tokens,
    production: env['NODE_ENV']?.trim() === 'production',
    operationTimeoutMs: parsePositiveInt(
      'ADMIN_OPERATION_TIMEOUT_MS',
      env['ADMIN_OPERATION_TIMEOUT_MS'],
      DEFAULT_OPERATION_TIMEOUT_MS,
      MAX_OPERATION_TIMEOUT_MS,
    ),
    gocc: readGoccSettings(env),
    consoleDir: env['CONSOLE_DIR']?.trim() || undefined,
    signing: readAdminSigning(env),
  };
}
