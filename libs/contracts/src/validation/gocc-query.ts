import { GOCC_QUERY } from '../routes';
import { fieldFailure, type ParseResult } from './parse-result';

/** Query parameters of GoCC's `/rate/:key`. */
export interface GoccRateOptions {
  readonly canWait: boolean;
  /** Client override of the limit; the transport answers 403 unless REQUESTS_CAN_SET_RATE. */
  readonly maxRequests?: number;
  /** Client override of the queue size; 403 unless REQUESTS_CAN_MOD_QUEUE. */
  readonly maxRequestsInQueue?: number;
}

/** The spellings Go's strconv.ParseBool accepts, which is what GoCC clients send. */
const GO_BOOLEANS: ReadonlyMap<string, boolean> = new Map([
  ['1', true],
  ['t', true],
  ['T', true],
  ['true', true],
  ['TRUE', true],
  ['True', true],
  ['0', false],
  ['f', false],
  ['F', false],
  ['false', false],
  ['FALSE', false],
  ['False', false],
]);
const DECIMAL = /^[0-9]{1,15}$/;
/** Largest override: beyond it a limit or a queue no longer limits anything. */
const MAX_GOCC_OVERRIDE = 1_000_000_000;

type QueryValue = string | readonly string[] | undefined;

function single(
  query: Readonly<Record<string, QueryValue>>,
  name: string,
): ParseResult<string | undefined> {
  const value = query[name];
  if (value === undefined || typeof value === 'string') return { ok: true, value };
  return fieldFailure(name, 'must be given at most once');
}

function count(
  query: Readonly<Record<string, QueryValue>>,
  name: string,
  min: number,
): ParseResult<number | undefined> {
  const text = single(query, name);
  if (!text.ok) return text;
  if (text.value === undefined) return { ok: true, value: undefined };
  const rule = `must be an integer ${min}..${MAX_GOCC_OVERRIDE}`;
  if (!DECIMAL.test(text.value)) return fieldFailure(name, rule);
  const value = Number(text.value);
  if (value < min || value > MAX_GOCC_OVERRIDE) return fieldFailure(name, rule);
  return { ok: true, value };
}

/**
 * Parses `?canWait=&maxRequests=&maxRequestsInQueue=`; a bad value is a 400. maxRequests is
 * 1..10^9 and the queue 0..10^9 (docs/contract.md, HTTP).
 */
export function parseGoccRateQuery(
  query: Readonly<Record<string, QueryValue>>,
): ParseResult<GoccRateOptions> {
  const canWaitText = single(query, GOCC_QUERY.canWait);
  if (!canWaitText.ok) return canWaitText;
  const canWait = canWaitText.value === undefined ? false : GO_BOOLEANS.get(canWaitText.value);
  if (canWait === undefined) return fieldFailure(GOCC_QUERY.canWait, 'must be true or false');
  const maxRequests = count(query, GOCC_QUERY.maxRequests, 1);
  if (!maxRequests.ok) return maxRequests;
  const maxRequestsInQueue = count(query, GOCC_QUERY.maxRequestsInQueue, 0);
  if (!maxRequestsInQueue.ok) return maxRequestsInQueue;
  const options: { canWait: boolean; maxRequests?: number; maxRequestsInQueue?: number } = {
    canWait,
  };
  if (maxRequests.value !== undefined) options.maxRequests = maxRequests.value;
  if (maxRequestsInQueue.value !== undefined) options.maxRequestsInQueue = maxRequestsInQueue.value;
  return { ok: true, value: options };
}
