import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_FIELDS, GOCC_FILE_FIELDS, GOCC_KEY_FIELDS } from '../config/config-fields';
import { ENV_VARIABLES } from '../env-variables';
import { BUILT_IN_PROVIDERS } from '../providers';
import {
  CONTRACT_DOC,
  contractDisagreements,
  keysOnly,
  type ExpectedRows,
} from './disagreements.test-util';
import { plain, readRepoFile, REPO_ROOT, tablesOf } from './markdown.test-util';

const ENV_ROWS: ExpectedRows = new Map(
  ENV_VARIABLES.map((v) => [
    v.name,
    {
      apps: v.apps.join(', '),
      default: v.default,
      meaning: v.meaning,
      secret: 'secret' in v ? 'yes' : '',
    },
  ]),
);

/** The docs beside the contract that may show variables: each must name real ones, rightly. */
function otherDocs(): string[] {
  const docs = readdirSync(join(REPO_ROOT, 'docs'))
    .filter((name) => name.endsWith('.md') && `docs/${name}` !== CONTRACT_DOC)
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

/** Rows of the file's `variable` tables that name no variable, or the wrong default. */
function variableProblems(path: string): string[] {
  const tables = tablesOf(path).filter((table) => table.columns[0] === 'variable');
  return tables.flatMap((table) =>
    table.rows.flatMap((row) => {
      const name = plain(row.cells['variable'] ?? '');
      const known = ENV_ROWS.get(name)?.['default'];
      const shown = row.cells['default'];
      const at = `${path}, line ${row.line}`;
      if (known === undefined) return [`${at}: "${name}" is not one variable of ENV_VARIABLES`];
      if (shown === undefined || plain(shown) === known) return [];
      return [`${at}: the default of ${name} is "${shown}" but ENV_VARIABLES has "${known}"`];
    }),
  );
}

describe('docs/contract.md agrees with the environment and the config file', () => {
  it('lists every environment variable the apps read, as ENV_VARIABLES has it', () => {
    expect(
      contractDisagreements('## Environment', ['variable'], ENV_ROWS, 'ENV_VARIABLES'),
    ).toEqual([]);
  });

  it('lists every field the config readers accept, where it stands', () => {
    const fields: [string, readonly string[]][] = [
      ...Object.entries(CONFIG_FIELDS),
      ['GoCC file', Object.values(GOCC_FILE_FIELDS)],
      ['GoCC key', Object.values(GOCC_KEY_FIELDS)],
    ];
    const expected = keysOnly(
      fields.flatMap(([at, names]) => names.map((name) => `${at} ${name}`)),
    );
    const code = 'config-fields.ts';
    expect(contractDisagreements('### Config fields', ['in', 'field'], expected, code)).toEqual([]);
  });

  it('lists the built-in provider profiles', () => {
    const expected: ExpectedRows = new Map(
      BUILT_IN_PROVIDERS.flatMap((provider) =>
        provider.models.length === 0
          ? [[`${provider.name} (none)`, { maxrpm: '', maxtpm: '', maxrpd: '' }]]
          : provider.models.map((m) => [
              `${provider.name} ${m.model}`,
              { maxrpm: String(m.maxRpm), maxtpm: String(m.maxTpm), maxrpd: String(m.maxRpd) },
            ]),
      ),
    );
    const heading = '### Built-in provider profiles';
    const code = 'BUILT_IN_PROVIDERS';
    expect(contractDisagreements(heading, ['provider', 'model'], expected, code)).toEqual([]);
  });

  // Partial tables (README's short one, operations.md's per app) need not list everything, but
  // what they list must exist, one variable a row, with the default the apps use.
  it.each(otherDocs())('%s shows only real variables, with their defaults', (path) => {
    expect(variableProblems(path)).toEqual([]);
  });

  // A wrapped line that starts with `>=` is read as a quote, and prettier then quotes the rest of
  // the paragraph (`> = 0 ...`): the accepted values were shown that way.
  it.each([CONTRACT_DOC, ...otherDocs()])('%s starts no line with a quoted >=', (path) => {
    const quoted = readRepoFile(path)
      .split('\n')
      .map((line, i) => ({ line: i + 1, text: line }))
      .filter(({ text }) => /^\s*>\s*=/.test(text));
    expect(quoted).toEqual([]);
  });
});
