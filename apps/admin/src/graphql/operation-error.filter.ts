import { Catch, type ArgumentsHost } from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import { GqlArgumentsHost, type GqlContextType, type GqlExceptionFilter } from '@nestjs/graphql';
import type { GraphQLResolveInfo } from 'graphql';
import type { GraphQLContext } from './graphql-context';
import { logOperationError } from './operation-error-log';

/**
 * Every error a resolver, guard or interceptor throws, logged rate-limited (operation-error-log.ts)
 * and answered as it is. Nest's default logs each one with its stack, so a flood of bad input
 * would write a stack trace per request. HTTP routes (`/healthz`) keep Nest's own handling.
 */
@Catch()
export class OperationErrorFilter extends BaseExceptionFilter implements GqlExceptionFilter {
  override catch(exception: unknown, host: ArgumentsHost): unknown {
    if (host.getType<GqlContextType>() !== 'graphql') return super.catch(exception, host);
    const gql = GqlArgumentsHost.create(host);
    logOperationError(
      exception,
      gql.getContext<GraphQLContext | undefined>(),
      gql.getInfo<GraphQLResolveInfo | undefined>(),
    );
    return exception;
  }
}
