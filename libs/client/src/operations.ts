import type { KeyStats } from '@app/contracts/messages/stats';
import type { ParseResult } from '@app/contracts/validation/parse-result';
import type { ReleaseReply } from '@app/contracts/messages/release';
import type { UsageReply } from '@app/contracts/messages/usage';
import {
  parseKeyStatsReply,
  parseReleaseReply,
  parseUsageReply,
} from '@app/contracts/validation/parse-reply';
import { checkRelease, checkStats, checkUsage } from './validate';

/** A call that is not a decision: its request's check before sending, its reply's on arrival. */
export interface Operation<T> {
  readonly check: (request: unknown) => void;
  readonly parseReply: (reply: unknown) => ParseResult<T>;
}

export const RELEASE: Operation<ReleaseReply> = {
  check: checkRelease,
  parseReply: parseReleaseReply,
};
export const USAGE: Operation<UsageReply> = { check: checkUsage, parseReply: parseUsageReply };
export const STATS: Operation<KeyStats> = { check: checkStats, parseReply: parseKeyStatsReply };
