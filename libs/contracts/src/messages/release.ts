import { Type, type Static } from '@sinclair/typebox';
import { KeySchema, QuotaNameSchema, RequestIdSchema } from './fields';

/** Names the request by `requestId` or its concurrency lease by `leaseId`; unknown ids release nothing. */
export const ReleaseRequestSchema = Type.Object(
  {
    key: KeySchema,
    quota: Type.Optional(QuotaNameSchema),
    requestId: Type.Optional(RequestIdSchema),
    leaseId: Type.Optional(RequestIdSchema),
  },
  { errorMessage: 'must be a JSON object' },
);
export type ReleaseRequest = Static<typeof ReleaseRequestSchema>;

export const ReleaseReplySchema = Type.Object({ released: Type.Boolean() });
export type ReleaseReply = Static<typeof ReleaseReplySchema>;
