import { useId } from 'preact/hooks';
import type { FieldIssue } from '../../api/errors';
import { DOCUMENT_FIELD } from './document-issues';

/**
 * The document's textarea with the admin's issues under it, one per line: a document can have
 * many, which run together when joined.
 */
export function DocumentField(props: {
  value: string;
  onInput: (value: string) => void;
  issues: readonly FieldIssue[];
}) {
  const id = useId();
  const errorId = `${id}-error`;
  const invalid = props.issues.length > 0;
  return (
    <div class={invalid ? 'field invalid' : 'field'} data-path={DOCUMENT_FIELD}>
      <label for={id}>Document</label>
      <textarea
        id={id}
        aria-invalid={invalid}
        aria-describedby={invalid ? errorId : undefined}
        value={props.value}
        onInput={(e) => props.onInput(e.currentTarget.value)}
        spellcheck={false}
      />
      {invalid && (
        <ul id={errorId} class="field-error issue-list" role="alert">
          {props.issues.map((issue, i) => (
            <li key={i}>{issue.message}</li>
          ))}
        </ul>
      )}
    </div>
  );
}
