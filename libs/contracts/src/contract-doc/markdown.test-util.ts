/**
 * Reads the tables and code blocks of the repository's markdown, so that tests can hold the docs
 * to the code. Small on purpose: pipe tables (`| a | b |`) with a header row and a `---` row, one
 * per line, `\|` for a pipe inside a cell; headings `#` to `######`; fenced blocks skipped.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const REPO_ROOT = join(__dirname, '..', '..', '..', '..');

/** One row of a table: its cells by lowercased column name, and where it stands. */
export interface TableRow {
  readonly cells: Readonly<Record<string, string>>;
  readonly line: number;
}

export interface MarkdownTable {
  /** `docs/contract.md, "### Subjects"`, for messages. */
  readonly where: string;
  readonly columns: readonly string[];
  readonly rows: readonly TableRow[];
}

interface Line {
  readonly text: string;
  readonly number: number;
  readonly fenced: boolean;
}

export function readRepoFile(path: string): string {
  return readFileSync(join(REPO_ROOT, path), 'utf8');
}

function linesOf(text: string): Line[] {
  let fence: string | undefined;
  return text.split('\n').map((text, index) => {
    const marker = /^\s*(```|~~~)/.exec(text)?.[1];
    const inside = fence !== undefined;
    if (marker !== undefined && (fence === undefined || fence === marker)) {
      fence = fence === undefined ? marker : undefined;
    }
    return { text, number: index + 1, fenced: inside || marker !== undefined };
  });
}

function headingLevel(line: Line): number {
  if (line.fenced) return 0;
  return /^(#{1,6}) /.exec(line.text)?.[1]?.length ?? 0;
}

/** The lines under `heading` (as written: `### Subjects`) up to the next heading as high. */
function section(path: string, lines: readonly Line[], heading: string): Line[] {
  const starts = lines.filter((line) => !line.fenced && line.text.trim() === heading);
  if (starts.length !== 1) {
    throw new Error(`${path}: expected one heading "${heading}", found ${starts.length}`);
  }
  const start = lines.indexOf(starts[0]!);
  const level = headingLevel(lines[start]!);
  const end = lines.findIndex(
    (line, i) => i > start && headingLevel(line) > 0 && headingLevel(line) <= level,
  );
  return lines.slice(start + 1, end === -1 ? undefined : end);
}

export function splitRow(text: string): string[] {
  const inner = text.trim().replace(/^\|/, '').replace(/\|$/, '');
  return inner.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, '|'));
}

function isTableLine(line: Line): boolean {
  return !line.fenced && line.text.trim().startsWith('|');
}

/** Every table in `lines`, in order. */
function tablesIn(path: string, where: string, lines: readonly Line[]): MarkdownTable[] {
  const tables: MarkdownTable[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    if (!isTableLine(lines[i]!) || (i > 0 && isTableLine(lines[i - 1]!))) continue;
    const block: Line[] = [];
    for (let j = i; j < lines.length && isTableLine(lines[j]!); j += 1) block.push(lines[j]!);
    const [header, separator, ...body] = block;
    if (header === undefined || separator === undefined || !/^[\s|:-]+$/.test(separator.text)) {
      throw new Error(`${path}:${lines[i]!.number}: a table needs a header row and a --- row`);
    }
    const columns = splitRow(header.text).map((name) => name.toLowerCase());
    const rows = body.map((line) => {
      const cells = splitRow(line.text);
      if (cells.length !== columns.length) {
        throw new Error(
          `${path}:${line.number}: ${cells.length} cells in a table of ${columns.length} columns`,
        );
      }
      return {
        cells: Object.fromEntries(columns.map((c, k) => [c, cells[k]!])),
        line: line.number,
      };
    });
    tables.push({ where, columns, rows });
  }
  return tables;
}

/** The one table under `heading` in the file at `path` (relative to the repository). */
export function tableUnder(path: string, heading: string): MarkdownTable {
  const where = `${path}, "${heading}"`;
  const tables = tablesIn(path, where, section(path, linesOf(readRepoFile(path)), heading));
  if (tables.length !== 1) throw new Error(`${where}: expected one table, found ${tables.length}`);
  return tables[0]!;
}

/** Every table of the file at `path`. */
export function tablesOf(path: string): MarkdownTable[] {
  return tablesIn(path, path, linesOf(readRepoFile(path)));
}

/** The text under `heading`, fenced blocks included. */
export function textUnder(path: string, heading: string): string {
  return section(path, linesOf(readRepoFile(path)), heading)
    .map((line) => line.text)
    .join('\n');
}

/** The first fenced block of `language` under `heading`, without its fences. */
export function codeBlockUnder(path: string, heading: string, language: string): string {
  const lines = section(path, linesOf(readRepoFile(path)), heading);
  const open = lines.findIndex((line) => line.text.trim() === '```' + language);
  const close = lines.findIndex((line, i) => i > open && line.text.trim() === '```');
  if (open === -1 || close === -1) {
    throw new Error(`${path}, "${heading}": no \`\`\`${language} block`);
  }
  return lines
    .slice(open + 1, close)
    .map((line) => `${line.text}\n`)
    .join('');
}

/** A cell's text without the backticks of a cell that is one code span (`` `PORT` `` → PORT). */
export function plain(cell: string): string {
  return /^`([^`]*)`$/.exec(cell)?.[1] ?? cell;
}

/** The cell of `column` in `row`; a table without that column is a mistake in the docs. */
export function cell(table: MarkdownTable, row: TableRow, column: string): string {
  const value = row.cells[column];
  if (value === undefined) throw new Error(`${table.where}: has no column "${column}"`);
  return value;
}
