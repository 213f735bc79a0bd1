import { cell, plain, tableUnder, type MarkdownTable } from './markdown.test-util';

export const CONTRACT_DOC = 'docs/contract.md';

/** What the code says a table's row holds, column by column (cells compared without backticks). */
export type ExpectedRows = ReadonlyMap<string, Readonly<Record<string, string>>>;

/**
 * Where a docs table and the code disagree, as messages naming the table, the row and the side
 * that lacks it: rows the code does not have, code entries without a row, rows listed twice, and
 * cells that differ from what the code says. A row's key is the text of `keyColumns`, without
 * backticks, joined by spaces. Empty when they agree.
 */
export function disagreements(
  table: MarkdownTable,
  keyColumns: readonly string[],
  expected: ExpectedRows,
  codeName: string,
): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const row of table.rows) {
    const key = keyColumns.map((column) => plain(cell(table, row, column))).join(' ');
    const at = `${table.where}, line ${row.line}`;
    if (seen.has(key)) problems.push(`${at}: row "${key}" is listed twice`);
    seen.add(key);
    const columns = expected.get(key);
    if (columns === undefined) {
      problems.push(`${at}: row "${key}" is not in ${codeName}`);
      continue;
    }
    for (const [column, value] of Object.entries(columns)) {
      const documented = cell(table, row, column);
      if (plain(documented) !== value) {
        problems.push(
          `${at}: row "${key}", ${column} is "${documented}" but ${codeName} has "${value}"`,
        );
      }
    }
  }
  for (const key of expected.keys()) {
    if (!seen.has(key)) problems.push(`${table.where}: "${key}" is in ${codeName} but has no row`);
  }
  return problems;
}

/** disagreements() of the table under `heading` in docs/contract.md. */
export function contractDisagreements(
  heading: string,
  keyColumns: readonly string[],
  expected: ExpectedRows,
  codeName: string,
): string[] {
  return disagreements(tableUnder(CONTRACT_DOC, heading), keyColumns, expected, codeName);
}

/** Expected rows that are only keys, no columns to compare. */
export function keysOnly(keys: Iterable<string>): ExpectedRows {
  return new Map([...keys].map((key) => [key, {}]));
}
