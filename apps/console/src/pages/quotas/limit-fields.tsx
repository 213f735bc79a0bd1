/** One limit of the quota editor: a fieldset "Limit N" with every field of LimitInput. */
import type { FieldIssue } from '../../api/errors';
import type { Algorithm } from '../../api/generated';
import { SelectField, TextField } from '../../ui/controls';
import { limitPath, type LimitForm } from './quota-form';

const ALGORITHMS: readonly (readonly [Algorithm, string])[] = [
  ['fixed_window', 'fixed_window'],
  ['sliding_window', 'sliding_window'],
  ['token_bucket', 'token_bucket'],
];

const ALIGNS: readonly (readonly ['' | 'calendar', string])[] = [
  ['', 'none'],
  ['calendar', 'calendar'],
];

export function LimitFields(props: {
  index: number;
  limit: LimitForm;
  issues: readonly FieldIssue[];
  onChange: (limit: LimitForm) => void;
  onRemove: () => void;
}) {
  const { index, limit, issues } = props;
  const number = index + 1;
  const set =
    <K extends keyof LimitForm>(key: K) =>
    (value: LimitForm[K]) =>
      props.onChange({ ...limit, [key]: value });
  const common = (field: Parameters<typeof limitPath>[1]) => ({
    path: limitPath(index, field),
    issues,
  });
  return (
    <fieldset class="limit">
      <legend>Limit {number}</legend>
      <div class="quota-fields">
        <TextField
          label="Limit name"
          {...common('name')}
          value={limit.name}
          onChange={set('name')}
        />
        <TextField
          label="Limit"
          {...common('limit')}
          hint="0 is unlimited"
          numeric
          value={limit.limit}
          onChange={set('limit')}
        />
        <TextField
          label="Window"
          {...common('window')}
          hint="250ms, 1s, 1m, 1h, 1d"
          value={limit.window}
          onChange={set('window')}
        />
        <SelectField
          label="Algorithm"
          {...common('algorithm')}
          options={ALGORITHMS}
          value={limit.algorithm}
          onChange={set('algorithm')}
        />
        <TextField
          label="Unit"
          {...common('unit')}
          hint="requests when empty"
          value={limit.unit}
          onChange={set('unit')}
        />
        <TextField
          label="Burst"
          {...common('burst')}
          hint="token_bucket only"
          numeric
          value={limit.burst}
          onChange={set('burst')}
        />
        <TextField
          label="Precision"
          {...common('precision')}
          hint="sliding_window only, 1..120"
          numeric
          value={limit.precision}
          onChange={set('precision')}
        />
        <SelectField
          label="Align"
          {...common('align')}
          options={ALIGNS}
          value={limit.align}
          onChange={set('align')}
        />
        <TextField
          label="Timezone"
          {...common('timezone')}
          hint="with align calendar: UTC, Europe/Paris"
          value={limit.timezone}
          onChange={set('timezone')}
        />
      </div>
      <button type="button" onClick={props.onRemove}>
        Remove limit {number}
      </button>
    </fieldset>
  );
}
