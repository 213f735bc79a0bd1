/**
 * One limiter and one admin per DATA_DIR (`<DATA_DIR>/limiter.lock`, `<DATA_DIR>/admin.lock`): a
 * second stack started with the same DATA_DIR is refused, naming DATA_DIR, the holder's pid and
 * what to change; a lock whose owner is gone (a dead pid, another host, a file that does not
 * parse) is taken over with a log line; SIGTERM removes the lock. The real apps, from sources.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAdmin, type AdminProcess } from './support/admin-process';
import { cleanUp } from './support/cleanup';
import { runAppToExit, startLimiter, type LimiterProcess } from './support/limiter-process';

jest.setTimeout(180_000);

const root = mkdtempSync(join(tmpdir(), 'data-dir-lock-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function lockOf(dir: string, app: 'limiter' | 'admin'): { pid: number; hostname: string } {
  return JSON.parse(readFileSync(join(dir, `${app}.lock`), 'utf8')) as {
    pid: number;
    hostname: string;
  };
}

describe('a DATA_DIR in use', () => {
  const dir = join(root, 'shared');
  let limiter: LimiterProcess | undefined;
  let admin: AdminProcess | undefined;

  beforeAll(async () => {
    // The limiter's and the admin's files share one DATA_DIR legitimately (npm start does so).
    [limiter, admin] = await Promise.all([
      startLimiter({ NATS_URL: '', DATA_DIR: dir }),
      startAdmin({ NATS_URL: '', DATA_DIR: dir }),
    ]);
  });

  afterAll(() =>
    cleanUp(
      () => limiter?.stop(),
      () => admin?.stop(),
    ),
  );

  it('is locked per app: a limiter and an admin run on one DATA_DIR, each holding its own lock', () => {
    expect(lockOf(dir, 'limiter')).toEqual(
      expect.objectContaining({ pid: limiter!.child.pid, hostname: hostname() }),
    );
    expect(lockOf(dir, 'admin')).toEqual(
      expect.objectContaining({ pid: admin!.child.pid, hostname: hostname() }),
    );
  });

  it.each(['limiter', 'admin'] as const)(
    'refuses a second %s: it exits 1 naming DATA_DIR, the holder pid, and DATA_DIR and NATS_SUBJECT_PREFIX to change',
    async (app) => {
      const holder = app === 'limiter' ? limiter! : admin!;
      const { code, output } = await runAppToExit(app, {
        NATS_URL: '',
        DATA_DIR: dir,
        PORT: '0',
        ADMIN_PORT: '0',
      });
      expect(code).toBe(1);
      expect(output).toContain(`DATA_DIR ${dir} is in use by another ${app}`);
      expect(output).toContain(`pid ${holder.child.pid}`);
      expect(output).toMatch(/own DATA_DIR and NATS_SUBJECT_PREFIX/);
      // The holder keeps its lock and keeps serving.
      expect(lockOf(dir, app).pid).toBe(holder.child.pid);
      expect((await fetch(`${holder.url}/healthz`)).ok).toBe(true);
    },
  );

  it("removes the lock on SIGTERM, and only the app's own", async () => {
    expect(await limiter!.stop('SIGTERM')).toBe(0);
    expect(existsSync(join(dir, 'limiter.lock'))).toBe(false);
    expect(lockOf(dir, 'admin').pid).toBe(admin!.child.pid);
    expect(await admin!.stop('SIGTERM')).toBe(0);
    expect(existsSync(join(dir, 'admin.lock'))).toBe(false);
  });
});

describe('a lock left behind', () => {
  /** A pid that ran on this host and has exited. */
  function deadPid(): number {
    const { pid } = spawnSync('true');
    expect(pid).toBeGreaterThan(0);
    return pid;
  }

  it.each([
    [
      'a dead pid',
      () => JSON.stringify({ app: 'limiter', pid: deadPid(), hostname: hostname() }),
      /no longer running/,
    ],
    [
      'a live pid on another host',
      () => JSON.stringify({ app: 'limiter', pid: process.pid, hostname: 'elsewhere.invalid' }),
      /another host or container/,
    ],
    ['a malformed file', () => 'not a lock {', /malformed/],
    ['an empty file', () => '', /malformed/],
  ])('is taken over when it holds %s, with a log line', async (name, content, why) => {
    const dir = join(root, name.replaceAll(' ', '-'));
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'limiter.lock'), content());
    const limiter = await startLimiter({ NATS_URL: '', DATA_DIR: dir });
    try {
      const line = limiter
        .output()
        .split('\n')
        .find((l) => l.includes('taking over the lock'));
      expect(line).toBeDefined();
      expect(line).toContain(join(dir, 'limiter.lock'));
      expect(line).toMatch(why);
      expect(lockOf(dir, 'limiter')).toEqual(
        expect.objectContaining({ pid: limiter.child.pid, hostname: hostname() }),
      );
    } finally {
      await limiter.stop();
    }
  });
});
