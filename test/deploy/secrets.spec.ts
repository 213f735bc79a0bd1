/**
 * scripts/secrets.ts, the secrets generator of the deployments: what it prints is a complete env
 * file (Compose's .env, kubectl's --from-env-file), every value fresh and of a form its reader takes.
 */
import { fromPublic, fromSeed } from 'nkeys.js';
import {
  envFile,
  generateSecrets,
  KEY_NAMES,
  natsPassword,
  OPTIONAL_SETTINGS,
} from '../../scripts/secrets';
import { runScript } from './app-facts';

/** `NAME=value` lines, as Compose and kubectl read them (comments and blank lines skipped). */
function parseEnv(text: string): Record<string, string> {
  const lines = text.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
  return Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

const run = (...args: string[]): string => runScript('secrets.ts', ...args);

describe('the secrets generator', () => {
  it('makes tokens, NATS passwords and nkey pairs whose seed is its public key', () => {
    const s = generateSecrets();
    expect(s.ADMIN_TOKEN).toMatch(/^[0-9a-f]{64}$/);
    expect(s.ADMIN_READ_TOKEN).toMatch(/^[0-9a-f]{64}$/);
    expect(s.DEBUG_TOKEN).toMatch(/^[0-9a-f]{64}$/);
    for (const password of [
      s.NATS_CALLER_PASSWORD,
      s.NATS_LIMITER_PASSWORD,
      s.NATS_ADMIN_PASSWORD,
    ]) {
      expect(password).toMatch(/^[A-Za-z][A-Za-z0-9]{31}$/);
    }
    for (const [seed, key] of [
      [s.CONTROL_SEED, s.CONTROL_PUBLIC_KEY],
      [s.REPORT_SEED, s.REPORT_PUBLIC_KEYS],
    ] as const) {
      expect(seed).toMatch(/^SU[A-Z2-7]+$/);
      expect(fromSeed(new TextEncoder().encode(seed)).getPublicKey()).toBe(key);
      expect(fromPublic(key).getPublicKey()).toBe(key);
    }
    expect(s.CONTROL_SEED).not.toBe(s.REPORT_SEED);
    expect(new Set(Object.values(generateSecrets())).size).toBe(Object.keys(s).length);
  });

  it('never starts a NATS password with a digit (nats-server would read it as a number)', () => {
    for (let i = 0; i < 500; i++) expect(natsPassword()).toMatch(/^[A-Za-z]/);
  });

  it('prints a complete env file, fresh each run; --keys only the control and report keys', () => {
    const secrets = generateSecrets();
    expect(parseEnv(envFile(secrets))).toEqual(secrets);
    const printed = parseEnv(run());
    expect(Object.keys(printed).sort()).toEqual(Object.keys(secrets).sort());
    for (const value of Object.values(printed)) expect(Object.values(secrets)).not.toContain(value);
    expect(Object.keys(parseEnv(run('--keys')))).toEqual([...KEY_NAMES]);
    expect(() => run('--bogus')).toThrow();
  });

  it('shows the optional settings commented out, with an example each, after the secrets', () => {
    const commented = (text: string) =>
      [...text.matchAll(/^# ([A-Z_][A-Z0-9_]*)=(.+)$/gm)].map((m) => [m[1], m[2]]);
    expect(commented(run())).toEqual(Object.entries(OPTIONAL_SETTINGS));
    expect(commented(run('--keys'))).toEqual([]);
  });
});
