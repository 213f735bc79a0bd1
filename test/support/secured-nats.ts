/**
 * Secured NATS for end-to-end tests: a private nats-server with a configuration of the test's
 * (token, users, TLS, operator mode), JetStream on and its log in a file; a limiter and an admin
 * that must work through it end to end; and apps that must be refused yet keep serving HTTP.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type ConnectionOptions, type NatsConnection } from 'nats';
import { startAdmin, gqlData } from './admin-process';
import { natsAcquire, post, type Json } from './limiter-http';
import { freePort, startLimiter, uniquePrefix, type LimiterProcess } from './limiter-process';
import { startNatsServer, stopProcess, waitUntil } from './nats-process';

export interface SecuredNats {
  /** nats://127.0.0.1:<port>, without credentials. */
  readonly url: string;
  /** Refused connections the server logged so far (authentication or TLS). */
  refusals(): number;
  stop(): Promise<void>;
}

/** nats-server on a free port with `config` (auth, TLS, ...) plus JetStream and a log file. */
export async function startSecuredNats(dir: string, config: string): Promise<SecuredNats> {
  mkdirSync(dir, { recursive: true });
  const log = join(dir, 'nats.log');
  const configFile = join(dir, 'nats.conf');
  writeFileSync(
    configFile,
    `${config}\njetstream { store_dir: "${join(dir, 'js')}" }\nlog_file: "${log}"\n`,
  );
  const port = await freePort();
  const server = await startNatsServer(port, { configFile });
  return {
    url: `nats://127.0.0.1:${port}`,
    refusals: () => {
      const text = readFileSync(log, 'utf8');
      return text.split('\n').filter((l) => /authentication error|TLS handshake error/.test(l))
        .length;
    },
    stop: () => stopProcess(server),
  };
}

/** An app's /readyz: status and body. */
export async function readyz(app: LimiterProcess): Promise<Json> {
  const res = await fetch(`${app.url}/readyz`);
  return { status: res.status, ...((await res.json()) as Json) };
}

const UPSERT = 'mutation Up($input: QuotaInput!) { upsertQuota(input: $input) { version } }';
// Fixed windows align to multiples of windowMs since the epoch: this one first ends in 33658.
const FOREVER_MS = 1e15;

/**
 * A limiter and an admin started with `env` (plus their own prefix and data dirs) become ready
 * on the secured server, the limiter answers a NATS acquire, and a quota changed through the
 * admin's GraphQL reaches the limiter through the KV bucket: the whole path over `env`'s
 * credentials. `client` is how the test itself connects. Returns both processes' output.
 */
export async function servesEndToEnd(
  dir: string,
  env: Record<string, string>,
  client: ConnectionOptions,
): Promise<string> {
  const prefix = uniquePrefix();
  const common = { ...env, NATS_SUBJECT_PREFIX: prefix };
  const started = await Promise.allSettled([
    startLimiter({ ...common, DATA_DIR: join(dir, 'limiter') }),
    startAdmin({ ...common, DATA_DIR: join(dir, 'admin') }),
  ]);
  const apps = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  let opened: NatsConnection | undefined;
  try {
    for (const s of started) if (s.status === 'rejected') throw s.reason;
    // Inside the try: a refused client must not leave the apps running.
    const nc = (opened = await connect({ ...client, maxReconnectAttempts: -1 }));
    const [limiter, admin] = apps as [LimiterProcess, LimiterProcess];
    await waitUntil('limiter subscribed', async () => (await readyz(limiter))['status'] === 200);
    await waitUntil('admin connected', async () => (await readyz(admin))['status'] === 200);
    expect(await readyz(limiter)).toMatchObject({ nats: 'subscribed' });
    expect(await readyz(admin)).toEqual({ status: 200, ready: true, nats: 'connected' });

    const subject = (op: 'acquire' | 'decide'): string => `${prefix}.${op}`;
    expect(await natsAcquire(nc, subject('acquire'), { key: 'alice' })).toMatchObject({
      code: 'OK',
    });

    const input = {
      name: 'secured',
      match: 'secured-*',
      limits: [{ name: 'total', limit: 1, windowMs: FOREVER_MS, algorithm: 'fixed_window' }],
    };
    await gqlData(admin.url, UPSERT, { input });
    await waitUntil('the quota in force on the limiter', async () => {
      const reply = await natsAcquire(nc, subject('decide'), { key: 'secured-1' });
      return reply['quota'] === 'secured';
    });
    expect(await natsAcquire(nc, subject('acquire'), { key: 'secured-1' })).toMatchObject({
      code: 'OK',
      quota: 'secured',
    });
    expect(await natsAcquire(nc, subject('acquire'), { key: 'secured-1' })).toMatchObject({
      code: 'RATE_LIMITED',
    });
    return apps.map((a) => a.output()).join('\n');
  } finally {
    await opened?.close();
    await Promise.all(apps.map((a) => a.stop()));
  }
}

/**
 * A limiter or an admin started with `env` is refused by `server`: /readyz answers 503 naming
 * the reason, the app keeps retrying (the server refuses it again) and logs each reason once,
 * and it keeps serving HTTP. Returns its output.
 */
export async function refusedButServing(
  server: SecuredNats,
  kind: 'limiter' | 'admin',
  dir: string,
  env: Record<string, string>,
  reason: RegExp,
): Promise<string> {
  const full = { NATS_URL: server.url, ...env, NATS_SUBJECT_PREFIX: uniquePrefix(), DATA_DIR: dir };
  const app = await (kind === 'limiter' ? startLimiter(full) : startAdmin(full));
  try {
    await refusedServing(app, kind, server, reason);
    return app.output();
  } finally {
    await app.stop();
  }
}

async function refusedServing(
  app: LimiterProcess,
  kind: 'limiter' | 'admin',
  server: SecuredNats,
  reason: RegExp,
): Promise<void> {
  // Generous: a refusal that shows only as a timeout takes two dials of 10 s to explain.
  await waitUntil(
    'not ready, with the reason',
    async () => {
      const body = await readyz(app);
      return body['status'] === 503 && reason.test(String(body['natsError']));
    },
    90_000,
  );
  const refusedBefore = server.refusals();
  await waitUntil('refused twice more', () => server.refusals() >= refusedBefore + 2, 90_000);
  expect(await readyz(app)).toMatchObject({ status: 503, ready: false });
  // Retried, yet each reason logged once: no line repeats.
  const failures = app.output().match(/NATS: no connection to .*/g) ?? [];
  expect(failures.some((line) => reason.test(line))).toBe(true);
  expect(new Set(failures).size).toBe(failures.length);
  if (kind === 'limiter') {
    expect(await post(app.url, '/v1/acquire', { key: 'http-still-served' })).toMatchObject({
      status: 200,
      code: 'OK',
    });
  } else {
    expect(await gqlData(app.url, '{ quotas { name } }')).toHaveProperty('quotas');
  }
}
