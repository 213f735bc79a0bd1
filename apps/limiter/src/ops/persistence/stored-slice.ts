/**
 * One slice of a quota's stored keys, as a restore loads them: key i is entry i of each column.
 * Built by SQLite's own aggregates (JSON and hex text), so the thread handles one row a slice, and
 * the event loop parses the keys with JSON.parse, not a value at a time.
 */
export interface ReadSlice {
  /** JSON array of the keys. */
  readonly keys: string;
  readonly layouts: Int32Array;
  /** Numbers stored per key; -1 for bytes that are not whole numbers (a key left out). */
  readonly strides: Int32Array;
  /** The keys' numbers one after the other (none for a stride of -1). */
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
  /**
   * The keys' numbers from their bytes (hex, one key after the other, `lengths` bytes each). A key
   * whose bytes are not whole float64s gets stride -1 and no numbers, so the keys after it still
   * read their own; bytes that do not add up to the lengths leave every key of the slice out.
   */
  function numbersOf(
    hex: string,
    lengths: readonly number[],
  ): { state: Float64Array; strides: Int32Array } {
    let total = 0;
    let whole = true;
    for (const bytes of lengths) {
      total += bytes;
      if (bytes % 8 !== 0) whole = false;
    }
    if (hex.length !== total * 2) {
      return { state: new Float64Array(0), strides: Int32Array.from(lengths, () => -1) };
    }
    const strides = Int32Array.from(lengths, (bytes) => (bytes % 8 === 0 ? bytes / 8 : -1));
    if (whole) {
      const state = new Float64Array(total / 8);
      Buffer.from(state.buffer).write(hex, 'hex');
      return { state, strides };
    }
    const raw = Buffer.from(hex, 'hex');
    const state = new Float64Array(strides.reduce((n, stride) => n + Math.max(0, stride), 0));
    const into = Buffer.from(state.buffer);
    let from = 0;
    let to = 0;
    lengths.forEach((bytes, i) => {
      if (strides[i]! >= 0) to += raw.copy(into, to, from, from + bytes);
      from += bytes;
    });
    return { state, strides };
  }

  const count = row?.[5] ?? 0;
  const lengths = JSON.parse(row?.[3] ?? '[]') as number[];
  const { state, strides } = numbersOf(row?.[2] ?? '', lengths);
  const done = count < limit;
  return {
    slice: {
      keys: row?.[0] ?? '[]',
      layouts: Int32Array.from(JSON.parse(row?.[1] ?? '[]') as number[]),
      strides,
      state,
      leases: row?.[4] ?? '[]',
      done,
    },
    last: done ? undefined : (row?.[6] ?? ''),
  };
}
