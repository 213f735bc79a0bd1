import {
  buildSchema,
  getNullableType,
  isCompositeType,
  isListType,
  getNamedType,
  type GraphQLSchema,
} from 'graphql';
import { LIST_COSTS } from './query-cost';
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
