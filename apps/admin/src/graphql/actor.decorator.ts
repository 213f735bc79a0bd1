import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { GqlExecutionContext } from '@nestjs/graphql';
import type { GraphQLContext } from './graphql-context';

/** The audit log's "who" for this request. */
export const Actor = createParamDecorator(
  (_: unknown, context: ExecutionContext): string =>
    GqlExecutionContext.create(context).getContext<GraphQLContext>().auth.actor,
);
