/**
 * The admin's GraphQL API from the browser: queries and mutations over POST /graphql, the live
 * stats over graphql-ws on the same path. The token rides in Authorization (and in connection_init
 * for the WebSocket), as docs/contract.md says.
 */
import { createClient, type Client } from 'graphql-ws';
import { ConsoleError, fromGraphQLErrors } from './errors';
import type { TypedDocumentString } from './generated';

const GRAPHQL_PATH = '/graphql';

export type Variables<V> = V extends Record<string, never> ? undefined : V;

export class AdminApi {
  private ws: Client | undefined;
  /** Every live subscription's state callback: the one socket tells them all. */
  private readonly stateListeners = new Set<
    (state: 'live' | 'reconnecting', why?: string) => void
  >();

  constructor(private readonly token: string) {}

  private headers(): Record<string, string> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.token !== '') headers['authorization'] = `Bearer ${this.token}`;
    return headers;
  }

  /** One query or mutation; throws a ConsoleError naming what went wrong. */
  async request<R, V>(document: TypedDocumentString<R, V>, variables?: V): Promise<R> {
    let response: Response;
    try {
      response = await fetch(GRAPHQL_PATH, {
        method: 'POST',
        headers: this.headers(),
        body: JSON.stringify({ query: document.toString(), variables: variables ?? {} }),
      });
    } catch {
      throw new ConsoleError('the admin cannot be reached', 'NETWORK');
    }
    let body: { data?: R | null; errors?: unknown[] };
    try {
      body = (await response.json()) as typeof body;
    } catch {
      throw new ConsoleError(`the admin answered ${response.status} without JSON`, 'UNKNOWN');
    }
    if (Array.isArray(body.errors) && body.errors.length > 0) {
      throw fromGraphQLErrors(body.errors as Parameters<typeof fromGraphQLErrors>[0]);
    }
    if (body.data === undefined || body.data === null) {
      throw new ConsoleError(`the admin answered ${response.status} without data`, 'UNKNOWN');
    }
    return body.data;
  }

  /**
   * A subscription that lives until the returned function is called or the admin ends it. The
   * socket reconnects with backoff while the console is open, but an admin that shuts down
   * completes its subscriptions: a caller that must outlive a restart subscribes again when its
   * updates stop (the Live page does).
   */
  subscribe<R, V>(
    document: TypedDocumentString<R, V>,
    onData: (data: R) => void,
    onState: (state: 'live' | 'reconnecting', why?: string) => void,
  ): () => void {
    const client = this.socket();
    this.stateListeners.add(onState);
    const stop = client.subscribe<R>(
      { query: document.toString() },
      {
        next: (result) => {
          if (result.errors !== undefined && result.errors.length > 0) {
            onState('reconnecting', fromGraphQLErrors(result.errors).message);
          } else if (result.data !== undefined && result.data !== null) {
            onData(result.data);
          }
        },
        error: (error) => onState('reconnecting', String(error)),
        complete: () => undefined,
      },
    );
    return () => {
      this.stateListeners.delete(onState);
      stop();
    };
  }

  private tell(state: 'live' | 'reconnecting', why?: string): void {
    for (const listener of this.stateListeners) listener(state, why);
  }

  private socket(): Client {
    this.ws ??= createClient({
      url: `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${GRAPHQL_PATH}`,
      connectionParams: this.token === '' ? {} : { Authorization: `Bearer ${this.token}` },
      lazy: true,
      retryAttempts: Number.POSITIVE_INFINITY,
      shouldRetry: () => true,
      // 0.5 s, 1 s, 2 s, … up to 5 s, with jitter: an admin restart is back within seconds.
      retryWait: (retries) =>
        new Promise((resolve) =>
          setTimeout(resolve, Math.min(5_000, 500 * 2 ** retries) * (0.75 + Math.random() / 2)),
        ),
      on: {
        connected: () => this.tell('live'),
        closed: () => this.tell('reconnecting', 'the connection to the admin closed'),
      },
    });
    return this.ws;
  }

  close(): void {
    void this.ws?.dispose();
    this.ws = undefined;
  }
}
