import type { QuotaSpec } from '@app/contracts';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import {
  CONFIG_THREAD_NEXT,
  type ConfigRead,
  type ConfigReadOptions,
  type ConfigThreadMessage,
} from './config-file';

/** A read slower than this is given up (a parse of 16 MiB on a loaded machine takes about a minute). */
export const CONFIG_READ_TIMEOUT_MS = 300_000;

/**
 * config-thread's module: in the bundle, the entry webpack writes beside it; from sources, the
 * TypeScript file, which the thread loads through the same loader as the limiter (@swc-node).
 */
const FROM_SOURCES = __filename.endsWith('.ts');
const THREAD_ENTRY = join(__dirname, FROM_SOURCES ? 'config-thread.ts' : 'config-thread.js');
const THREAD_SOURCE = `const { workerData } = require('node:worker_threads');
const load = require('node:module').createRequire(workerData.entry);
if (workerData.fromSources) load('@swc-node/register');
load(workerData.entry);`;

/** A read under way in the config thread. */
export interface ConfigReading {
  readonly result: Promise<ConfigRead>;
  /** Ends the thread; `result` answers unreadable if it had not answered yet. */
  cancel(): void;
}

/**
 * Reads and parses CONFIG_FILE in a thread of its own (readConfigFile), so that neither a large
 * file nor a slow disk holds the event loop; the quotas of a valid file come back in small
 * messages, one per turn of the event loop. One thread per read: its memory (the parser's is
 * over 100 times the file) is given back when it ends, and a thread that fails or runs out of
 * memory fails that read alone.
 */
export function readConfigInThread(
  options: ConfigReadOptions,
  timeoutMs = CONFIG_READ_TIMEOUT_MS,
): ConfigReading {
  const unreadable = (why: string): ConfigRead => ({
    kind: 'unreadable',
    reason: `CONFIG_FILE ${options.file}: cannot read: ${why}`,
  });
  let worker: Worker;
  try {
    worker = new Worker(THREAD_SOURCE, {
      eval: true,
      workerData: { entry: THREAD_ENTRY, fromSources: FROM_SOURCES, options },
      // None of the parent's flags: --inspect or a heap snapshot flag would apply twice.
      execArgv: [],
    });
  } catch (error) {
    const why = `no config thread (${error instanceof Error ? error.message : String(error)})`;
    return { result: Promise.resolve(unreadable(why)), cancel: () => undefined };
  }
  let settle: (read: ConfigRead) => void = () => undefined;
  const result = new Promise<ConfigRead>((resolve) => {
    let done = false;
    settle = (read) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      void worker.terminate();
      resolve(read);
    };
    const timer = setTimeout(
      () => settle(unreadable(`not read within ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
    let header: Extract<ConfigThreadMessage, { kind: 'valid' }> | undefined;
    const quotas: QuotaSpec[] = [];
    worker.on('message', (message: ConfigThreadMessage) => {
      if (message.kind === 'quotas') quotas.push(...message.quotas);
      else if (message.kind === 'valid') header = message;
      else return settle(message);
      if (header === undefined) return settle(unreadable('the config thread answered out of turn'));
      const { quotaCount, ...config } = header.config;
      if (quotas.length < quotaCount) worker.postMessage(CONFIG_THREAD_NEXT);
      else settle({ kind: 'valid', digest: header.digest, config: { ...config, quotas } });
    });
    worker.on('error', (error) =>
      settle(unreadable(`the config thread failed (${error.message})`)),
    );
    worker.on('exit', (code) => settle(unreadable(`the config thread exited (${code})`)));
  });
  return { result, cancel: () => settle(unreadable('the limiter is stopping')) };
}
