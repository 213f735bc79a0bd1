/**
 * The secrets of one deployment, printed as an env file (docs/deploy.md):
 *   node dist/scripts/secrets.js          in the image (docker run --rm ratelimit:dev ...)
 *   npm run -s secrets                    from the repository
 *   ... --keys                            the control and report keys only (what npm start uses)
 * Compose reads the output as `.env`; `kubectl create secret generic ratelimit --from-env-file`
 * makes the Kubernetes Secret of it. Standalone (node:crypto and nkeys.js only), so that the image
 * runs it compiled, without the apps.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { createUser } from 'nkeys.js';

export interface Secrets {
  /** Bearer token for the admin's mutations. */
  readonly ADMIN_TOKEN: string;
  /** Bearer token for the admin's queries and subscriptions. */
  readonly ADMIN_READ_TOKEN: string;
  /** Bearer token for the limiters' routes that list keys (/debug, /v1/stats/:key). */
  readonly DEBUG_TOKEN: string;
  /** Passwords of the NATS users of k8s/nats/nats.conf. */
  readonly NATS_CALLER_PASSWORD: string;
  readonly NATS_LIMITER_PASSWORD: string;
  readonly NATS_ADMIN_PASSWORD: string;
  /** The admin signs control entries and requests with this nkey seed; limiters trust its key. */
  readonly CONTROL_SEED: string;
  readonly CONTROL_PUBLIC_KEY: string;
  /** Limiters sign their stats reports with this seed; the admin trusts the listed keys. */
  readonly REPORT_SEED: string;
  readonly REPORT_PUBLIC_KEYS: string;
}

export type SecretName = keyof Secrets;

/**
 * Settings the deployments pass to the admin when set (Compose's `${NAME:-}`, optional keys of the
 * Secret), with an example of each: the generator prints them commented out, as .env.example does.
 */
export const OPTIONAL_SETTINGS = {
  ADMIN_TOKENS: 'alice:<token>,deploy-bot:<token>',
  ADMIN_READ_TOKENS: 'grafana:<token>',
  ADMIN_ALLOWED_ORIGINS: 'https://admin.example.com',
} as const;

/** The names of the control and report keys: all that `npm start` needs (its NATS asks nothing). */
export const KEY_NAMES = [
  'CONTROL_SEED',
  'CONTROL_PUBLIC_KEY',
  'REPORT_SEED',
  'REPORT_PUBLIC_KEYS',
] as const satisfies readonly SecretName[];

const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const ALPHANUMERIC = `${LETTERS}0123456789`;

/**
 * 32 letters and digits (190 bits), the first a letter: nats-server parses a `$VARIABLE` taken
 * from its environment as a config value, so `12345` or `8e12` would be read as numbers and `true`
 * as a boolean. Letters and digits need no quoting in an env file, a shell or a URL either.
 */
export function natsPassword(): string {
  let password = LETTERS[randomInt(LETTERS.length)]!;
  while (password.length < 32) password += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)]!;
  return password;
}

/** A user nkey pair as nkeys.js makes it: the seed (`SU…`) and its public key (`U…`). */
export function nkeyPair(): { seed: string; publicKey: string } {
  const pair = createUser();
  return { seed: new TextDecoder().decode(pair.getSeed()), publicKey: pair.getPublicKey() };
}

export function generateSecrets(): Secrets {
  const control = nkeyPair();
  const report = nkeyPair();
  return {
    ADMIN_TOKEN: randomBytes(32).toString('hex'),
    ADMIN_READ_TOKEN: randomBytes(32).toString('hex'),
    DEBUG_TOKEN: randomBytes(32).toString('hex'),
    NATS_CALLER_PASSWORD: natsPassword(),
    NATS_LIMITER_PASSWORD: natsPassword(),
    NATS_ADMIN_PASSWORD: natsPassword(),
    CONTROL_SEED: control.seed,
    CONTROL_PUBLIC_KEY: control.publicKey,
    // One key for every limiter (a Deployment's pods share their environment); the admin takes a
    // comma list, so a second key can be added before the first is retired.
    REPORT_SEED: report.seed,
    REPORT_PUBLIC_KEYS: report.publicKey,
  };
}

const COMMENTS: Record<SecretName, string> = {
  ADMIN_TOKEN: "The admin's tokens: mutations need ADMIN_TOKEN; queries ADMIN_READ_TOKEN (or it).",
  ADMIN_READ_TOKEN: '',
  DEBUG_TOKEN: "The limiters' /debug, /debug/:key and /v1/stats/:key need it as a bearer token.",
  NATS_CALLER_PASSWORD:
    'Passwords of the NATS users caller (your backends), limiter and admin (docs/operations.md).',
  NATS_LIMITER_PASSWORD: '',
  NATS_ADMIN_PASSWORD: '',
  CONTROL_SEED: 'The admin signs quota changes and resets; limiters trust CONTROL_PUBLIC_KEY.',
  CONTROL_PUBLIC_KEY: '',
  REPORT_SEED: 'Limiters sign their stats reports; the admin trusts REPORT_PUBLIC_KEYS.',
  REPORT_PUBLIC_KEYS: '',
};

/**
 * An env file: `NAME=value` lines (Compose's .env, kubectl's --from-env-file), with comments; with
 * `optional`, the optional settings after them, commented out.
 */
export function envFile(secrets: Partial<Secrets>, optional = false): string {
  const lines = ['# Secrets of one ratelimit deployment (scripts/secrets.ts). Never commit them.'];
  for (const [name, value] of Object.entries(secrets) as [SecretName, string][]) {
    if (COMMENTS[name] !== '') lines.push(`# ${COMMENTS[name]}`);
    lines.push(`${name}=${value}`);
  }
  if (optional) {
    lines.push(
      '# Optional, for the admin (docs/operations.md): named tokens, and origins of other pages.',
    );
    for (const [name, example] of Object.entries(OPTIONAL_SETTINGS))
      lines.push(`# ${name}=${example}`);
  }
  return `${lines.join('\n')}\n`;
}

function main(args: readonly string[]): number {
  const unknown = args.filter((arg) => arg !== '--keys');
  if (unknown.length > 0) {
    process.stderr.write(`secrets: unknown argument ${unknown[0]} (only --keys)\n`);
    return 2;
  }
  const secrets = generateSecrets();
  const keysOnly = args.includes('--keys');
  const printed = keysOnly
    ? Object.fromEntries(KEY_NAMES.map((name) => [name, secrets[name]]))
    : secrets;
  process.stdout.write(envFile(printed, !keysOnly));
  return 0;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
