import { useState } from 'preact/hooks';
import { MAX_PANELS, pickPanels } from '../live/pick-panels';
import { Field } from '../ui/field';
import { QuotaPanel } from './live/quota-panel';
import { useLiveStats } from './live/use-live-stats';
import type { PageProps } from './page-props';

/**
 * Every quota's traffic as the limiters report it, pushed by the admin each second: the busiest
 * first with the keys they refuse most, the idle ones (no decision in the window) folded away.
 */
export function LivePage(props: PageProps) {
  const { history, link, why } = useLiveStats(props.session.api);
  const [filter, setFilter] = useState('');
  const [showIdle, setShowIdle] = useState(false);
  const replicas = history.replicas;
  const quotas = history.quotas();
  const { shown, hidden, idle } = pickPanels(quotas, filter);
  const idleShown = showIdle ? idle.slice(0, MAX_PANELS) : [];
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
          {shown.length + idle.length === 0 && (
            <p class="muted">No quota’s name contains “{filter.trim()}”.</p>
          )}
          {hidden > 0 && (
            <p class="muted">
              Showing the {shown.length} busiest of {shown.length + hidden} busy quotas; filter by
              name to see the others.
            </p>
          )}
          {history.untracked > 0 && (
            <p class="muted">
              {history.untracked} more quotas are reported than this page follows at once.
            </p>
          )}
          <section class="live-grid" aria-label="Busy quotas, busiest first">
            {shown.map((quota) => (
              <QuotaPanel key={quota.name} quota={quota} />
            ))}
          </section>
          {idle.length > 0 && (
            <p class="live-idle">
              <button type="button" aria-expanded={showIdle} onClick={() => setShowIdle(!showIdle)}>
                {showIdle ? 'Hide' : 'Show'} {idle.length} idle{' '}
                {idle.length === 1 ? 'quota' : 'quotas'}
              </button>{' '}
              <span class="muted">no decision in the last 10 minutes</span>
            </p>
          )}
          {idleShown.length > 0 && (
            <>
              {idle.length > idleShown.length && (
                <p class="muted">
                  Showing {idleShown.length} of {idle.length} idle quotas; filter by name to see the
                  others.
                </p>
              )}
              <section class="live-grid" aria-label="Idle quotas">
                {idleShown.map((quota) => (
                  <QuotaPanel key={quota.name} quota={quota} />
                ))}
              </section>
            </>
          )}
        </>
      )}
    </>
  );
}
