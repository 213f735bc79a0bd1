/**
 * One slice of a quota's stored keys, as a restore loads them: key i is entry i of each column.
 * Built by SQLite's own aggregates (JSON and hex text), so the thread handles one row a slice, and
 * the event loop parses the keys with JSON.parse, not a value at a time.
 */
export interface ReadSlice {
  /** JSON array of the keys. */
  readonly keys: string;
  readonly layouts: Int32Array;
  /** Numbers stored per key. */
  readonly strides: Int32Array;
  /** The keys' numbers one after the other. */
  readonly state: Float64Array;
  /** JSON array of each key's leases (JSON text) or null. */
  readonly leases: string;
  /** The last slice of this read. */
  readonly done: boolean;
}

/**
 * One row of STORE_SQL.readSlice: the keys (JSON), their layouts (JSON), their numbers in hex
 * (one string), the byte length of each key's numbers (JSON), their leases (JSON), how many keys,
 * and the last key. Undefined when there is nothing to read.
 */
export type SliceRow = [string, string, string | null, string, string, number, string | null];

/**
 * A slice as the event loop loads it, and the key the next slice starts after (undefined after
 * the last one). Runs in the store thread too, from its source text: it uses nothing but its
 * parameters and JavaScript's globals.
 */
export function sliceOf(
  row: SliceRow | undefined,
  limit: number,
): { slice: ReadSlice; last: string | undefined } {
  const count = row?.[5] ?? 0;
  const hex = row?.[2] ?? '';
  const state = new Float64Array(hex.length / 16);
  Buffer.from(state.buffer).write(hex, 'hex');
  const done = count < limit;
  return {
    slice: {
      keys: row?.[0] ?? '[]',
      layouts: Int32Array.from(JSON.parse(row?.[1] ?? '[]') as number[]),
      strides: Int32Array.from(JSON.parse(row?.[3] ?? '[]') as number[], (bytes) => bytes / 8),
      state,
      leases: row?.[4] ?? '[]',
      done,
    },
    last: done ? undefined : (row?.[6] ?? ''),
  };
}
