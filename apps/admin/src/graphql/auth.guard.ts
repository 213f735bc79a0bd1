import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { GqlExecutionContext } from '@nestjs/graphql';
import { GraphQLError, type GraphQLResolveInfo } from 'graphql';
import { ADMIN_SETTINGS, type AdminSettings } from '../settings/admin-settings';
import type { GraphQLContext } from './graphql-context';
import { refusal } from './request-auth';

/** Applied to every resolver: the operation's kind decides which token it needs. */
@Injectable()
export class AdminAuthGuard implements CanActivate {
  constructor(@Inject(ADMIN_SETTINGS) private readonly settings: AdminSettings) {}

  canActivate(context: ExecutionContext): boolean {
    const gql = GqlExecutionContext.create(context);
    const info = gql.getInfo<GraphQLResolveInfo>();
    const { auth } = gql.getContext<GraphQLContext>();
    const why = refusal(info.operation.operation, auth, this.settings.tokens);
    if (why === undefined) return true;
    throw new GraphQLError(why, { extensions: { code: 'UNAUTHENTICATED' } });
  }
}
