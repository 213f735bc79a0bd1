import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';

function safeInteger(value: unknown): number {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  throw new GraphQLError(
    `SafeInt must be an integer within ±(2^53-1), got ${JSON.stringify(value)}`,
  );
}

/**
 * GraphQL's Int stops at 2^31-1; token limits, windows of weeks and lifetime counters pass it.
 * SafeInt is any JavaScript safe integer, sent as a JSON number.
 */
export const SafeInt = new GraphQLScalarType({
  name: 'SafeInt',
  description: 'An integer within ±(2^53-1), sent as a JSON number.',
  serialize: safeInteger,
  parseValue: safeInteger,
  parseLiteral(ast) {
    if (ast.kind !== Kind.INT) {
      throw new GraphQLError('SafeInt must be an integer literal', { nodes: ast });
    }
    return safeInteger(Number(ast.value));
  },
});
