import { HEADERS, usableCorrelationId } from '@app/contracts';
import { ThrottledLog } from '@app/logging';
import { GraphQLError, type ExecutionResult, type GraphQLResolveInfo } from 'graphql';
import { defaultErrorFormatter, type MercuriusContext } from 'mercurius';
import type { GraphQLContext } from './graphql-context';

// Clients cause these at will: a flood of them writes a bounded number of lines.
const refusals = new ThrottledLog('GraphQL', 'graphql.refused', 'warn');
const failures = new ThrottledLog('GraphQL', 'graphql.error', 'error');

/**
 * An operation's root field that answered an error. One of ours (a GraphQLError with a code:
 * BAD_USER_INPUT naming the fields, NOT_FOUND, UNAUTHENTICATED, UNAVAILABLE, OPERATION_TIMEOUT...)
 * is a warning without a stack; anything else is a bug, logged with its stack. Both carry the
 * client's address and X-Correlation-ID when it sent one.
 */
export function logOperationError(
  error: unknown,
  context: GraphQLContext | undefined,
  info: GraphQLResolveInfo | undefined,
): void {
  const rootField = info?.fieldName ?? '(unknown)';
  const where = {
    rootField,
    operation: info?.operation.operation,
    client: context?.client,
    correlationId: context?.correlationId,
  };
  const code = error instanceof GraphQLError ? error.extensions['code'] : undefined;
  if (error instanceof GraphQLError && typeof code === 'string') {
    refusals.write(() => ({
      msg: `${rootField}: ${code}: ${error.message}`,
      code,
      field: firstIssueField(error),
      ...where,
    }));
    return;
  }
  failures.write(() => ({
    msg: `${rootField}: ${error instanceof Error ? error.message : String(error)}`,
    ...where,
    ...(error instanceof Error && { err: error }),
  }));
}

function firstIssueField(error: GraphQLError): string | undefined {
  const issues = error.extensions['issues'];
  const first: unknown = Array.isArray(issues) ? issues[0] : undefined;
  const field =
    typeof first === 'object' && first !== null ? (first as { field?: unknown }).field : undefined;
  return typeof field === 'string' ? field : undefined;
}

/**
 * Mercurius's error formatter, unchanged in what it answers, also logs the operations refused
 * before any resolver ran (the parser's and the hooks' refusals: QUERY_TOO_COMPLEX, BAD_REQUEST,
 * introspection without the read token, validation failures), as refusals. An error with a `path`
 * came from a resolver, which the exception filter logged already.
 */
export function formatAndLogErrors(
  execution: ExecutionResult & Required<Pick<ExecutionResult, 'errors'>>,
  context: MercuriusContext,
): ReturnType<typeof defaultErrorFormatter> {
  const early = execution.errors.find((e) => e.path === undefined);
  if (early !== undefined) {
    const request = context.reply?.request;
    const code = early.extensions?.['code'];
    const correlationId = usableCorrelationId(
      request?.headers[HEADERS.correlationId.toLowerCase()],
    );
    refusals.write(() => ({
      msg: `${typeof code === 'string' ? `${code}: ` : ''}${early.message}`,
      code: typeof code === 'string' ? code : 'GRAPHQL_VALIDATION_FAILED',
      client: request?.ip,
      correlationId,
    }));
  }
  return defaultErrorFormatter(execution, context);
}
