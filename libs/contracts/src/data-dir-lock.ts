/**
 * One process of each app per DATA_DIR: `<DATA_DIR>/<app>.lock`, created at start with an atomic
 * exclusive create and removed at a clean exit. A second stack started on the same machine with
 * the defaults would otherwise share the first one's SQLite files without a word.
 *
 * The lock holds the owner's pid, hostname and process start time. A lock is live when its host is
 * this host and its pid is a running process that started when the owner did (a pid reused since
 * is not the owner); anything else (a dead pid, another host or container, whose pids mean nothing
 * here, a file that does not parse) is stale and taken over, with a log line saying why.
 */
import { hostname } from 'node:os';
import {
  closeSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { AppName, Env } from './env-variables';

export const DEFAULT_DATA_DIR = './data';

/** DATA_DIR as both apps read it. */
export function readDataDir(env: Env): string {
  return env['DATA_DIR']?.trim() || DEFAULT_DATA_DIR;
}

export interface DataDirLock {
  readonly path: string;
  /** Removes the lock file if it is still this process's. Idempotent; never throws. */
  release(): void;
}

interface LockOwner {
  readonly app: string;
  readonly pid: number;
  readonly hostname: string;
  /** /proc/<pid>/stat's start time (clock ticks since boot), where there is a /proc. */
  readonly started?: string;
  readonly since: string;
}

/** Thrown when a live process holds the lock; the message says what to change. */
export class DataDirInUseError extends Error {}

/** Where the lock of `app` lives in `dataDir`. */
export function dataDirLockPath(app: AppName, dataDir: string): string {
  return join(dataDir, `${app}.lock`);
}

/**
 * Takes `<dataDir>/<app>.lock`, creating `dataDir` if needed, and removes it when the process exits
 * (process.exit, the end of the event loop; not SIGKILL, whose lock is stale at the next start).
 * Throws DataDirInUseError when a live process holds it. Returns undefined, taking nothing, when
 * the directory cannot be created or written: the app reports that itself (the limiter runs
 * without persistence, the admin does not start), and there is nothing on disk to share.
 */
export function lockDataDir(
  app: AppName,
  dataDir: string,
  log: { warn(line: string): void },
): DataDirLock | undefined {
  const path = dataDirLockPath(app, dataDir);
  try {
    mkdirSync(dataDir, { recursive: true });
  } catch {
    return undefined;
  }
  const owner: LockOwner = {
    app,
    pid: process.pid,
    hostname: hostname(),
    started: processStartTime(process.pid),
    since: new Date().toISOString(),
  };
  const content = `${JSON.stringify(owner)}\n`;
  // A few rounds: each one that fails saw a lock another process created or removed meanwhile.
  for (let round = 0; round < 5; round++) {
    const created = createExclusive(path, content);
    if (created === 'created') return holding(path, content);
    if (created === 'unwritable') return undefined;
    const held = readIfExists(path);
    if (held === undefined) continue; // removed since: try again
    const verdict = judge(held, owner);
    if (verdict.live) throw new DataDirInUseError(inUseMessage(app, dataDir, path, verdict.owner));
    if (takeAside(path, held)) log.warn(`${path}: taking over the lock, ${verdict.why}`);
  }
  throw new Error(`${path}: could not take the lock (other processes kept taking it)`);
}

function createExclusive(path: string, content: string): 'created' | 'exists' | 'unwritable' {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o644);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EEXIST' ? 'exists' : 'unwritable';
  }
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
  return 'created';
}

function holding(path: string, content: string): DataDirLock {
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.removeListener('exit', release);
    // Only our own: a process that took a lock we had left behind keeps it.
    if (readIfExists(path) !== content) return;
    try {
      unlinkSync(path);
    } catch {
      // already gone, or the directory went read-only: the next start finds it stale
    }
  };
  process.once('exit', release);
  return { path, release };
}

type Verdict = { live: true; owner: LockOwner } | { live: false; why: string };

function judge(text: string, self: LockOwner): Verdict {
  const held = parseOwner(text);
  if (held === undefined) return { live: false, why: 'its content is not a lock (malformed)' };
  const who = `pid ${held.pid} on ${held.hostname}`;
  if (held.hostname !== self.hostname) {
    return {
      live: false,
      why: `left by ${who}, another host or container (its pid is not checked)`,
    };
  }
  if (held.pid === self.pid) return { live: false, why: `left by ${who}, this process's pid` };
  if (!isAlive(held.pid)) return { live: false, why: `left by ${who}, which is no longer running` };
  const started = processStartTime(held.pid);
  if (held.started !== undefined && started !== undefined && started !== held.started) {
    return { live: false, why: `left by ${who}, a pid another process has since taken` };
  }
  return { live: true, owner: held };
}

function parseOwner(text: string): LockOwner | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const o = value as Record<string, unknown>;
  if (!Number.isSafeInteger(o['pid']) || (o['pid'] as number) <= 0) return undefined;
  if (typeof o['hostname'] !== 'string') return undefined;
  return {
    app: typeof o['app'] === 'string' ? o['app'] : '',
    pid: o['pid'] as number,
    hostname: o['hostname'],
    started: typeof o['started'] === 'string' ? o['started'] : undefined,
    since: typeof o['since'] === 'string' ? o['since'] : '',
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Field 22 of /proc/<pid>/stat (after the command, which may hold spaces and parentheses). */
function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function readIfExists(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * Removes the stale lock whose content is `stale`. Renamed aside first (atomic), so of processes
 * taking over the same stale lock at once only one removes it; one that moved a fresh lock
 * another process had just created puts it back. True when this call removed the stale lock.
 */
function takeAside(path: string, stale: string): boolean {
  const aside = `${path}.stale-${process.pid}`;
  try {
    renameSync(path, aside);
  } catch {
    return false; // gone already
  }
  const moved = readIfExists(aside);
  if (moved !== stale) {
    try {
      linkSync(aside, path); // fails if yet another lock was created meanwhile: that one stands
    } catch {
      // nothing to restore over
    }
  }
  try {
    unlinkSync(aside);
  } catch {
    // removed already
  }
  return moved === stale;
}

function inUseMessage(app: AppName, dataDir: string, path: string, owner: LockOwner): string {
  const since = owner.since === '' ? '' : ` since ${owner.since}`;
  return (
    `DATA_DIR ${dataDir} is in use by another ${app} (pid ${owner.pid} on ${owner.hostname}${since}; ` +
    `lock ${path}). A second stack on this machine needs its own DATA_DIR and ` +
    `NATS_SUBJECT_PREFIX (and its own PORT and ADMIN_PORT); otherwise stop pid ${owner.pid} first.`
  );
}
