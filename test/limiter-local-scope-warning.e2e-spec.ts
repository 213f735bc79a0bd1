/**
 * Local scope with several replicas admits limit x replicas. A replica that hears other replicas
 * of its own NATS queue group (from their stats reports) while it serves local quotas says so in
 * its log; alone, or in another queue group, it says nothing. Real limiter processes, real NATS,
 * a subject prefix of this file's own.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configFile, metric, sleep, waitReady } from './support/limiter-http';
import { startLimiter, uniquePrefix, type LimiterProcess } from './support/limiter-process';
import { logMessages } from './support/log-lines';

jest.setTimeout(90_000);

const NATS_URL = 'nats://127.0.0.1:4222';
const WARNING = 'are local: each replica admits up to their limits on its own';

/** Polls the replica's `ratelimit_queue_group_replicas` until it is `count`. */
async function replicasSeen(limiter: LimiterProcess, count: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  while ((await metric(limiter, 'ratelimit_queue_group_replicas')) !== count) {
    if (Date.now() > deadline) throw new Error(`${limiter.url} never saw ${count} replicas`);
    await sleep(50);
  }
}

/** What the limiter said so far, one message a line. */
const said = (limiter: LimiterProcess): string => logMessages(limiter.output());

async function logged(limiter: LimiterProcess, text: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!said(limiter).includes(text)) {
    if (Date.now() > deadline) throw new Error(`not logged: ${text}\n${limiter.output()}`);
    await sleep(50);
  }
}

describe('a warning when replicas of one queue group share local quotas', () => {
  const dir = mkdtempSync(join(tmpdir(), 'local-scope-warning-'));
  const prefix = uniquePrefix();
  const group = `g-${randomUUID()}`;
  const quota = `api-${randomUUID()}`;
  const running: LimiterProcess[] = [];

  const start = async (name: string, queueGroup: string): Promise<LimiterProcess> => {
    const config = configFile(dir, [
      { name: quota, limits: [{ name: 'rps', limit: 10, window: '1s' }] },
    ]);
    const limiter = await startLimiter({
      NATS_URL,
      NATS_SUBJECT_PREFIX: prefix,
      NATS_QUEUE_GROUP: queueGroup,
      CONFIG_FILE: config,
      DATA_DIR: join(dir, name),
    });
    running.push(limiter);
    await waitReady(limiter, 'disabled');
    return limiter;
  };

  afterAll(async () => {
    await Promise.all(running.map((l) => l.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('says nothing alone, warns on both replicas once a second one joins the group', async () => {
    const a = await start('a', group);
    // a has heard its own report: it knows the group, and has seen no one else in it.
    await replicasSeen(a, 1);
    expect(said(a)).not.toContain(WARNING);

    // Another queue group on the same prefix: it does not share a's requests.
    const other = await start('other', `${group}-other`);
    await replicasSeen(other, 1);
    expect(await metric(a, 'ratelimit_queue_group_replicas')).toBe(1);

    const b = await start('b', group);
    await replicasSeen(a, 2);
    await replicasSeen(b, 2);
    for (const limiter of [a, b]) {
      await logged(limiter, `1 other replica shares NATS queue group "${group}"`);
      expect(said(limiter)).toContain(`the quotas ${quota} are local`);
    }
    expect(said(other)).not.toContain(WARNING);
    // Once, not at every report (the unit test holds it over many reports).
    await replicasSeen(b, 2);
    expect(said(a).split(WARNING).length - 1).toBe(1);
  });
});
