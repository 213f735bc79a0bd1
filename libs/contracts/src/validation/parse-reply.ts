import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { AcquireReplySchema, type AcquireReply } from '../messages/acquire';
import { BatchReplySchema, type BatchReply } from '../messages/batch';
import { ErrorReplySchema, type ErrorReply } from '../messages/error-reply';
import { ReleaseReplySchema, type ReleaseReply } from '../messages/release';
import { KeyStatsSchema, type KeyStats } from '../messages/stats';
import { UsageReplySchema, type UsageReply } from '../messages/usage';
import { explainSchemaFailure } from './explain';
import { fieldFailure, type ParseResult } from './parse-result';

/**
 * The replies a limiter sends, checked as a client receives them: a reply is believed only in the
 * contract's shape. Compiled schema checks (a batch of 500 replies in microseconds, against the
 * milliseconds its JSON.parse takes); only a refused reply pays for the explanation.
 */

const acquireReply = TypeCompiler.Compile(AcquireReplySchema);
const batchReply = TypeCompiler.Compile(BatchReplySchema);
const errorReply = TypeCompiler.Compile(ErrorReplySchema);

/** `allowed` is true exactly on OK (shadow replies too): a reply saying otherwise contradicts itself. */
const INCOHERENT = 'must be true exactly when code is OK';

function incoherent(reply: AcquireReply): boolean {
  return reply.allowed !== (reply.code === 'OK');
}

function checked<T>(check: TypeCheck<TSchema>): (value: unknown) => ParseResult<T> {
  return (value) =>
    check.Check(value) ? { ok: true, value: value as T } : explainSchemaFailure(check, value);
}

export function parseAcquireReply(value: unknown): ParseResult<AcquireReply> {
  if (!acquireReply.Check(value)) return explainSchemaFailure(acquireReply, value);
  if (incoherent(value)) return fieldFailure('allowed', INCOHERENT);
  return { ok: true, value };
}

/** The reply to a batch of `entries` requests: exactly one coherent AcquireReply per request. */
export function parseBatchReply(value: unknown, entries: number): ParseResult<BatchReply> {
  if (!batchReply.Check(value)) return explainSchemaFailure(batchReply, value);
  const replies = value.replies;
  if (replies.length !== entries) {
    return fieldFailure(
      'replies',
      `must hold one reply per request (${entries}), holds ${replies.length}`,
    );
  }
  for (let i = 0; i < replies.length; i++) {
    if (incoherent(replies[i]!)) return fieldFailure(`replies[${i}].allowed`, INCOHERENT);
  }
  return { ok: true, value };
}

/** A refusal of the whole request: never with code OK, which would admit what it refuses. */
export function parseErrorReply(value: unknown): ParseResult<ErrorReply> {
  if (!errorReply.Check(value)) return explainSchemaFailure(errorReply, value);
  if (value.code === 'OK') return fieldFailure('code', 'must not be OK in an ErrorReply');
  return { ok: true, value };
}

export const parseReleaseReply: (value: unknown) => ParseResult<ReleaseReply> = checked(
  TypeCompiler.Compile(ReleaseReplySchema),
);
export const parseUsageReply: (value: unknown) => ParseResult<UsageReply> = checked(
  TypeCompiler.Compile(UsageReplySchema),
);
export const parseKeyStatsReply: (value: unknown) => ParseResult<KeyStats> = checked(
  TypeCompiler.Compile(KeyStatsSchema),
);
