/** One problem in a config file, located by line (when known) and by field path. */
export interface ConfigIssue {
  /** `quotas[0].limits[1].window`; empty for the document as a whole. */
  readonly path: string;
  /** 1-based. */
  readonly line?: number;
  readonly column?: number;
  readonly message: string;
}

/** Issues listed in the message; all of them stay in `issues`. */
const MAX_LISTED_ISSUES = 20;

function describeIssue(issue: ConfigIssue): string {
  const where = [
    issue.line === undefined ? undefined : `line ${issue.line}`,
    issue.path === '' ? undefined : issue.path,
  ].filter((part) => part !== undefined);
  return where.length === 0 ? issue.message : `${where.join(', ')}: ${issue.message}`;
}

/** A refused config file (or environment). The last good config stays in force. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';

  constructor(
    readonly issues: readonly ConfigIssue[],
    /** What was being read: a file path, `CONFIG_FILE`, `environment`. */
    readonly source = 'config',
  ) {
    super(ConfigError.format(issues, source));
  }

  private static format(issues: readonly ConfigIssue[], source: string): string {
    const [first] = issues;
    if (issues.length === 1 && first !== undefined) return `${source}: ${describeIssue(first)}`;
    const listed = issues.slice(0, MAX_LISTED_ISSUES).map((issue) => `  ${describeIssue(issue)}`);
    if (issues.length > MAX_LISTED_ISSUES) {
      listed.push(`  … and ${issues.length - MAX_LISTED_ISSUES} more`);
    }
    return `${source}: ${issues.length} problems\n${listed.join('\n')}`;
  }
}
