import { Type, type Static } from '@sinclair/typebox';

/** `GET /debug/:key`, field names exactly as GoCC spells them. */
export const GoccDebugReplySchema = Type.Object({
  Key: Type.String(),
  Config: Type.Object({
    WindowMillis: Type.Integer({ minimum: 0 }),
    MaxRequestsPerWindow: Type.Integer({ minimum: 0 }),
    MaxRequestsInQueue: Type.Integer({ minimum: 0 }),
  }),
  NumApprovedThisWindow: Type.Integer({ minimum: 0 }),
  NumDeniedThisWindow: Type.Integer({ minimum: 0 }),
  NumWaiting: Type.Integer({ minimum: 0 }),
  Found: Type.Boolean(),
});
export type GoccDebugReply = Static<typeof GoccDebugReplySchema>;

/**
 * `GET /debug?limit=&cursor=`: GoCC's listing of instances, by key, one page at a time.
 * `NextCursor` is absent on the last page.
 */
export const GoccDebugPageSchema = Type.Object({
  Instances: Type.Record(Type.String(), GoccDebugReplySchema),
  NextCursor: Type.Optional(Type.String()),
});
export type GoccDebugPage = Static<typeof GoccDebugPageSchema>;
