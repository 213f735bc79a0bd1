import type { ComponentChildren } from 'preact';
import type { ConsoleError, FieldIssue } from '../api/errors';

/**
 * An error the operator must see: announced to screen readers, with its unplaced issues and what
 * the operator can do about it (`children`, a button).
 */
export function ErrorBanner(props: {
  error: ConsoleError | undefined;
  issues?: readonly FieldIssue[];
  children?: ComponentChildren;
}) {
  const { error } = props;
  if (error === undefined) return null;
  const issues = props.issues ?? [];
  return (
    <div class="banner error" role="alert">
      <p>{issues.length > 0 ? 'Nothing was changed:' : error.message}</p>
      {issues.length > 0 && (
        <ul>
          {issues.map((i) => (
            <li key={i.field + i.message}>
              <code>{i.field}</code>: {i.message}
            </li>
          ))}
        </ul>
      )}
      {props.children}
    </div>
  );
}
