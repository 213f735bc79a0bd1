import {
  GraphQLError,
  Lexer,
  NoSchemaIntrospectionCustomRule,
  Source,
  TokenKind,
  specifiedRules,
  validate,
  type DocumentNode,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';
import { createComplexityRule } from 'graphql-query-complexity';
import {
  ErrorWithProps,
  type preParsingHookHandler,
  type preValidationHookHandler,
} from 'mercurius';
import { fieldCostEstimator, type ListSizes } from './query-cost';
import { shapeProblem } from './query-shape';

/*
 * What one operation may ask, checked before it runs, cheapest first: the tokens of the text
 * (before it is parsed); then, before the spec's validation (whose cost grows with the document),
 * its shape (query-shape.ts: selections, root fields, depth); then the validation rules compute
 * the cost of the operation against the lists as they are now (query-cost.ts). Each refusal is
 * QUERY_TOO_COMPLEX (HTTP 400) and says which limit.
 */

/** GraphiQL's whole introspection query is under 200. */
export const MAX_QUERY_TOKENS = 5_000;
/**
 * Fields resolved, a list's fields and its read once per element it can answer, a root field as
 * a thousand (query-cost.ts): 50 000 is about 1 400 quotas with every field, 3 700 with three,
 * or 1 000 audit entries; about 0.1 s of work on a loaded 2-core machine.
 */
export const MAX_QUERY_COMPLEXITY = 50_000;

const TOO_COMPLEX = 'QUERY_TOO_COMPLEX';

/** The validation rules every operation passes besides the spec's own. */
export function queryRules(
  production: boolean,
  sizes: () => ListSizes,
): (params: { variables?: Record<string, unknown> }) => ValidationRule[] {
  return ({ variables }) => {
    const rules: ValidationRule[] = [
      createComplexityRule({
        maximumComplexity: MAX_QUERY_COMPLEXITY,
        variables: variables ?? {},
        estimators: [fieldCostEstimator(sizes())],
        createError: (max, actual) =>
          new GraphQLError(
            `query cost ${actual} is above the maximum ${max} (a root field costs 1000, a list ` +
              'its fields once per element it can answer); ask for fewer fields, a smaller ' +
              'auditLog limit, or quotas a page at a time: quotas(first: 500, after: "<last ' +
              'name of the previous page>")',
            { extensions: { code: TOO_COMPLEX } },
          ),
      }),
    ];
    // Production hides the schema: clients use the committed schema.gql instead.
    if (production) rules.push(NoSchemaIntrospectionCustomRule);
    return rules;
  };
}

function tooComplex(problem: string): ErrorWithProps {
  return new ErrorWithProps(problem, { code: TOO_COMPLEX }, 400);
}

/**
 * A Mercurius preParsing hook: counts the tokens of the text, stopping after MAX_QUERY_TOKENS.
 * A text the lexer cannot read is left to the parser, which says where.
 */
export const queryTokens: preParsingHookHandler = (_schema, source) => {
  const lexer = new Lexer(new Source(source));
  let tokens = 0;
  try {
    while (lexer.advance().kind !== TokenKind.EOF) {
      if (++tokens > MAX_QUERY_TOKENS) {
        throw tooComplex(`the document has more than ${MAX_QUERY_TOKENS} tokens`);
      }
    }
  } catch (error) {
    if (error instanceof ErrorWithProps) throw error;
  }
};

/** shapeProblem as a Mercurius preValidation hook. */
export const queryShape: preValidationHookHandler = (_schema, document) => {
  const problem = shapeProblem(document);
  if (problem !== undefined) throw tooComplex(problem);
};

/**
 * Everything above for a subscription: Mercurius validates neither its document nor its cost,
 * so OperationLimitsInterceptor asks this before the subscription starts.
 */
export function subscriptionProblems(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown>,
  rules: ReturnType<typeof queryRules>,
): readonly GraphQLError[] {
  const problem = shapeProblem(document);
  if (problem !== undefined) {
    return [new GraphQLError(problem, { extensions: { code: TOO_COMPLEX } })];
  }
  return validate(schema, document, [...specifiedRules, ...rules({ variables })]);
}
