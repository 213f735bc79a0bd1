import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  contractDisagreements,
  keysOnly,
} from '@app/contracts/contract-doc/disagreements.test-util';
import {
  astFromValue,
  buildSchema,
  print,
  type GraphQLArgument,
  type GraphQLObjectType,
} from 'graphql';
import { schemaText } from './schema-text';

const committed = readFileSync(join(__dirname, '..', '..', 'schema.gql'), 'utf8');

function argument(arg: GraphQLArgument): string {
  const value =
    arg.defaultValue === undefined ? undefined : astFromValue(arg.defaultValue, arg.type);
  return `${arg.name}: ${String(arg.type)}${value ? ` = ${print(value)}` : ''}`;
}

/** `Query quotas(after: String, first: Int): [Quota!]!`, as schema.gql writes each root field. */
function operations(type: GraphQLObjectType | null | undefined): string[] {
  return Object.values(type?.getFields() ?? {}).map((field) => {
    const args = field.args.length > 0 ? `(${field.args.map(argument).join(', ')})` : '';
    return `${type?.name} ${field.name}${args}: ${String(field.type)}`;
  });
}

describe('apps/admin/schema.gql', () => {
  it('is what the resolvers generate (run `npm run schema` after changing the API)', async () => {
    expect(await schemaText()).toBe(committed);
  });

  it('has exactly the operations docs/contract.md lists', () => {
    const schema = buildSchema(committed);
    const expected = keysOnly([
      ...operations(schema.getQueryType()),
      ...operations(schema.getMutationType()),
      ...operations(schema.getSubscriptionType()),
    ]);
    const columns = ['type', 'operation'];
    expect(contractDisagreements('### Operations', columns, expected, 'schema.gql')).toEqual([]);
  });
});
