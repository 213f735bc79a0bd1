import { ADMIN_ROUTES, HEADERS, usableCorrelationId } from '@app/contracts';
import type { MercuriusDriverConfig } from '@nestjs/mercurius';
import type { FastifyRequest } from 'fastify';
import type { AdminSettings } from '../settings/admin-settings';
import type { GraphQLContext } from './graphql-context';
import { introspectionAuth } from './introspection-auth';
import { formatAndLogErrors } from './operation-error-log';
import type { ListSizesService } from './list-sizes.service';
import { MAX_QUERY_TOKENS, queryRules, queryShape, queryTokens } from './query-limits';
import { refusal, requestAuth } from './request-auth';
import { subscriptionsOverWebSocket } from './subscription-transport';

/** Sent by the server on idle subscriptions, so proxies keep them open. */
const KEEP_ALIVE_MS = 15_000;

/**
 * Mercurius on the app's Fastify: /graphql for queries and mutations, graphql-ws
 * (graphql-transport-ws) subscriptions on the same path. The schema is built in memory at start;
 * the committed schema.gql is written by `npm run schema` and checked by a test.
 */
export function graphqlOptions(
  settings: AdminSettings,
  sizes: ListSizesService,
): MercuriusDriverConfig {
  return {
    path: ADMIN_ROUTES.graphql,
    autoSchemaFile: true,
    sortSchema: true,
    // Mercurius's GraphiQL loads React and GraphiQL from a CDN; ours (graphiql/) is served locally.
    graphiql: false,
    // The parser's own bound, behind the preParsing hook's count (which gives the clearer error).
    graphql: { parseOptions: { maxTokens: MAX_QUERY_TOKENS + 1 } },
    // The cost depends on the variables (auditLog(limit: $n)) and on the store's size, so rules
    // run per request and Mercurius's query cache, which would skip them, stays off.
    cache: false,
    validationRules: queryRules(settings.production, () => sizes.current()),
    errorFormatter: formatAndLogErrors,
    hooks: {
      preParsing: [queryTokens],
      preValidation: [introspectionAuth(settings.tokens), subscriptionsOverWebSocket, queryShape],
    },
    context: (request: FastifyRequest): GraphQLContext => ({
      auth: requestAuth(request.headers, settings.tokens),
      deadline: Date.now() + settings.operationTimeoutMs,
      ...origin(request),
    }),
    subscription: {
      keepAlive: KEEP_ALIVE_MS,
      context: (_socket: unknown, request: FastifyRequest): GraphQLContext => ({
        auth: requestAuth(request.headers, settings.tokens),
        ...origin(request),
      }),
      // Browsers cannot set headers on a WebSocket: the token comes in connection_init's payload.
      onConnect: ({ payload }: { payload: unknown }): GraphQLContext | false => {
        const fields = isRecord(payload)
          ? isRecord(payload['headers'])
            ? payload['headers']
            : payload
          : {};
        const auth = requestAuth(fields, settings.tokens);
        return refusal('subscription', auth, settings.tokens) === undefined ? { auth } : false;
      },
    },
  };
}

/** Where a request came from, for the logs. */
function origin(request: FastifyRequest): Pick<GraphQLContext, 'client' | 'correlationId'> {
  const correlationId = usableCorrelationId(request.headers[HEADERS.correlationId.toLowerCase()]);
  return { client: request.ip, ...(correlationId !== undefined && { correlationId }) };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
