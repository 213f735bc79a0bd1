import type { RequestAuth } from './request-auth';

/** What every resolver finds in its context (HTTP requests and subscriptions alike). */
export interface GraphQLContext {
  readonly auth: RequestAuth;
}

declare module 'mercurius' {
  /** Mercurius merges what graphqlOptions' context functions answer into its own context. */
  interface MercuriusContext {
    readonly auth: RequestAuth;
  }
}
