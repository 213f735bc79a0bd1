import { useState } from 'preact/hooks';
import { pickPanels } from '../live/pick-panels';
import { Field } from '../ui/field';
import { QuotaPanel } from './live/quota-panel';
import { useLiveStats } from './live/use-live-stats';
import type { PageProps } from './page-props';

/** Every quota's traffic as the limiters report it, pushed by the admin each second. */
export function LivePage(props: PageProps) {
  const { history, link, why } = useLiveStats(props.session.api);
  const [filter, setFilter] = useState('');
  const replicas = history.replicas;
  const quotas = history.quotas();
  const { shown, hidden } = pickPanels(quotas, filter);
  return (
    <>
      <h1>Live</h1>
      {link !== 'connecting' && (
        <p class="live-status">
          <span class={`status ${link}`} role="status">
            {link}
          </span>
          {replicas !== undefined && <span>Replicas reporting: {replicas}</span>}
          {link === 'reconnecting' && why !== undefined && <span class="muted">{why}</span>}
        </p>
      )}
      {replicas === undefined ? (
        <p class="muted">Waiting for the first update…</p>
      ) : quotas.length === 0 ? (
        <p class="muted">No quotas reported: no limiter replica reports one.</p>
      ) : (
        <>
          <div class="live-filter">
            <Field label="Filter quotas">
              {({ id }) => (
                <input
                  id={id}
                  type="search"
                  value={filter}
                  autocomplete="off"
                  onInput={(e) => setFilter(e.currentTarget.value)}
                />
              )}
            </Field>
          </div>
          {shown.length === 0 && <p class="muted">No quota’s name contains “{filter.trim()}”.</p>}
          {hidden > 0 && (
            <p class="muted">
              Showing the {shown.length} busiest of {shown.length + hidden} quotas; filter by name
              to see the others.
            </p>
          )}
          {history.untracked > 0 && (
            <p class="muted">
              {history.untracked} more quotas are reported than this page follows at once.
            </p>
          )}
          <div class="live-grid">
            {shown.map((quota) => (
              <QuotaPanel key={quota.name} quota={quota} />
            ))}
          </div>
        </>
      )}
    </>
  );
}
