/**
 * Creates or replaces one quota: every field of QuotaInput. The admin's issues appear at the
 * field they name; issues no field claims, and other errors, above the form.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { AdminApi } from '../../api/client';
import { asConsoleError, ConsoleError, unclaimedIssues } from '../../api/errors';
import {
  UpsertQuotaDocument,
  type LeaseMode,
  type QuotaFieldsFragment,
  type Scope,
  type StoreFailurePolicy,
} from '../../api/generated';
import { ErrorBanner } from '../../ui/error-banner';
import { CheckboxField, SelectField, TextField } from '../../ui/controls';
import { LimitFields } from './limit-fields';
import {
  EMPTY_LIMIT,
  EMPTY_QUOTA,
  formFromQuota,
  formPaths,
  quotaPaths,
  toQuotaInput,
  type QuotaForm,
} from './quota-form';

const SCOPES: readonly (readonly [Scope, string])[] = [
  ['local', 'local'],
  ['cluster', 'cluster'],
];
const LEASES: readonly (readonly [LeaseMode, string])[] = [
  ['auto', 'auto'],
  ['off', 'off'],
];
const STORE_FAILURE: readonly (readonly ['' | StoreFailurePolicy, string])[] = [
  ['', 'default (local)'],
  ['closed', 'closed'],
  ['open', 'open'],
  ['local', 'local'],
];

export function QuotaEditor(props: {
  api: AdminApi;
  /** The quota to edit; a new one when absent. */
  existing: QuotaFieldsFragment | undefined;
  onSaved: (quota: QuotaFieldsFragment) => void;
  onCancel: () => void;
}) {
  const { existing } = props;
  const [form, setForm] = useState<QuotaForm>(() =>
    existing === undefined ? EMPTY_QUOTA : formFromQuota(existing),
  );
  const [error, setError] = useState<ConsoleError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const formRef = useRef<HTMLFormElement>(null);
  const addLimitRef = useRef<HTMLButtonElement>(null);
  const issues = error?.issues ?? [];

  useEffect(() => {
    formRef.current?.querySelector<HTMLElement>('input:not([readonly]), select')?.focus();
  }, []);
  // After a refused save, the keyboard lands on the first field that says why.
  useEffect(() => {
    if (error === undefined) return;
    const invalid = formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]');
    (invalid ?? formRef.current?.querySelector<HTMLElement>('[role="alert"]'))?.focus();
  }, [error]);

  // Removing a limit removes the button that had the focus: the keyboard goes on from Add limit.
  useEffect(() => {
    if (document.activeElement === null || document.activeElement === document.body) {
      addLimitRef.current?.focus();
    }
  }, [form.limits.length]);

  const set =
    <K extends keyof QuotaForm>(key: K) =>
    (value: QuotaForm[K]) =>
      setForm((f) => ({ ...f, [key]: value }));
  // Adding or removing a limit renumbers the paths: issues about the old numbering would mislead.
  const setLimits = (limits: QuotaForm['limits']) => {
    setForm((f) => ({ ...f, limits }));
    setError(undefined);
  };

  const save = async () => {
    const result = toQuotaInput(form);
    if (!result.ok) {
      setError(new ConsoleError('Nothing was sent', 'BAD_USER_INPUT', result.issues));
      return;
    }
    setBusy(true);
    try {
      const { upsertQuota } = await props.api.request(UpsertQuotaDocument, {
        input: result.input,
      });
      props.onSaved(upsertQuota);
    } catch (e) {
      setError(asConsoleError(e));
      setBusy(false);
    }
  };

  const unclaimed = unclaimedIssues(issues, formPaths(form));
  const common = (path: string) => ({ path, issues });
  return (
    <form
      ref={formRef}
      class="panel quota-editor"
      aria-labelledby="quota-editor-title"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <h2 id="quota-editor-title">
        {existing === undefined ? 'New quota' : `Edit ${existing.name}`}
      </h2>
      {error !== undefined && (issues.length === 0 || unclaimed.length > 0) && (
        <ErrorBanner error={error} issues={unclaimed} />
      )}
      <div class="quota-fields">
        <TextField
          label="Name"
          {...common(quotaPaths.name)}
          hint={existing === undefined ? undefined : 'a quota is saved by its name'}
          readOnly={existing !== undefined}
          value={form.name}
          onChange={set('name')}
        />
        <TextField
          label="Match"
          {...common(quotaPaths.match)}
          hint="glob with *, or re:<regex>"
          value={form.match}
          onChange={set('match')}
        />
        <SelectField
          label="Scope"
          {...common(quotaPaths.scope)}
          options={SCOPES}
          value={form.scope}
          onChange={set('scope')}
        />
        <SelectField
          label="Lease"
          {...common(quotaPaths.lease)}
          options={LEASES}
          value={form.lease}
          onChange={set('lease')}
        />
        <SelectField
          label="On store failure"
          {...common(quotaPaths.onStoreFailure)}
          options={STORE_FAILURE}
          value={form.onStoreFailure}
          onChange={set('onStoreFailure')}
        />
        <CheckboxField
          label="Shadow"
          {...common(quotaPaths.shadow)}
          hint="counts, but never refuses"
          checked={form.shadow}
          onChange={set('shadow')}
        />
        <CheckboxField
          label="Client overrides"
          {...common(quotaPaths.clientOverrides)}
          hint="GoCC clients may set a key's own limit and queue size"
          checked={form.clientOverrides}
          onChange={set('clientOverrides')}
        />
        <TextField
          label="Queue max size"
          {...common(quotaPaths.queueMaxSize)}
          hint="both queue fields empty: no queue"
          numeric
          value={form.queueMaxSize}
          onChange={set('queueMaxSize')}
        />
        <TextField
          label="Queue max wait (ms)"
          {...common(quotaPaths.queueMaxWaitMs)}
          numeric
          value={form.queueMaxWaitMs}
          onChange={set('queueMaxWaitMs')}
        />
        <TextField
          label="Concurrency max"
          {...common(quotaPaths.concurrencyMax)}
          hint="empty: no concurrency limit"
          numeric
          value={form.concurrencyMax}
          onChange={set('concurrencyMax')}
        />
        <TextField
          label="Concurrency lease TTL (ms)"
          {...common(quotaPaths.concurrencyLeaseTtlMs)}
          hint="60000 when empty"
          numeric
          value={form.concurrencyLeaseTtlMs}
          onChange={set('concurrencyLeaseTtlMs')}
        />
      </div>
      {form.limits.map((limit, i) => (
        <LimitFields
          key={i}
          index={i}
          limit={limit}
          issues={issues}
          onChange={(changed) => set('limits')(form.limits.map((l, j) => (j === i ? changed : l)))}
          onRemove={() => setLimits(form.limits.filter((_, j) => j !== i))}
        />
      ))}
      <div class="row actions">
        <button
          type="button"
          ref={addLimitRef}
          onClick={() => setLimits([...form.limits, EMPTY_LIMIT])}
        >
          Add limit
        </button>
        <span class="spacer" />
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="submit" disabled={busy}>
          Save quota
        </button>
      </div>
    </form>
  );
}
