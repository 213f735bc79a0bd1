import { Type, type Static } from '@sinclair/typebox';
import { ReplyCodeSchema } from './acquire';

/**
 * The reply to a release, usage or stats request that could not be served (acquire, decide and
 * batch entries answer a full AcquireReply instead). `allowed: false` and `code` as everywhere;
 * `ok: false` so usage clients that test `ok` see the failure; `field` names the bad field.
 */
export const ErrorReplySchema = Type.Object({
  ok: Type.Literal(false),
  allowed: Type.Literal(false),
  code: ReplyCodeSchema,
  reason: Type.String(),
  field: Type.Optional(Type.String()),
});
export type ErrorReply = Static<typeof ErrorReplySchema>;
