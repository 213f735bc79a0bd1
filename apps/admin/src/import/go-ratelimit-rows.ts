import type Database from 'better-sqlite3';

/**
 * The rows of go-ratelimit's SQLite database (its sqlite.go, createSchema), read as hostile input:
 * SQLite keeps whatever type a row was given (text in an INTEGER column, a real, NULL without the
 * NOT NULL constraint), so every value is checked, and a wrong one is named by table, row and
 * column. The caller refuses the whole file if any was wrong.
 */

/** go-ratelimit's tables and the columns read from each. */
export const COLUMNS = {
  quotas: ['model', 'max_rpm', 'max_tpm', 'max_rpd'],
  requests: ['model', 'ts'],
  tokens: ['model', 'ts', 'count'],
  daily: ['model', 'day_start', 'day_count'],
} as const;
export type Table = keyof typeof COLUMNS;

const MAX_COUNT = BigInt(Number.MAX_SAFE_INTEGER);
/** Bad values named in the error; the others are counted. */
const MAX_LISTED_PROBLEMS = 20;

export class NotGoRatelimitDatabaseError extends Error {}

/** Rows holding values go-ratelimit does not write; nothing of the file is imported. */
export class BadGoRatelimitRowsError extends Error {
  constructor(
    path: string,
    /** `table requests, row 7, column ts: must be an integer (Unix nanoseconds), not the text "x"` */
    readonly problems: readonly string[],
    count: number,
  ) {
    const more = count > problems.length ? `\n  and ${count - problems.length} more` : '';
    super(
      `${path} holds values go-ratelimit does not write; nothing was imported:\n  ` +
        `${problems.join('\n  ')}${more}`,
    );
  }
}

/** What better-sqlite3 answers for a column with safeIntegers on. */
type SqlValue = bigint | number | string | Buffer | null;
type Row = Readonly<Record<string, SqlValue>>;

function shown(value: SqlValue): string {
  if (value === null) return 'NULL';
  if (typeof value === 'bigint') return `the integer ${value}`;
  if (typeof value === 'number') return `the real ${value}`;
  if (typeof value === 'string') {
    return `the text ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  }
  return `a blob of ${value.length} bytes`;
}

/** Typed reads of one row's columns: a wrong value is recorded and reads as undefined. */
export interface Cells {
  /** Text (any text: the import checks it as a model name). */
  model(): string | undefined;
  /** An integer in 0..2^53 - 1 (or a real of that value). */
  count(column: string): number | undefined;
  /** An integer: Unix nanoseconds, beyond a double's 53 bits. */
  nanos(column: string): bigint | undefined;
  /** False, recorded, when an earlier row of a table keyed by model named the same model. */
  firstOf(model: string): boolean;
}

export class GoRatelimitRows {
  private readonly listed: string[] = [];
  private count = 0;

  constructor(
    private readonly db: Database.Database,
    private readonly path: string,
  ) {
    this.checkSchema();
  }

  /** The rows `sql` (which selects `rowid` and columns of `table`) answers, as checked cells. */
  rows(table: Table, sql: string, ...params: unknown[]): Cells[] {
    let found: Row[];
    try {
      found = this.db
        .prepare(sql)
        .safeIntegers(true)
        .all(...params) as Row[];
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new NotGoRatelimitDatabaseError(
        `${this.path} is not go-ratelimit's SQLite state (${why})`,
      );
    }
    const models = new Map<string, string>();
    return found.map((row) => this.cells(table, row, models));
  }

  /** Throws BadGoRatelimitRowsError when any value read was wrong. */
  refuseProblems(): void {
    if (this.count > 0) throw new BadGoRatelimitRowsError(this.path, this.listed, this.count);
  }

  private cells(table: Table, row: Row, models: Map<string, string>): Cells {
    const rowid = String(row['rowid']);
    const problem = (column: string, rule: string): undefined => {
      this.count += 1;
      if (this.listed.length < MAX_LISTED_PROBLEMS) {
        const value = shown(row[column] ?? null);
        this.listed.push(`table ${table}, row ${rowid}, column ${column}: ${rule}, not ${value}`);
      }
      return undefined;
    };
    return {
      model: () => {
        const value = row['model'];
        return typeof value === 'string' ? value : problem('model', 'must be text (a model name)');
      },
      count: (column) => {
        const value = row[column];
        // An integral real is what Go's database/sql scans into an int too.
        const count = typeof value === 'bigint' && value <= MAX_COUNT ? Number(value) : value;
        return typeof count === 'number' && Number.isSafeInteger(count) && count >= 0
          ? count
          : problem(column, 'must be an integer in 0..2^53 - 1');
      },
      nanos: (column) => {
        const value = row[column];
        return typeof value === 'bigint'
          ? value
          : problem(column, 'must be an integer (Unix nanoseconds)');
      },
      firstOf: (model) => {
        const first = models.get(model);
        if (first === undefined) models.set(model, rowid);
        else problem('model', `names the model of row ${first} again (one row per model)`);
        return first === undefined;
      },
    };
  }

  private names(sql: string): Set<string> {
    return new Set(
      this.db
        .prepare<[], { name: string }>(sql)
        .all()
        .map((row) => row.name),
    );
  }

  private checkSchema(): void {
    const notOurs = `${this.path} is not go-ratelimit's SQLite state`;
    const tables = this.names("SELECT name FROM sqlite_master WHERE type = 'table'");
    const missing = Object.keys(COLUMNS).filter((table) => !tables.has(table));
    if (missing.length > 0) {
      throw new NotGoRatelimitDatabaseError(`${notOurs}: table ${missing.join(', ')} missing`);
    }
    for (const [table, wanted] of Object.entries(COLUMNS)) {
      const columns = this.names(`SELECT name FROM pragma_table_info('${table}')`);
      const absent = wanted.filter((column) => !columns.has(column));
      if (absent.length > 0) {
        throw new NotGoRatelimitDatabaseError(
          `${notOurs}: table ${table} has no column ${absent.join(', ')}`,
        );
      }
    }
  }
}
