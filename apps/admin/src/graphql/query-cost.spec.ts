import {
  buildSchema,
  getNullableType,
  isCompositeType,
  isListType,
  getNamedType,
  type GraphQLSchema,
} from 'graphql';
import { getComplexity } from 'graphql-query-complexity';
import { parse } from 'graphql';
import { fieldCostEstimator, LIST_COSTS, type ListSizes } from './query-cost';
import { schemaText } from './schema-text';

/** `Type.field` of every field that answers a list of objects (the schema's own types aside). */
function listsOfObjects(schema: GraphQLSchema): string[] {
  const found: string[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__') || !('getFields' in type) || !isCompositeType(type)) continue;
    for (const field of Object.values(type.getFields())) {
      const listed = isListType(getNullableType(field.type));
      if (listed && isCompositeType(getNamedType(field.type)))
        found.push(`${type.name}.${field.name}`);
    }
  }
  return found.sort();
}

describe('LIST_COSTS', () => {
  it('has a size for every list of objects in the schema, and for nothing else', async () => {
    const schema = buildSchema(await schemaText());
    expect(Object.keys(LIST_COSTS).sort()).toEqual(listsOfObjects(schema));
  });
});

describe('fieldCostEstimator', () => {
  const sizes: ListSizes = {
    quotas: 100,
    limitsPerQuota: 3,
    providers: 4,
    modelsPerProvider: 6,
    statsQuotas: 5,
  };
  let schema: GraphQLSchema;
  beforeAll(async () => (schema = buildSchema(await schemaText())));
  const cost = (query: string, variables: Record<string, unknown> = {}) =>
    getComplexity({
      schema,
      query: parse(query),
      variables,
      estimators: [fieldCostEstimator(sizes)],
    });

  it.each([
    ['every quota, one field', '{ quotas { name } }', 1000 + 100 * (10 + 1)],
    ['a page of quotas', '{ quotas(first: 10) { name } }', 1000 + 10 * (10 + 1)],
    ['a page larger than the store', '{ quotas(first: 500) { name } }', 1000 + 100 * (10 + 1)],
    ['limits of every quota', '{ quotas { limits { name } } }', 1000 + 100 * (10 + 1 + 3 * 1)],
    ['one quota', '{ quota(name: "x") { name limits { name } } }', 1000 + 1 + 1 + 3],
    ['two aliases', '{ a: quotas { name } b: quotas { name } }', 2 * (1000 + 100 * 11)],
    ['audit entries', '{ auditLog(limit: 2) { id at } }', 1000 + 2 * (40 + 2)],
    ['the default audit page', '{ auditLog { id } }', 1000 + 100 * (40 + 1)],
    ['a negative limit counts none', '{ auditLog(limit: -100000) { id } }', 1000],
    ['a limit in a variable', 'query A($n: Int) { auditLog(limit: $n) { id } }', 1000 + 7 * 41],
    ['providers and models', '{ providers { models { model } } }', 1000 + 4 * (10 + 1 + 6 * 11)],
    ['stats in memory', '{ stats { quotas { quota } } }', 1000 + 1 + 5 * 1],
    ['the schema itself', '{ __schema { types { fields { name } } } }', 0],
  ])('%s', (_, query, expected) => {
    expect(cost(query, { n: 7 })).toBe(expected);
  });
});
