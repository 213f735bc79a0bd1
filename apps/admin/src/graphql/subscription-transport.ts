import { OperationTypeNode, getOperationAST } from 'graphql';
import { ErrorWithProps, type preValidationHookHandler } from 'mercurius';

/**
 * A Mercurius preValidation hook, which runs for HTTP requests only: a subscription sent as an
 * HTTP POST would run its field once with no event and answer "Cannot return null for
 * non-nullable field" (GraphiQL does that when run just after typing). It is refused, saying
 * where subscriptions are served. GET already allows queries only.
 */
export const subscriptionsOverWebSocket: preValidationHookHandler = (
  _schema,
  document,
  context,
) => {
  const body = context.reply.request.body as { operationName?: unknown } | undefined;
  const name = typeof body?.operationName === 'string' ? body.operationName : undefined;
  if (getOperationAST(document, name)?.operation !== OperationTypeNode.SUBSCRIPTION) return;
  throw new ErrorWithProps(
    'subscriptions are served over WebSocket on /graphql (graphql-ws, protocol ' +
      'graphql-transport-ws), not over HTTP',
    { code: 'BAD_REQUEST' },
    400,
  );
};
