import { useId, useState } from 'preact/hooks';
import type { AdminApi } from '../../api/client';
import { asConsoleError, issuesAt, type ConsoleError, type FieldIssue } from '../../api/errors';
import { SetModelQuotaDocument, type ProvidersQuery } from '../../api/generated';
import {
  LIMIT_FIELDS,
  limitTexts,
  parseLimits,
  type LimitField,
  type LimitTexts,
} from './model-limits';

export type Provider = ProvidersQuery['providers'][number];
export type Model = Provider['models'][number];

/** What a row tells its panel: the provider as saved, or an error the row cannot place. */
export interface RowOutcome {
  readonly saved?: { provider: Provider; model: string };
  readonly error?: ConsoleError;
  readonly unplaced?: readonly FieldIssue[];
}

/** One model's limits as inputs, saved with setModelQuota; issues shown at each input. */
export function EditableModelRow(props: {
  api: AdminApi;
  provider: string;
  model: Model;
  onOutcome: (outcome: RowOutcome) => void;
}) {
  const { model } = props;
  const id = useId();
  const [texts, setTexts] = useState<LimitTexts>(limitTexts(model));
  const [issues, setIssues] = useState<readonly FieldIssue[]>([]);
  const [busy, setBusy] = useState(false);

  const save = async () => {
    const parsed = parseLimits(texts);
    if (!parsed.ok) {
      setIssues(parsed.issues);
      props.onOutcome({});
      return;
    }
    setBusy(true);
    try {
      const { setModelQuota } = await props.api.request(SetModelQuotaDocument, {
        provider: props.provider,
        model: model.model,
        ...parsed.values,
      });
      const saved = setModelQuota.models.find((m) => m.model === model.model);
      if (saved !== undefined) setTexts(limitTexts(saved));
      setIssues([]);
      props.onOutcome({ saved: { provider: setModelQuota, model: model.model } });
    } catch (e) {
      const error = asConsoleError(e);
      const fields = LIMIT_FIELDS.map((f) => f.field);
      setIssues(error.issues);
      props.onOutcome({
        error,
        unplaced: error.issues.filter((i) => !fields.some((f) => issuesAt([i], f).length > 0)),
      });
    } finally {
      setBusy(false);
    }
  };

  const cell = (field: LimitField, label: string) => {
    const mine = issuesAt(issues, field);
    const errorId = `${id}-${field}-error`;
    return (
      <td key={field} data-label={label}>
        <div class={mine.length > 0 ? 'field invalid' : 'field'} data-path={field}>
          <input
            class="limit-input"
            inputMode="numeric"
            aria-label={`${model.model} ${label}`}
            aria-invalid={mine.length > 0}
            aria-describedby={mine.length > 0 ? errorId : undefined}
            value={texts[field]}
            onInput={(e) => setTexts({ ...texts, [field]: e.currentTarget.value })}
            onKeyDown={(e) => e.key === 'Enter' && void save()}
          />
          {mine.length > 0 && (
            <small id={errorId} class="field-error">
              {mine.map((i) => i.message).join('; ')}
            </small>
          )}
        </div>
      </td>
    );
  };

  return (
    <tr>
      <th scope="row">{model.model}</th>
      {LIMIT_FIELDS.map(({ field, label }) => cell(field, label))}
      <td>
        <button
          type="button"
          aria-label={`Save ${model.model}`}
          disabled={busy}
          onClick={() => void save()}
        >
          Save
        </button>
      </td>
    </tr>
  );
}

/** 0 is "unlimited" in the admin's terms. */
export function limitText(value: number): string {
  return value === 0 ? 'unlimited' : value.toLocaleString('en');
}

export function PlainModelRow(props: { model: Model }) {
  const { model } = props;
  return (
    <tr>
      <th scope="row">{model.model}</th>
      {LIMIT_FIELDS.map(({ field }) => (
        <td key={field} class="num">
          {limitText(model[field])}
        </td>
      ))}
    </tr>
  );
}
