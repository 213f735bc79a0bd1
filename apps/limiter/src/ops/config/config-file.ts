// Only the config reader: config-thread loads this file, and the whole library would cost its start.
import { ConfigError } from '@app/contracts/config/config-error';
import type { GoccSettings } from '@app/contracts/config/gocc-default';
import { parseConfigFile, type LimiterConfig } from '@app/contracts/config/parse-config';
import type { QuotaSpec } from '@app/contracts/quota-spec';
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';

/** A config file this large is a mistake (or an attack on the parser), not a list of quotas. */
export const MAX_CONFIG_BYTES = 16 * 1024 * 1024;

/** What reading CONFIG_FILE gave, against the digest of the version read before. */
export type ConfigRead =
  /** The same bytes as last time: nothing to do. */
  | { readonly kind: 'unchanged' }
  /** Not read (missing, not a regular file, too large): no digest, so a fix is always seen. */
  | { readonly kind: 'unreadable'; readonly reason: string }
  | { readonly kind: 'invalid'; readonly digest: string; readonly reason: string }
  | { readonly kind: 'valid'; readonly digest: string; readonly config: LimiterConfig };

export interface ConfigReadOptions {
  readonly file: string;
  readonly gocc: GoccSettings;
  /** The digest of the version last read, valid or not. */
  readonly lastDigest: string | undefined;
}

/** What `stats` is, when it is not a regular file. */
function notRegular(stats: Stats): string | undefined {
  if (stats.isFile()) return undefined;
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isDirectory()) return 'a directory';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  return 'not a regular file';
}

function refuseUnlessRegular(stats: Stats): void {
  const kind = notRegular(stats);
  if (kind !== undefined) throw new Error(`is ${kind}; CONFIG_FILE must be a regular file`);
}

/**
 * The bytes of a regular file of at most MAX_CONFIG_BYTES. Anything else is refused without
 * waiting: a FIFO would block the open (no writer) or the read, a device such as /dev/zero never
 * ends. stat refuses them before any open (opening a device can act on it); the open cannot block
 * (O_NONBLOCK) and fstat checks what was opened, in case the path changed in between. A file that
 * grows while read is refused (the watch sees the write end and reads again).
 */
export function readRegularFile(path: string): Buffer {
  refuseUnlessRegular(statSync(path));
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    const stats = fstatSync(fd);
    refuseUnlessRegular(stats);
    if (stats.size > MAX_CONFIG_BYTES) {
      throw new Error(`is ${stats.size} bytes, more than the ${MAX_CONFIG_BYTES} allowed`);
    }
    const bytes = Buffer.alloc(stats.size + 1);
    let read = 0;
    for (let n = 1; n > 0 && read < bytes.length; read += n) {
      n = readSync(fd, bytes, read, bytes.length - read, read);
    }
    if (read > stats.size) throw new Error('grew while it was read');
    return bytes.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

function message(error: unknown): string {
  if (error instanceof ConfigError || error instanceof Error) return error.message;
  return String(error);
}

/**
 * What the config thread posts (config-thread.ts): a ConfigRead, the quotas of a valid config
 * left out; then, each time it is sent CONFIG_THREAD_NEXT, the next QUOTAS_PER_MESSAGE of them.
 * In small messages, because the event loop decodes each message in one go (60 000 quotas at once
 * took it 0.4-1.2 s) and a message is decoded only once it is asked for.
 */
export type ConfigThreadMessage =
  | Exclude<ConfigRead, { kind: 'valid' }>
  | {
      readonly kind: 'valid';
      readonly digest: string;
      readonly config: Omit<LimiterConfig, 'quotas'> & { readonly quotaCount: number };
    }
  | { readonly kind: 'quotas'; readonly quotas: readonly QuotaSpec[] };

export const CONFIG_THREAD_NEXT = 'next';
export const QUOTAS_PER_MESSAGE = 200;

/** Reads and parses CONFIG_FILE (docs/contract.md, Config file). Never throws. */
export function readConfigFile({ file, gocc, lastDigest }: ConfigReadOptions): ConfigRead {
  let bytes: Buffer;
  try {
    bytes = readRegularFile(file);
  } catch (error) {
    return { kind: 'unreadable', reason: `CONFIG_FILE ${file}: cannot read: ${message(error)}` };
  }
  const digest = createHash('sha256').update(bytes).digest('hex');
  if (digest === lastDigest) return { kind: 'unchanged' };
  try {
    const config = parseConfigFile(bytes.toString('utf8'), { gocc, source: file });
    return { kind: 'valid', digest, config };
  } catch (error) {
    return { kind: 'invalid', digest, reason: message(error) };
  }
}
