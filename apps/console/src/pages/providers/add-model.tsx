/** A form under a provider's models: adds one with its RPM, TPM and RPD (setModelQuota). */
import { useState } from 'preact/hooks';
import type { AdminApi } from '../../api/client';
import { asConsoleError, unclaimedIssues, type FieldIssue } from '../../api/errors';
import { SetModelQuotaDocument } from '../../api/generated';
import { ErrorBanner } from '../../ui/error-banner';
import { Field } from '../../ui/field';
import type { ConsoleError } from '../../api/errors';
import { LIMIT_FIELDS, parseLimits, type LimitTexts } from './model-limits';
import type { Provider } from './model-row';

const EMPTY: LimitTexts = { maxRpm: '0', maxTpm: '0', maxRpd: '0' };

export function AddModel(props: {
  api: AdminApi;
  provider: Provider;
  onAdded: (provider: Provider, model: string) => void;
}) {
  const { name, models } = props.provider;
  const [model, setModel] = useState('');
  const [texts, setTexts] = useState<LimitTexts>(EMPTY);
  const [issues, setIssues] = useState<readonly FieldIssue[]>([]);
  const [error, setError] = useState<ConsoleError | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  const add = async (event: Event) => {
    event.preventDefault();
    const wanted = model.trim();
    const found: FieldIssue[] = [];
    if (wanted === '') found.push({ field: 'model', message: 'name the model' });
    if (models.some((m) => m.model === wanted)) {
      found.push({
        field: 'model',
        message: `is already a model of ${name}: change its limits in its row`,
      });
    }
    const parsed = parseLimits(texts);
    if (!parsed.ok) found.push(...parsed.issues);
    setError(undefined);
    if (found.length > 0 || !parsed.ok) {
      setIssues(found);
      return;
    }
    setBusy(true);
    try {
      const { setModelQuota } = await props.api.request(SetModelQuotaDocument, {
        provider: name,
        model: wanted,
        ...parsed.values,
      });
      setIssues([]);
      setModel('');
      setTexts(EMPTY);
      props.onAdded(setModelQuota, wanted);
    } catch (e) {
      const failure = asConsoleError(e);
      setIssues(failure.issues);
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  const fields = ['model', ...LIMIT_FIELDS.map((f) => f.field)];
  const unplaced = unclaimedIssues(issues, fields);
  return (
    <form class="add-model" onSubmit={(e) => void add(e)} aria-label={`Add a model to ${name}`}>
      <Field label={`New model of ${name}`} path="model" issues={issues}>
        {(control) => (
          <input
            {...control}
            value={model}
            placeholder="model name, e.g. gpt-4.1"
            onInput={(e) => setModel(e.currentTarget.value)}
          />
        )}
      </Field>
      {LIMIT_FIELDS.map(({ field, label }) => (
        <Field key={field} label={`New model ${label}`} path={field} issues={issues}>
          {(control) => (
            <input
              {...control}
              class="limit-input"
              inputMode="numeric"
              value={texts[field]}
              onInput={(e) => setTexts({ ...texts, [field]: e.currentTarget.value })}
            />
          )}
        </Field>
      ))}
      <button type="submit" disabled={busy}>
        Add model
      </button>
      {error !== undefined && (unplaced.length > 0 || error.issues.length === 0) && (
        <ErrorBanner error={error} issues={unplaced} />
      )}
    </form>
  );
}
