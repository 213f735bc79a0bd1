import type { ConsoleError, FieldIssue } from '../api/errors';

/** An error the operator must see: announced to screen readers, with its unplaced issues. */
export function ErrorBanner(props: {
  error: ConsoleError | undefined;
  issues?: readonly FieldIssue[];
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
    </div>
  );
}
