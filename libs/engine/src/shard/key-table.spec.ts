import { KeyTable, MAX_GONE } from './key-table';

/** A table of `n` keys `k0..k<n-1>`, row i holding the number i + 1. */
function filled(n: number, stride = 1): { table: KeyTable; rows: number[] } {
  const table = new KeyTable(stride);
  const rows: number[] = [];
  for (let i = 0; i < n; i++) {
    const row = table.create(`k${i}`, Math.imul(i + 1, 0x2545f491) >>> 0);
    table.rows[row * stride] = i + 1;
    rows.push(row);
  }
  return { table, rows };
}

const rowOf = (t: KeyTable, i: number): number =>
  t.find(`k${i}`, Math.imul(i + 1, 0x2545f491) >>> 0);

describe('KeyTable', () => {
  it('gives a new key a zero row after compaction moved other keys down', () => {
    const { table, rows } = filled(32);
    // Keep k0..k6 and k12: compaction moves k12 from row 12 to row 7.
    for (let i = 7; i < 32; i++) if (i !== 12) table.delete(rows[i]!);
    expect(table.compact()?.get(12)).toBe(7);
    const fresh: number[] = [];
    for (let i = 0; i < 8; i++) fresh.push(table.rows[table.create(`n${i}`, 1000 + i)]!);
    expect(fresh).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
  });

  it('marks a new row changed, and keeps each mark with its row through compaction', () => {
    const { table, rows } = filled(40);
    expect(table.changed).toBe(40);
    for (const row of rows) table.clearMark(row);
    expect(table.changed).toBe(0);
    for (let i = 8; i < 40; i++) if (i !== 20 && i !== 30) table.delete(rows[i]!);
    table.mark(rowOf(table, 30));
    table.mark(rowOf(table, 3));
    const epoch = table.epoch;
    const moved = table.compact();
    expect(moved?.size).toBe(2); // k20 and k30 moved down, and the slab shrank
    expect(table.epoch).not.toBe(epoch);
    const changed = [...Array(40).keys()].filter((i) => {
      const row = rowOf(table, i);
      return row >= 0 && table.isChanged(row);
    });
    expect(changed).toEqual([3, 30]);
    expect(table.changed).toBe(2);
    expect(table.rows[rowOf(table, 30)]).toBe(31);
  });

  it('gives a reused row a changed mark and a zero state', () => {
    const { table, rows } = filled(4);
    for (const row of rows) table.clearMark(row);
    table.delete(rows[1]!);
    const row = table.create('again', 7);
    expect(row).toBe(rows[1]);
    expect(table.isChanged(row)).toBe(true);
    expect(table.rows[row]).toBe(0);
    expect(table.changed).toBe(1);
  });

  it('remembers a key dropped while changed, only once the table is tracked', () => {
    const { table, rows } = filled(3);
    table.delete(rows[0]!); // not tracked: nobody stores this table
    table.tracked = true;
    table.clearMark(rows[1]!);
    table.delete(rows[1]!); // unchanged since collected: the stored copy is this state
    table.delete(rows[2]!); // changed: the stored copy is out of date
    expect(table.takeGone()).toEqual({ keys: ['k2'], overflowed: false });
    expect(table.takeGone()).toEqual({ keys: [], overflowed: false });
  });

  it('passes its journal to the table that replaces it for another layout', () => {
    const { table, rows } = filled(2);
    table.tracked = true;
    table.delete(rows[0]!);
    const next = table.successor(3);
    expect(next.tracked).toBe(true);
    expect(next.takeGone().keys).toEqual(['k0']);
    expect(table.takeGone().keys).toEqual([]);
  });

  it('says it overflowed once more keys were dropped than it remembers', () => {
    const table = new KeyTable(1);
    table.tracked = true;
    for (let i = 0; i < MAX_GONE; i++) table.forget('g');
    expect(table.takeGone().overflowed).toBe(false);
    for (let i = 0; i <= MAX_GONE; i++) table.forget('g');
    const taken = table.takeGone();
    expect(taken.keys.length).toBe(MAX_GONE);
    expect(taken.overflowed).toBe(true);
  });
});
