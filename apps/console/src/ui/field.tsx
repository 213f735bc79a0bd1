import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import { issuesAt, type FieldIssue } from '../api/errors';

/** What a control inside a Field spreads onto itself: its label's target and its issues. */
export interface ControlProps {
  readonly id: string;
  readonly 'aria-invalid': boolean;
  readonly 'aria-describedby': string | undefined;
}

/**
 * A labelled control with the admin's issues for `path` shown under it (aria-invalid and
 * aria-describedby, so a screen reader reads them with the field). The control spreads the
 * props it is handed: `{(control) => <input {...control} />}`.
 */
export function Field(props: {
  label: string;
  /** The input path the admin names in BAD_USER_INPUT issues: `input.limits[0].window`. */
  path?: string;
  issues?: readonly FieldIssue[];
  hint?: string;
  children: (control: ControlProps) => ComponentChildren;
}) {
  const id = useId();
  const mine = props.path === undefined ? [] : issuesAt(props.issues ?? [], props.path);
  const errorId = `${id}-error`;
  const hintId = `${id}-hint`;
  const describedBy =
    [mine.length > 0 ? errorId : undefined, props.hint !== undefined ? hintId : undefined]
      .filter((x) => x !== undefined)
      .join(' ') || undefined;
  return (
    <div class={mine.length > 0 ? 'field invalid' : 'field'} data-path={props.path}>
      <label for={id}>{props.label}</label>
      {props.children({ id, 'aria-invalid': mine.length > 0, 'aria-describedby': describedBy })}
      {props.hint !== undefined && (
        <small id={hintId} class="hint">
          {props.hint}
        </small>
      )}
      {mine.length > 0 && (
        <small id={errorId} class="field-error" role="alert">
          {mine.map((i) => i.message).join('; ')}
        </small>
      )}
    </div>
  );
}
