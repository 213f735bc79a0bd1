/** Labelled controls: a Field around a text input, a select or a checkbox. */
import type { FieldIssue } from '../api/errors';
import { Field } from './field';

interface Common {
  readonly label: string;
  /** The input path the admin names: `input.limits[0].window`. */
  readonly path?: string;
  readonly issues?: readonly FieldIssue[] | undefined;
  readonly hint?: string | undefined;
}

/** The Field's own props out of a control's (not its value or handler). */
const fieldOf = ({ label, path, issues, hint }: Common) => ({ label, path, issues, hint });

export function TextField(
  props: Common & {
    value: string;
    onChange: (value: string) => void;
    /** Whole numbers: typed as text, so a stray letter is seen and named rather than dropped. */
    numeric?: boolean;
    readOnly?: boolean;
  },
) {
  return (
    <Field {...fieldOf(props)}>
      {(control) => (
        <input
          {...control}
          type="text"
          value={props.value}
          inputMode={props.numeric === true ? 'numeric' : undefined}
          readOnly={props.readOnly}
          autoComplete="off"
          spellcheck={false}
          onInput={(e) => props.onChange(e.currentTarget.value)}
        />
      )}
    </Field>
  );
}

export function SelectField<V extends string>(
  props: Common & {
    value: V;
    onChange: (value: V) => void;
    /** [value, what the option reads]. */
    options: readonly (readonly [V, string])[];
  },
) {
  return (
    <Field {...fieldOf(props)}>
      {(control) => (
        <select
          {...control}
          value={props.value}
          onChange={(e) => {
            const chosen = props.options.find(([v]) => v === e.currentTarget.value);
            if (chosen !== undefined) props.onChange(chosen[0]);
          }}
        >
          {props.options.map(([value, text]) => (
            <option key={value} value={value}>
              {text}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

export function CheckboxField(
  props: Common & { checked: boolean; onChange: (checked: boolean) => void },
) {
  return (
    <Field {...fieldOf(props)}>
      {(control) => (
        <input
          {...control}
          type="checkbox"
          checked={props.checked}
          onChange={(e) => props.onChange(e.currentTarget.checked)}
        />
      )}
    </Field>
  );
}
