import type { RequestAuth } from './request-auth';

/** What every resolver finds in its context (HTTP requests and subscriptions alike). */
export interface GraphQLContext {
  readonly auth: RequestAuth;
}
