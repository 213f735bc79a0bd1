import { BREAK, GraphQLError, visit, type DocumentNode } from 'graphql';
import type { preValidationHookHandler } from 'mercurius';
import type { AdminTokens } from '../settings/admin-tokens';
import { refusal } from './request-auth';

/** The fields that read the schema; the spec allows them on the query root only. */
const INTROSPECTION_FIELDS: ReadonlySet<string> = new Set(['__schema', '__type']);

function readsSchema(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Field(node) {
      if (!INTROSPECTION_FIELDS.has(node.name.value)) return undefined;
      found = true;
      return BREAK;
    },
  });
  return found;
}

/**
 * A Mercurius preValidation hook: introspection is a read, so with a read token set it needs
 * a token like any query. No resolver of ours runs for `__schema` or `__type`, so AdminAuthGuard
 * never sees them; this looks at the parsed document before anything else is done with it.
 */
export function introspectionAuth(tokens: AdminTokens): preValidationHookHandler {
  return (_schema, document, context) => {
    if (!tokens.guardReads || !readsSchema(document)) return;
    const why = refusal('query', context.auth, tokens);
    if (why !== undefined) throw new GraphQLError(why, { extensions: { code: 'UNAUTHENTICATED' } });
  };
}
