/**
 * Every quota the limiters serve (quotasInForce), whoever owns it: only admin quotas are edited
 * here; the others are read-only, each with the way to change or replace it.
 */
import type { QuotasInForceQuery } from '../../api/generated';
import { limitSummary, sourceLabel } from './quota-list';

export type QuotaInForce = QuotasInForceQuery['quotasInForce'][number];

export function InForceTable(props: { quotas: readonly QuotaInForce[] }) {
  return (
    <div class="table-wrap">
      <table class="quota-table in-force">
        <caption class="visually-hidden">Quotas in force on the limiters</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Source</th>
            <th scope="col">Limits</th>
            <th scope="col">Reported</th>
            <th scope="col">How to change it</th>
          </tr>
        </thead>
        <tbody>
          {props.quotas.map((q) => (
            <tr key={q.name} data-quota={q.name} data-source={q.source}>
              <th scope="row" data-label="Name">
                {q.name}
              </th>
              <td data-label="Source">
                <span>
                  {sourceLabel(q.source, q.provider)}
                  {q.readOnly && <span class="tag">read-only</span>}
                </span>
              </td>
              <td data-label="Limits">
                {q.limits === null ? (
                  <span class="muted">unknown to the admin</span>
                ) : (
                  <div>
                    {q.limits.map((l) => (
                      <div key={l.name}>{limitSummary(l)}</div>
                    ))}
                    {!q.limitsKnown && <small class="muted">assumed: GoCC's defaults</small>}
                  </div>
                )}
              </td>
              <td data-label="Reported">
                {q.reported ? 'yes' : <span class="muted">not by a live limiter</span>}
              </td>
              <td data-label="How to change it">
                {q.readOnly ? (
                  <small>{q.overrideHint}</small>
                ) : (
                  <span class="muted">Admin quota: edit it above.</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
