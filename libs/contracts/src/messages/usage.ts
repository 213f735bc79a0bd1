import { Type, type Static } from '@sinclair/typebox';
import { CostSchema, KeySchema, QuotaNameSchema, RequestIdSchema } from './fields';
import { KeyStatsSchema } from './stats';

/**
 * With the requestId of an admitted request: settles its estimate to this actual cost. Without:
 * records usage that was never acquired. `cost` follows the acquire rules (requests default 1).
 */
export const UsageRequestSchema = Type.Object(
  {
    key: KeySchema,
    quota: Type.Optional(QuotaNameSchema),
    requestId: Type.Optional(RequestIdSchema),
    cost: CostSchema,
  },
  { errorMessage: 'must be a JSON object' },
);
export type UsageRequest = Static<typeof UsageRequestSchema>;

export const UsageReplySchema = Type.Object({ ok: Type.Literal(true), usage: KeyStatsSchema });
export type UsageReply = Static<typeof UsageReplySchema>;
