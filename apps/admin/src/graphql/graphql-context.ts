import type { RequestAuth } from './request-auth';

/** What every resolver finds in its context (HTTP requests and subscriptions alike). */
export interface GraphQLContext {
  readonly auth: RequestAuth;
  /**
   * Epoch ms by which a query or mutation must be answered (ADMIN_OPERATION_TIMEOUT_MS after it
   * arrived); absent for subscriptions, which last as long as the client wants.
   */
  readonly deadline?: number;
  /** For the logs: the client's address, and the X-Correlation-ID it sent (when usable). */
  readonly client?: string;
  readonly correlationId?: string;
}

declare module 'mercurius' {
  /** Mercurius merges what graphqlOptions' context functions answer into its own context. */
  interface MercuriusContext {
    readonly auth: RequestAuth;
  }
}
