/**
 * Runs the real admin as a child process from its TypeScript sources, and talks GraphQL to it:
 * queries and mutations over HTTP, subscriptions over graphql-ws. Every wait is bounded.
 */
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { freePort, startApp, type LimiterProcess } from './limiter-process';

export type AdminProcess = LimiterProcess;

export async function startAdmin(
  env: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<AdminProcess> {
  const port = env['ADMIN_PORT'] !== undefined ? Number(env['ADMIN_PORT']) : await freePort();
  return startApp('admin', { ...env, ADMIN_PORT: String(port) }, port, timeoutMs);
}

export interface GqlResult<T = Record<string, unknown>> {
  status: number;
  data?: T | null;
  errors?: {
    message: string;
    path?: (string | number)[];
    extensions?: { code?: string; issues?: { field: string }[] };
  }[];
}

/** importConfig of a YAML document; `d` is the document. */
export const IMPORT_DOCUMENT =
  'mutation I($d: String!) { importConfig(document: $d, format: yaml) { quotas } }';

/** A config document of quotas named `names`, each matching `<name>-*`, 10 requests a second. */
export function quotaDocument(names: readonly string[]): string {
  const lines = names.map(
    (name) =>
      `  - { name: ${name}, match: "${name}-*", limits: [{ name: rps, limit: 10, window: 1s }] }`,
  );
  return `quotas:\n${lines.join('\n')}`;
}

/** One GraphQL operation over HTTP POST. */
export async function gql<T = Record<string, unknown>>(
  url: string,
  query: string,
  variables: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<GqlResult<T>> {
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, ...((await res.json()) as Omit<GqlResult<T>, 'status'>) };
}

/** The data of an operation that must succeed; throws with the errors otherwise. */
export async function gqlData<T = Record<string, unknown>>(
  url: string,
  query: string,
  variables: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<T> {
  const result = await gql<T>(url, query, variables, headers);
  if (result.errors !== undefined || result.data === undefined || result.data === null) {
    throw new Error(`GraphQL failed (${result.status}): ${JSON.stringify(result.errors)}`);
  }
  return result.data;
}

/** A graphql-ws client on the admin's /graphql; connectionParams carry the token. */
export function subscriptionClient(
  url: string,
  connectionParams: Record<string, unknown> = {},
): Client {
  return createClient({
    url: `${url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams,
    retryAttempts: 0,
    lazy: true,
  });
}

/** Collects a subscription's values until stopped. */
export function collect<T>(client: Client, query: string, variables: Record<string, unknown> = {}) {
  const values: T[] = [];
  const errors: unknown[] = [];
  const stop = client.subscribe<T>(
    { query, variables },
    {
      next: (value) => {
        if (value.data !== undefined && value.data !== null) values.push(value.data);
        if (value.errors !== undefined) errors.push(value.errors);
      },
      error: (error) => errors.push(error),
      complete: () => undefined,
    },
  );
  return { values, errors, stop };
}
