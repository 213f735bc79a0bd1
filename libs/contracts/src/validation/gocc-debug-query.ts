import { DEBUG_LIST_QUERY } from '../routes';
import { fieldFailure, type ParseResult } from './parse-result';

/** Page sizes of `GET /debug` (docs/contract.md, HTTP): a page's work is bounded by the max. */
export const DEBUG_LIST_DEFAULT_LIMIT = 100;
export const DEBUG_LIST_MAX_LIMIT = 1_000;

/** Where a listing resumes: the position the previous page's `NextCursor` encodes. */
export interface DebugListCursor {
  readonly shard: number;
  readonly table: number;
  readonly row: number;
}

export interface DebugListOptions {
  readonly limit: number;
  readonly cursor?: DebugListCursor;
}

const LIMIT = /^[0-9]{1,7}$/;
const CURSOR = /^([0-9]{1,9})-([0-9]{1,9})-([0-9]{1,12})$/;

type QueryValue = string | readonly string[] | undefined;

/** The cursor a page hands out; `parseGoccDebugListQuery` reads it back. */
export function encodeDebugListCursor(cursor: DebugListCursor): string {
  return `${cursor.shard}-${cursor.table}-${cursor.row}`;
}

/** Parses `?limit=&cursor=`; a bad value is a 400 naming the parameter. */
export function parseGoccDebugListQuery(
  query: Readonly<Record<string, QueryValue>>,
): ParseResult<DebugListOptions> {
  const limitText = query[DEBUG_LIST_QUERY.limit];
  const cursorText = query[DEBUG_LIST_QUERY.cursor];
  if (limitText !== undefined && typeof limitText !== 'string') {
    return fieldFailure(DEBUG_LIST_QUERY.limit, 'must be given at most once');
  }
  if (cursorText !== undefined && typeof cursorText !== 'string') {
    return fieldFailure(DEBUG_LIST_QUERY.cursor, 'must be given at most once');
  }
  let limit = DEBUG_LIST_DEFAULT_LIMIT;
  if (limitText !== undefined) {
    limit = LIMIT.test(limitText) ? Number(limitText) : 0;
    if (limit < 1 || limit > DEBUG_LIST_MAX_LIMIT) {
      return fieldFailure(DEBUG_LIST_QUERY.limit, `must be an integer 1..${DEBUG_LIST_MAX_LIMIT}`);
    }
  }
  if (cursorText === undefined) return { ok: true, value: { limit } };
  const parts = CURSOR.exec(cursorText);
  if (parts === null) {
    return fieldFailure(DEBUG_LIST_QUERY.cursor, 'must be the NextCursor of an earlier page');
  }
  const cursor = { shard: Number(parts[1]), table: Number(parts[2]), row: Number(parts[3]) };
  return { ok: true, value: { limit, cursor } };
}
