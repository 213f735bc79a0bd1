import { useState } from 'preact/hooks';
import type { AdminApi } from '../../api/client';
import { asConsoleError, type ConsoleError, type FieldIssue } from '../../api/errors';
import { SetProviderEnabledDocument } from '../../api/generated';
import { ErrorBanner } from '../../ui/error-banner';
import { AddModel } from './add-model';
import { LIMIT_FIELDS } from './model-limits';
import { EditableModelRow, PlainModelRow, type Provider, type RowOutcome } from './model-row';

/** One provider: whether it is served, and its models' limits (editable with the admin token). */
export function ProviderPanel(props: { api: AdminApi; canWrite: boolean; provider: Provider }) {
  const [provider, setProvider] = useState(props.provider);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ error: ConsoleError; issues: readonly FieldIssue[] }>();
  const [status, setStatus] = useState('');
  const { name } = provider;
  const headingId = `provider-${name}`;

  const setEnabled = async (enabled: boolean) => {
    setBusy(true);
    setStatus('');
    // The box shows the operator's choice at once; a refusal puts it back.
    setProvider((p) => ({ ...p, enabled }));
    try {
      const { setProviderEnabled } = await props.api.request(SetProviderEnabledDocument, {
        name,
        enabled,
      });
      setProvider((p) => ({ ...p, enabled: setProviderEnabled.enabled }));
      setError(undefined);
      setStatus(setProviderEnabled.enabled ? `${name} enabled` : `${name} disabled`);
    } catch (e) {
      const failure = asConsoleError(e);
      setProvider((p) => ({ ...p, enabled: !enabled }));
      setError({ error: failure, issues: failure.issues });
    } finally {
      setBusy(false);
    }
  };

  const onOutcome = (outcome: RowOutcome) => {
    if (outcome.saved !== undefined) {
      setProvider(outcome.saved.provider);
      setStatus(`Saved ${outcome.saved.model}`);
      setError(undefined);
    } else {
      setStatus('');
      const failure = outcome.error;
      const unplaced = outcome.unplaced ?? [];
      // Issues the row shows at its inputs need no banner; anything else does.
      const needsBanner =
        failure !== undefined && (unplaced.length > 0 || failure.issues.length === 0);
      setError(needsBanner ? { error: failure, issues: unplaced } : undefined);
    }
  };

  return (
    <section class="panel" aria-labelledby={headingId}>
      <div class="panel-head">
        <h2 id={headingId}>{name}</h2>
        <span class={provider.enabled ? 'badge on' : 'badge off'}>
          {provider.enabled ? 'enabled' : 'disabled'}
        </span>
      </div>
      {props.canWrite && (
        <label class="check">
          <input
            type="checkbox"
            aria-label={`Enable ${name}`}
            checked={provider.enabled}
            disabled={busy}
            onChange={(e) => void setEnabled(e.currentTarget.checked)}
          />
          Enabled
        </label>
      )}
      <ErrorBanner error={error?.error} issues={error?.issues} />
      {provider.models.length === 0 ? (
        <p class="muted">No models.</p>
      ) : (
        <div class="table-wrap">
          <table class={props.canWrite ? 'models editable' : 'models'}>
            <caption class="visually-hidden">Models of {name} (0 = unlimited)</caption>
            <thead>
              <tr>
                <th scope="col">Model</th>
                {LIMIT_FIELDS.map(({ field, label }) => (
                  <th key={field} scope="col" class={props.canWrite ? undefined : 'num'}>
                    {label}
                  </th>
                ))}
                {props.canWrite && (
                  <th scope="col">
                    <span class="visually-hidden">Save</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {provider.models.map((model) =>
                props.canWrite ? (
                  <EditableModelRow
                    key={model.model}
                    api={props.api}
                    provider={name}
                    model={model}
                    onOutcome={onOutcome}
                  />
                ) : (
                  <PlainModelRow key={model.model} model={model} />
                ),
              )}
            </tbody>
          </table>
        </div>
      )}
      {props.canWrite && (
        <AddModel
          api={props.api}
          provider={provider}
          onAdded={(saved, model) => {
            setProvider(saved);
            setError(undefined);
            setStatus(`Added ${model}`);
          }}
        />
      )}
      {props.canWrite && (
        <p class="muted status-line" role="status">
          {status}
        </p>
      )}
    </section>
  );
}
