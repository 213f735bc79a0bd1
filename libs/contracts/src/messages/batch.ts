import { Type, type Static } from '@sinclair/typebox';
import { AcquireReplySchema, AcquireRequestSchema } from './acquire';
import { MAX_BATCH_ENTRIES } from './limits';

const batchErrorMessage = `must be an array of at most ${MAX_BATCH_ENTRIES} acquire requests`;

export const BatchRequestSchema = Type.Object(
  {
    requests: Type.Array(AcquireRequestSchema, {
      maxItems: MAX_BATCH_ENTRIES,
      errorMessage: batchErrorMessage,
    }),
  },
  { errorMessage: 'must be a JSON object' },
);
export type BatchRequest = Static<typeof BatchRequestSchema>;

/**
 * The batch as a whole: entries are checked one by one afterwards, so that one bad entry is
 * answered INVALID_REQUEST in its place instead of failing the batch.
 */
export const BatchEnvelopeSchema = Type.Object(
  {
    requests: Type.Array(Type.Unknown(), {
      maxItems: MAX_BATCH_ENTRIES,
      errorMessage: batchErrorMessage,
    }),
  },
  { errorMessage: 'must be a JSON object' },
);

/** Same order as the requests. */
export const BatchReplySchema = Type.Object({ replies: Type.Array(AcquireReplySchema) });
export type BatchReply = Static<typeof BatchReplySchema>;
