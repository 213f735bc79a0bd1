/**
 * npm run example:calling: runs the examples of docs/calling.md (examples/calling/) against a
 * running stack (`npm start`, or `docker compose up`) and prints what each answered. It asks the
 * limiter's /healthz and NATS first, each for at most 2 s, and says which is missing rather than
 * wait for it; the NATS examples are skipped when NATS does not answer.
 *
 * LIMITER_URL (default http://localhost:8080), NATS_URL (default nats://127.0.0.1:4222) and
 * NATS_SUBJECT_PREFIX (default ratelimit.v1) say where the stack is; KEY (default example-<time>)
 * is the key the examples spend on. Exit 0 when every example ran, 1 when one failed or was skipped.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { connect } from 'nats';
import * as clientProxy from '../examples/calling/client-proxy';
import * as http from '../examples/calling/http';
import { AppModule } from '../examples/calling/nest-module';
import * as raw from '../examples/calling/raw-nats';
import { callOverNats } from '../examples/calling/sdk';
import { callOverHttp } from '../examples/calling/sdk-http';

const limiterUrl = (process.env['LIMITER_URL'] || 'http://localhost:8080').replace(/\/+$/, '');
const natsUrl = process.env['NATS_URL'] || 'nats://127.0.0.1:4222';
const prefix = process.env['NATS_SUBJECT_PREFIX'] || 'ratelimit.v1';
const key = process.env['KEY'] || `example-${Date.now()}`;
const PROBE_MS = 2_000;

let failed = 0;

/** A reply, as one line: its code and the numbers a reader looks at. */
function brief(reply: { code: string; remaining?: number; limitName?: string }): string {
  const rest = reply.remaining === undefined ? '' : ` remaining ${reply.remaining}`;
  return `${reply.code}${rest}${reply.limitName ? ` (${reply.limitName})` : ''}`;
}

async function run(name: string, example: () => Promise<string> | string): Promise<void> {
  try {
    console.log(`  ${name}: ${await example()}`);
  } catch (error) {
    failed++;
    console.log(`  ${name}: FAILED: ${error instanceof Error ? error.message : String(error)}`);
  }
}

async function limiterAnswers(): Promise<string | undefined> {
  try {
    const res = await fetch(`${limiterUrl}/healthz`, { signal: AbortSignal.timeout(PROBE_MS) });
    return res.status === 200 ? undefined : `/healthz answered ${res.status}`;
  } catch (error) {
    return error instanceof Error
      ? ((error.cause as Error | undefined)?.message ?? error.message)
      : String(error);
  }
}

async function natsAnswers(): Promise<string | undefined> {
  try {
    const nc = await connect({ servers: natsUrl, timeout: PROBE_MS, reconnect: false });
    await nc.close();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

async function overHttp(): Promise<void> {
  console.log(`over HTTP, ${limiterUrl}:`);
  await run('http.ts acquireOverHttp', async () => {
    const { status, reply } = await http.acquireOverHttp(limiterUrl, key);
    return `${status} ${brief(reply)}`;
  });
  await run('http.ts acquireBatchOverHttp', async () => {
    const replies = await http.acquireBatchOverHttp(limiterUrl, [key, `${key}-b`]);
    return replies.map(brief).join(', ');
  });
  await run('http.ts acquireGocc, releaseGocc', async () => {
    const answer = await http.acquireGocc(limiterUrl, key);
    if (!answer.allowed || answer.requestId === undefined) return 'refused (429)';
    return `admitted ${answer.requestId}, released ${await http.releaseGocc(limiterUrl, key, answer.requestId)}`;
  });
  await run('sdk-http.ts callOverHttp', async () => {
    const { decision, usage } = await callOverHttp(limiterUrl, key);
    return `${brief(decision)}; usage settled: ${usage?.ok === true}`;
  });
  await run('curl.sh', () => {
    const script = join(__dirname, '..', 'examples', 'calling', 'curl.sh');
    const result = spawnSync('bash', [script], {
      env: { ...process.env, LIMITER_URL: limiterUrl, KEY: key },
      encoding: 'utf8',
      timeout: 20_000,
    });
    if (result.status !== 0) {
      throw new Error(`exit ${result.status}: ${result.stderr || result.error?.message}`);
    }
    const statuses = result.stdout.match(/^HTTP\/\S+ \d+/gm) ?? [];
    return `ran, ${statuses.join(', ')}`;
  });
}

async function overNats(): Promise<void> {
  console.log(`over NATS, ${natsUrl}, subjects ${prefix}.*:`);
  await run('raw-nats.ts acquire', async () => brief(await raw.acquire(natsUrl, prefix, key)));
  await run('raw-nats.ts acquireBatch', async () =>
    (await raw.acquireBatch(natsUrl, prefix, [key, `${key}-b`])).map(brief).join(', '),
  );
  await run('raw-nats.ts acquireWithRetry', async () => {
    const [first, retry] = await raw.acquireWithRetry(natsUrl, prefix, key, `${key}-retry`);
    return `${brief(first!)}, the retry the same answer: ${JSON.stringify(first) === JSON.stringify(retry)}`;
  });
  await run('raw-nats.ts acquireThenRelease', async () => {
    const { reply, released } = await raw.acquireThenRelease(natsUrl, prefix, key);
    return `${brief(reply)}, released ${released}`;
  });
  await run('client-proxy.ts acquireWithClientProxy', async () =>
    brief(await clientProxy.acquireWithClientProxy(natsUrl, prefix, key)),
  );
  await run('sdk.ts callOverNats', async () => {
    const { decision, usage } = await callOverNats(natsUrl, prefix, key);
    return `${brief(decision)}; usage settled: ${usage?.ok === true}`;
  });
  // The module in nest-module.ts calls the default subjects (ratelimit.v1) of NATS_URL.
  if (prefix !== 'ratelimit.v1') {
    console.log(`  nest-module.ts: not run, it calls ratelimit.v1.* and not ${prefix}.*`);
    return;
  }
  await run('nest-module.ts AppModule, GET /items/1', async () => {
    const app = await NestFactory.create(AppModule, { logger: false });
    try {
      await app.listen(0, '127.0.0.1');
      const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
      const res = await fetch(`${url}/items/1`, {
        headers: { 'x-api-key': key },
        signal: AbortSignal.timeout(5_000),
      });
      const body = (await res.json()) as { code?: string };
      if (body.code === 'UNKNOWN_QUOTA') {
        return `${res.status} UNKNOWN_QUOTA: the limiter has no quota "api" (README.md, Quick start, makes one)`;
      }
      if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(body)}`);
      return `${res.status} ${JSON.stringify(body)}`;
    } finally {
      await app.close();
    }
  });
}

async function main(): Promise<void> {
  const [limiterDown, natsDown] = await Promise.all([limiterAnswers(), natsAnswers()]);
  if (limiterDown !== undefined) {
    console.error(
      `example:calling: no limiter answers at ${limiterUrl}/healthz (${limiterDown}).\n` +
        'Start the stack first (npm start, or docker compose up), or set LIMITER_URL.',
    );
    process.exit(1);
  }
  console.log(`key ${key}`);
  await overHttp();
  if (natsDown !== undefined) {
    failed++;
    console.log(
      `over NATS: skipped, NATS does not answer at ${natsUrl} (${natsDown}).\n` +
        '  npm run services starts it (the limiter connects when it comes up), or set NATS_URL.',
    );
  } else {
    await overNats();
  }
  process.exit(failed === 0 ? 0 : 1);
}

void main();
