/** Small clients for end-to-end tests that talk to limiter processes over HTTP and NATS. */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NatsConnection } from 'nats';
import type { LimiterProcess } from './limiter-process';

export type Json = Record<string, unknown>;

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Runs `task(0)` .. `task(count - 1)`, `concurrency` at a time. */
export async function inParallel(
  count: number,
  concurrency: number,
  task: (i: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** A config file of `quotas` in `dir`, named uniquely. */
export function configFile(dir: string, quotas: Json[]): string {
  const file = join(dir, `config-${randomUUID()}.json`);
  writeFileSync(file, JSON.stringify({ quotas }));
  return file;
}

/** Waits until `/readyz` answers 200 with the given `redis` state. */
export async function waitReady(limiter: LimiterProcess, redis = 'ready'): Promise<Json> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const res = await fetch(`${limiter.url}/readyz`);
    const body = (await res.json()) as Json;
    if (res.status === 200 && body['redis'] === redis) return body;
    if (Date.now() > deadline) throw new Error(`not ready: ${JSON.stringify(body)}`);
    await sleep(50);
  }
}

/** POSTs JSON; the reply body with its HTTP status as `status`. */
export async function post(url: string, path: string, body: Json): Promise<Json> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, ...((await res.json()) as Json) };
}

export const httpAcquire = (url: string, body: Json): Promise<Json> =>
  post(url, '/v1/acquire', body);

export async function natsAcquire(nc: NatsConnection, subject: string, body: Json): Promise<Json> {
  const msg = await nc.request(subject, Buffer.from(JSON.stringify(body)), { timeout: 10_000 });
  return JSON.parse(Buffer.from(msg.data).toString('utf8')) as Json;
}

/** The value of an unlabelled Prometheus metric on `/metrics`. */
export async function metric(limiter: LimiterProcess, name: string): Promise<number> {
  const text = await (await fetch(`${limiter.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1]);
}
