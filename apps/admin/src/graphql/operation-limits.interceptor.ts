import {
  Inject,
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { GqlExecutionContext, type GqlContextType } from '@nestjs/graphql';
import {
  GraphQLError,
  Kind,
  OperationTypeNode,
  type DocumentNode,
  type GraphQLResolveInfo,
} from 'graphql';
import { throwError, timeout, type Observable } from 'rxjs';
import { ADMIN_SETTINGS, type AdminSettings } from '../settings/admin-settings';
import type { GraphQLContext } from './graphql-context';
import { ListSizesService } from './list-sizes.service';
import { queryRules, subscriptionProblems } from './query-limits';

/**
 * Runs around every root resolver (registered for the whole app; HTTP routes pass through).
 *
 * Queries and mutations have a deadline (GraphQLContext.deadline). A root field that would start
 * after it answers OPERATION_TIMEOUT without running, and a query's root field still waiting then
 * (the store's connection, the limiters) answers it too: its work goes on to its end, but nobody
 * waits for it. A mutation's root field is never cut short once started (its caller could not
 * know what was stored). Work on the event loop cannot be interrupted at all: the real bound on
 * it is the cost checked before the operation runs (query-limits.ts).
 *
 * Subscriptions are validated here, before they subscribe: Mercurius runs neither the spec's
 * validation nor the cost rules on them.
 */
@Injectable()
export class OperationLimitsInterceptor implements NestInterceptor {
  private readonly rules: ReturnType<typeof queryRules>;

  constructor(
    @Inject(ADMIN_SETTINGS) private readonly settings: AdminSettings,
    sizes: ListSizesService,
  ) {
    this.rules = queryRules(settings.production, () => sizes.current());
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType<GqlContextType>() !== 'graphql') return next.handle();
    const gql = GqlExecutionContext.create(context);
    const info = gql.getInfo<GraphQLResolveInfo>();
    if (info.operation.operation === OperationTypeNode.SUBSCRIPTION) {
      this.checkSubscription(info);
      return next.handle();
    }
    const { deadline } = gql.getContext<GraphQLContext>();
    if (deadline === undefined) return next.handle();
    const left = deadline - Date.now();
    if (left <= 0) throw this.timedOut();
    if (info.operation.operation === OperationTypeNode.MUTATION) return next.handle();
    return next
      .handle()
      .pipe(timeout({ first: left, with: () => throwError(() => this.timedOut()) }));
  }

  private timedOut(): GraphQLError {
    return new GraphQLError(
      `the operation was not answered within ${this.settings.operationTimeoutMs} ms ` +
        '(ADMIN_OPERATION_TIMEOUT_MS)',
      { extensions: { code: 'OPERATION_TIMEOUT' } },
    );
  }

  private checkSubscription(info: GraphQLResolveInfo): void {
    const document: DocumentNode = {
      kind: Kind.DOCUMENT,
      definitions: [info.operation, ...Object.values(info.fragments)],
    };
    const problems = subscriptionProblems(info.schema, document, info.variableValues, this.rules);
    const first = problems[0];
    if (first === undefined) return;
    throw new GraphQLError(problems.map((p) => p.message).join('; '), {
      extensions: { code: first.extensions['code'] ?? 'GRAPHQL_VALIDATION_FAILED' },
    });
  }
}
