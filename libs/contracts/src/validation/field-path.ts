import { BODY_FIELD } from './parse-result';

const PLAIN_SEGMENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const INDEX_SEGMENT = /^(0|[1-9][0-9]*)$/;
/** Field names come from clients; a reason quotes at most this much of one. */
const MAX_QUOTED_SEGMENT = 64;

/**
 * Turns a JSON pointer (`/cost/tokens`, `/requests/3`) into the dotted path a reason shows
 * (`cost.tokens`, `requests[3]`). Odd names are JSON-quoted and cut short, so a reason can neither
 * carry control characters nor grow with the client's input.
 */
export function fieldFromPointer(pointer: string): string {
  if (pointer === '') return BODY_FIELD;
  let field = '';
  for (const escaped of pointer.slice(1).split('/')) {
    const segment = escaped.replace(/~1/g, '/').replace(/~0/g, '~');
    if (segment.length > MAX_QUOTED_SEGMENT) {
      field += `[${JSON.stringify(`${segment.slice(0, MAX_QUOTED_SEGMENT)}…`)}]`;
    } else if (PLAIN_SEGMENT.test(segment)) {
      field += field === '' ? segment : `.${segment}`;
    } else if (INDEX_SEGMENT.test(segment)) {
      field += `[${segment}]`;
    } else {
      field += `[${JSON.stringify(segment)}]`;
    }
  }
  return field;
}
