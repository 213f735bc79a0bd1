import { GraphQLError } from 'graphql';

export interface FieldIssue {
  /** `input.limits[0].window`, `maxRpm`, `document` (line 3). */
  readonly field: string;
  readonly message: string;
}

/**
 * Bad input: nothing was changed. The message lists every problem as `field: why`; extensions
 * carry them one by one for programs.
 */
export function userInputError(issues: readonly FieldIssue[]): GraphQLError {
  const message = issues.map((i) => `${i.field}: ${i.message}`).join('; ');
  return new GraphQLError(message, {
    extensions: { code: 'BAD_USER_INPUT', issues: issues.map((i) => ({ ...i })) },
  });
}

/** Something the service needs is not there (a quota that does not exist, say). */
export function notFoundError(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'NOT_FOUND' } });
}

/** NATS or the limiters cannot answer right now. */
export function unavailableError(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'UNAVAILABLE' } });
}
