import { KeyTable } from './key-table';

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
});
