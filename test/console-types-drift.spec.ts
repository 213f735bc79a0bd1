/**
 * The console's types are generated from apps/admin/schema.gql and its operations: the committed
 * apps/console/src/api/generated.ts must be what `npm run codegen:console` writes now, so a schema
 * change that breaks an operation (or a stale file) fails here instead of in a browser. A child
 * process, because codegen's dependencies are ES modules that Jest's CommonJS runtime cannot load.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

jest.setTimeout(60_000);

describe('console GraphQL types', () => {
  it('are what codegen writes from schema.gql and operations.graphql', () => {
    const run = spawnSync(
      process.execPath,
      ['-r', '@swc-node/register', 'scripts/console-codegen.ts', '--check'],
      { cwd: join(__dirname, '..'), encoding: 'utf8' },
    );
    expect({ status: run.status, stderr: run.stderr.trim() }).toEqual({ status: 0, stderr: '' });
  });
});
