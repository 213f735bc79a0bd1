import { Type, type Static } from '@sinclair/typebox';
import { REPLY_CODES } from '../codes';
import {
  BooleanSchema,
  CostSchema,
  CountSchema,
  EpochMsSchema,
  KeySchema,
  QuotaNameSchema,
  RequestIdSchema,
} from './fields';

/** Also the body of `decide` and of every batch entry. Unknown extra fields are ignored. */
export const AcquireRequestSchema = Type.Object(
  {
    key: KeySchema,
    quota: Type.Optional(QuotaNameSchema),
    cost: Type.Optional(CostSchema),
    wait: Type.Optional(BooleanSchema),
    maxWaitMs: Type.Optional(CountSchema),
    requestId: Type.Optional(RequestIdSchema),
    deadline: Type.Optional(EpochMsSchema),
  },
  { errorMessage: 'must be a JSON object' },
);
export type AcquireRequest = Static<typeof AcquireRequestSchema>;

export const ReplyCodeSchema = Type.Union(REPLY_CODES.map((code) => Type.Literal(code)));

export const AcquireReplySchema = Type.Object({
  allowed: Type.Boolean(),
  code: ReplyCodeSchema,
  requestId: Type.String(),
  key: Type.String(),
  quota: Type.String(),
  /** Size of the binding limit: least remaining relative to its size, or the one that refused. */
  limit: Type.Integer({ minimum: 0 }),
  remaining: Type.Integer({ minimum: 0 }),
  resetMs: Type.Integer({ minimum: 0 }),
  /** Never 0 on RATE_LIMITED. */
  retryAfterMs: Type.Integer({ minimum: 0 }),
  waitedMs: Type.Integer({ minimum: 0 }),
  limitName: Type.String(),
  leaseId: Type.Optional(Type.String()),
  shadow: Type.Boolean(),
  reason: Type.Optional(Type.String()),
});
export type AcquireReply = Static<typeof AcquireReplySchema>;
