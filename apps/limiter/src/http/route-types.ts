/** Request shapes of the limiter's routes, as Fastify hands them over. */

export type QueryValues = Record<string, string | string[] | undefined>;

/** Bodies arrive as raw bytes (see raw-body.ts); undefined when the request had none. */
export type RawBody = Buffer | undefined;

export interface RateRoute {
  Params: { key: string };
  Querystring: QueryValues;
}

export interface GoccReleaseRoute {
  Params: { key: string; requestId: string };
}

export interface DebugRoute {
  Params: { key: string };
}

export interface DebugListRoute {
  Querystring: QueryValues;
}

export interface JsonRoute {
  Body: RawBody;
}

export interface StatsRoute {
  Params: { key: string };
  Querystring: QueryValues;
}
