import { useState } from 'preact/hooks';
import { AuditLogDocument } from '../api/generated';
import { ErrorBanner } from '../ui/error-banner';
import { SelectField } from '../ui/controls';
import { useRequest } from '../ui/use-request';
import { AuditRow } from './audit/audit-row';
import type { PageProps } from './page-props';

const PAGE_SIZES = ['50', '100', '500'].map((n) => [n, n] as const);

/** Every change made through the admin, newest first (as the admin returns them). */
export function AuditPage(props: PageProps) {
  const { api } = props.session;
  const [limit, setLimit] = useState<number>(100);
  const log = useRequest(() => api.request(AuditLogDocument, { limit }), [api, limit]);
  const entries = log.data?.auditLog;
  return (
    <>
      <h1>Audit</h1>
      <div class="row">
        <SelectField
          label="Show"
          path="limit"
          issues={log.error?.issues}
          options={PAGE_SIZES}
          value={String(limit)}
          onChange={(n) => setLimit(Number(n))}
        />
        <div class="field">
          <button type="button" onClick={log.reload} disabled={log.loading}>
            Refresh
          </button>
        </div>
      </div>
      <ErrorBanner error={log.error} />
      {entries === undefined && log.loading && <p class="loading">Loading…</p>}
      {entries?.length === 0 && <p class="muted">No change has been made yet.</p>}
      {entries !== undefined && entries.length > 0 && (
        <div class="table-wrap">
          <table class="audit">
            <caption class="visually-hidden">Changes, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Actor</th>
                <th scope="col">Action</th>
                <th scope="col">Target</th>
                <th scope="col">Changes</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((entry) => (
                <AuditRow key={entry.id} entry={entry} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
