/** Collects problems while a config document is read, each at the path of the offending field. */

export type ConfigPath = readonly (string | number)[];

export interface PathIssue {
  readonly path: ConfigPath;
  readonly message: string;
}

export class IssueList {
  private readonly found: PathIssue[] = [];

  /** Records a problem; returns undefined so readers can `return issues.add(...)`. */
  add(path: ConfigPath, message: string): undefined {
    this.found.push({ path, message });
    return undefined;
  }

  get all(): readonly PathIssue[] {
    return this.found;
  }

  get count(): number {
    return this.found.length;
  }
}

const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `quotas[0].limits[1].window`. */
export function formatConfigPath(path: ConfigPath): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (PLAIN_NAME.test(segment)) text += text === '' ? segment : `.${segment}`;
    else text += `[${JSON.stringify(segment.slice(0, 64))}]`;
  }
  return text;
}
