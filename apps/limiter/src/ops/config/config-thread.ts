/**
 * The config thread's entry: reads and parses CONFIG_FILE off the event loop, then hands the
 * quotas over a few at a time as they are asked for (ConfigThreadMessage). Built as an entry of
 * its own beside the limiter's bundle (apps/limiter/webpack.config.js); from sources, loaded
 * through the TypeScript loader (config-reader.ts).
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import {
  CONFIG_THREAD_NEXT,
  QUOTAS_PER_MESSAGE,
  readConfigFile,
  type ConfigReadOptions,
  type ConfigThreadMessage,
} from './config-file';

function run(port: MessagePort, options: ConfigReadOptions): void {
  const read = readConfigFile(options);
  if (read.kind !== 'valid') {
    port.postMessage(read satisfies ConfigThreadMessage);
    return;
  }
  const { quotas, ...rest } = read.config;
  const header: ConfigThreadMessage = {
    kind: 'valid',
    digest: read.digest,
    config: { ...rest, quotaCount: quotas.length },
  };
  port.postMessage(header);
  let sent = 0;
  port.on('message', (request: unknown) => {
    if (request !== CONFIG_THREAD_NEXT) return;
    const next = quotas.slice(sent, sent + QUOTAS_PER_MESSAGE);
    sent += next.length;
    port.postMessage({ kind: 'quotas', quotas: next } satisfies ConfigThreadMessage);
  });
}

const data = workerData as { options?: ConfigReadOptions } | undefined;
if (parentPort !== null && data?.options !== undefined) run(parentPort, data.options);
