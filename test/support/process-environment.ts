/**
 * Jest's node environment, plus: no test file leaves a child process behind. Every child spawned
 * while the file runs (limiters, admins, redis-server, nats-server, anything through
 * node:child_process) is noted; after the file's last afterAll, one still running is killed, so
 * that a failing test (a beforeAll that started two of three replicas, an afterAll that threw half
 * way, a test body still running after its timeout) cannot hold Jest open or leave a process on
 * the machine. A child nobody ever signalled also fails the file, naming it: that is a leak in
 * the test's own cleanup. One the file signalled (and did not wait for) gets a few seconds to exit.
 */
import { ChildProcess } from 'node:child_process';
import type { Circus } from '@jest/types';
import { TestEnvironment } from 'jest-environment-node';

/** How long a child already signalled by the file may take to exit before it is killed. */
const SIGNALLED_GRACE_MS = 5_000;

const running = (c: ChildProcess): boolean =>
  c.pid !== undefined && c.exitCode === null && c.signalCode === null;

function exited(c: ChildProcess, ms: number): Promise<boolean> {
  if (!running(c)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    c.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** The method every child is started through (internal to Node, so not in its types). */
interface Spawning {
  spawn: (this: ChildProcess, options: unknown) => unknown;
}
const spawning = ChildProcess.prototype as unknown as Spawning;

export default class ProcessEnvironment extends TestEnvironment {
  private readonly children = new Set<ChildProcess>();
  private readonly originalSpawn = spawning.spawn;

  override async setup(): Promise<void> {
    await super.setup();
    const children = this.children;
    const spawn = this.originalSpawn;
    // spawn, execFile, exec and fork all start their process through this method.
    spawning.spawn = function (this: ChildProcess, options: unknown) {
      const result = spawn.call(this, options);
      children.add(this);
      this.once('exit', () => children.delete(this));
      return result;
    };
  }

  /** After the file's last afterAll: a leak is reported beside the file's own results. */
  async handleTestEvent(event: Circus.Event, state: Circus.State): Promise<void> {
    if (event.name !== 'run_finish') return;
    const leaked = await this.stopLeftovers();
    if (leaked.length > 0) {
      const names = leaked
        .map((c) => `pid ${c.pid} (${c.spawnargs.slice(0, 4).join(' ')})`)
        .join('; ');
      state.unhandledErrors.push(
        new Error(
          `child processes still running after the last afterAll, never stopped by the test file, now killed: ${names}`,
        ),
      );
    }
  }

  override async teardown(): Promise<void> {
    spawning.spawn = this.originalSpawn;
    await this.stopLeftovers();
    await super.teardown();
  }

  /** Kills every child still running; returns those the file never signalled. */
  private async stopLeftovers(): Promise<ChildProcess[]> {
    const left = [...this.children].filter(running);
    const neverSignalled = left.filter((c) => !c.killed);
    this.children.clear();
    await Promise.all(
      left.map(async (c) => {
        if (c.killed && (await exited(c, SIGNALLED_GRACE_MS))) return;
        c.kill('SIGKILL');
        await exited(c, SIGNALLED_GRACE_MS);
      }),
    );
    return neverSignalled;
  }
}
