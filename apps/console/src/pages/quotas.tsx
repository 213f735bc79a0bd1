import { useEffect, useRef, useState } from 'preact/hooks';
import { asConsoleError, type ConsoleError } from '../api/errors';
import {
  DeleteQuotaDocument,
  QuotasDocument,
  QuotasInForceDocument,
  type QuotaFieldsFragment,
} from '../api/generated';
import { ErrorBanner } from '../ui/error-banner';
import { useRequest } from '../ui/use-request';
import type { PageProps } from './page-props';
import { InForceTable } from './quotas/in-force-table';
import { loadAllQuotas } from './quotas/load-quotas';
import { QuotaEditor } from './quotas/quota-editor';
import { filterQuotas } from './quotas/quota-list';
import { QuotaTable } from './quotas/quota-table';

/** What the editor is open for: a new quota, or an existing one. */
type Editing = { readonly quota: QuotaFieldsFragment | undefined };

export function QuotasPage({ session }: PageProps) {
  const { api, canWrite } = session;
  const quotas = useRequest(
    () =>
      loadAllQuotas((first, after) =>
        api.request(QuotasDocument, { first, after }).then((d) => d.quotas),
      ),
    [api],
  );
  const inForce = useRequest(
    () => api.request(QuotasInForceDocument).then((d) => d.quotasInForce),
    [api],
  );
  const reloadAll = () => {
    quotas.reload();
    inForce.reload();
  };
  const [search, setSearch] = useState('');
  const [editing, setEditing] = useState<Editing | undefined>(undefined);
  const [done, setDone] = useState('');
  const [deleteError, setDeleteError] = useState<ConsoleError | undefined>(undefined);
  // Where the keyboard goes back to when the editor closes or a row goes away.
  const [returnTo, setReturnTo] = useState<string | undefined>(undefined);
  const pageRef = useRef<HTMLElement>(null);

  useEffect(() => {
    if (editing !== undefined || returnTo === undefined) return;
    const page = pageRef.current;
    const row = page?.querySelector<HTMLElement>(`button[aria-label="Edit ${returnTo}"]`);
    // A quota just created has its row only once the list is back.
    if (row === null && quotas.loading) return;
    (row ?? page?.querySelector<HTMLElement>('h1'))?.focus();
    setReturnTo(undefined);
  }, [editing, returnTo, quotas.data, quotas.loading]);

  const open = (quota: QuotaFieldsFragment | undefined) => {
    setDone('');
    setDeleteError(undefined);
    setEditing({ quota });
  };
  const close = (focusName: string | undefined) => {
    setEditing(undefined);
    setReturnTo(focusName ?? '');
  };
  const remove = async (quota: QuotaFieldsFragment) => {
    setDone('');
    try {
      await api.request(DeleteQuotaDocument, { name: quota.name });
      setDeleteError(undefined);
      setDone(`Deleted ${quota.name}`);
    } catch (e) {
      setDeleteError(asConsoleError(e));
    }
    setReturnTo('');
    reloadAll();
  };

  const shown = filterQuotas(quotas.data ?? [], search);
  return (
    <section ref={pageRef} class="quotas-page">
      <div class="page-head">
        <h1 tabIndex={-1}>Quotas</h1>
        {canWrite && editing === undefined && (
          <button type="button" class="primary" onClick={() => open(undefined)}>
            New quota
          </button>
        )}
      </div>
      <p role="status" class="saved">
        {done}
      </p>
      {editing !== undefined ? (
        <QuotaEditor
          api={api}
          existing={editing.quota}
          onCancel={() => close(editing.quota?.name)}
          onSaved={(saved) => {
            setDone(`Saved ${saved.name} (version ${saved.version})`);
            close(saved.name);
            reloadAll();
          }}
        />
      ) : (
        <>
          <ErrorBanner error={deleteError ?? quotas.error} />
          <div class="field search">
            <label for="quota-search">Search quotas</label>
            <input
              id="quota-search"
              type="search"
              value={search}
              placeholder="name or match"
              onInput={(e) => setSearch(e.currentTarget.value)}
            />
          </div>
          {quotas.data === undefined ? (
            quotas.loading && <p class="muted">Loading quotas…</p>
          ) : shown.length === 0 ? (
            <p class="muted">
              {quotas.data.length === 0
                ? 'No admin quotas yet: the limiters still serve the quotas in force below.'
                : 'No admin quota matches this search.'}
            </p>
          ) : (
            <QuotaTable
              quotas={shown}
              canWrite={canWrite}
              onEdit={(q) => open(q)}
              onDelete={remove}
            />
          )}
          <h2 id="in-force-title">In force on the limiters</h2>
          <p class="muted">
            Every quota the limiters serve, whoever owns it. Only admin quotas are edited here; an
            admin quota replaces a quota of the same name from the limiters' config file, a provider
            or the built-in default, on every limiter. The admin cannot read the limiters' config
            files: their quotas appear by name, limits unknown, once a live limiter reports them.
          </p>
          <ErrorBanner error={inForce.error} />
          {inForce.data === undefined ? (
            inForce.loading && <p class="muted">Loading the quotas in force…</p>
          ) : (
            <InForceTable quotas={filterQuotas(inForce.data, search)} />
          )}
        </>
      )}
    </section>
  );
}
