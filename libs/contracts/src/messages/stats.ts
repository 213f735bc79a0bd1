import { Type, type Static } from '@sinclair/typebox';
import { KeySchema, QuotaNameSchema } from './fields';

export const StatsRequestSchema = Type.Object(
  { key: KeySchema, quota: Type.Optional(QuotaNameSchema) },
  { errorMessage: 'must be a JSON object' },
);
export type StatsRequest = Static<typeof StatsRequestSchema>;

const Count = Type.Integer({ minimum: 0 });

export const LimitStatsSchema = Type.Object({
  name: Type.String(),
  unit: Type.String(),
  limit: Count,
  used: Count,
  remaining: Count,
  resetMs: Count,
});
export type LimitStats = Static<typeof LimitStatsSchema>;

export const KeyStatsSchema = Type.Object({
  key: Type.String(),
  quota: Type.String(),
  limits: Type.Array(LimitStatsSchema),
  queued: Count,
  inFlight: Count,
  /** In the current window of the first limit. */
  approved: Count,
  denied: Count,
  /**
   * Where these counts live: `local`, this replica's memory (each replica admits up to the limit
   * on its own); `cluster`, Redis, shared by every replica. Set by the limiter; added in v1.
   */
  scope: Type.Optional(Type.Union([Type.Literal('local'), Type.Literal('cluster')])),
});
export type KeyStats = Static<typeof KeyStatsSchema>;
