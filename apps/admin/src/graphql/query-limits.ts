import { GraphQLError, NoSchemaIntrospectionCustomRule, type ValidationRule } from 'graphql';
import {
  createComplexityRule,
  fieldExtensionsEstimator,
  simpleEstimator,
} from 'graphql-query-complexity';

/** Deeper than any honest query of this schema (Quota → limits → field is 3). */
export const MAX_QUERY_DEPTH = 8;
/** Each field costs 1; auditLog(limit) costs limit × its fields. */
export const MAX_QUERY_COMPLEXITY = 10_000;

/** The validation rules every operation passes besides the spec's own. */
export function queryRules(
  production: boolean,
): (params: { variables?: Record<string, unknown> }) => ValidationRule[] {
  return ({ variables }) => {
    const rules: ValidationRule[] = [
      createComplexityRule({
        maximumComplexity: MAX_QUERY_COMPLEXITY,
        variables: variables ?? {},
        estimators: [fieldExtensionsEstimator(), simpleEstimator({ defaultComplexity: 1 })],
        createError: (max, actual) =>
          new GraphQLError(
            `query complexity ${actual} is above the maximum ${max}; ask for fewer fields or a smaller limit`,
            { extensions: { code: 'QUERY_TOO_COMPLEX' } },
          ),
      }),
    ];
    // Production hides the schema: clients use the committed schema.gql instead.
    if (production) rules.push(NoSchemaIntrospectionCustomRule);
    return rules;
  };
}
