/** The quotas as a table: what each one limits, its version and its last change. */
import type { QuotaFieldsFragment } from '../../api/generated';
import { ConfirmButton } from '../../ui/confirm-button';
import { instant } from '../../ui/format';
import { limitSummary } from './quota-list';

export function QuotaTable(props: {
  quotas: readonly QuotaFieldsFragment[];
  /** False with a read token: no Edit or Delete then. */
  canWrite: boolean;
  onEdit: (quota: QuotaFieldsFragment) => void;
  onDelete: (quota: QuotaFieldsFragment) => Promise<void>;
}) {
  return (
    <div class="table-wrap">
      <table class="quota-table">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Match</th>
            <th scope="col">Scope</th>
            <th scope="col">Limits</th>
            <th scope="col" class="num">
              Version
            </th>
            <th scope="col">Last change</th>
            {props.canWrite && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {props.quotas.map((q) => (
            <tr key={q.name}>
              <td data-label="Name">{q.name}</td>
              <td data-label="Match">
                {q.match === null ? <span class="muted">(none)</span> : <code>{q.match}</code>}
              </td>
              <td data-label="Scope">
                <span>
                  {q.scope}
                  {q.shadow && <span class="tag">shadow</span>}
                </span>
              </td>
              <td data-label="Limits">
                <div>
                  {q.limits.map((l) => (
                    <div key={l.name}>{limitSummary(l)}</div>
                  ))}
                </div>
              </td>
              <td class="num" data-label="Version">
                {q.version}
              </td>
              <td data-label="Last change">
                <time dateTime={q.updatedAt}>{instant(q.updatedAt)}</time>
              </td>
              {props.canWrite && (
                <td data-label="Actions">
                  <div class="row-actions">
                    <button
                      type="button"
                      aria-label={`Edit ${q.name}`}
                      onClick={() => props.onEdit(q)}
                    >
                      Edit
                    </button>
                    <ConfirmButton
                      label="Delete"
                      question={`Delete quota ${q.name}?`}
                      confirmLabel="Yes, delete"
                      onConfirm={() => props.onDelete(q)}
                    />
                  </div>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
