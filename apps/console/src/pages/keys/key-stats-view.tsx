import type { KeyStatsQuery } from '../../api/generated';
import { count } from '../../ui/format';
import { resetIn } from './reset-in';

export type KeyStats = KeyStatsQuery['keyStats'];

const SCOPE_MEANING = {
  local: 'counts summed over the replicas; each replica admits up to the limit',
  cluster: 'one count in Redis, shared by every replica',
} as const;

/** 0 is "unlimited" in the admin's terms. */
function limitText(limit: number): string {
  return limit === 0 ? 'unlimited' : count(limit);
}

/** One key's state as every limiter replica reported it. */
export function KeyStatsView(props: { stats: KeyStats }) {
  const { stats } = props;
  const summary: [string, string][] = [
    ['Quota', stats.quota],
    ['Replicas answered', count(stats.replicas)],
    ['Approved', count(stats.approved)],
    ['Denied', count(stats.denied)],
    ['In flight', count(stats.inFlight)],
    ['Queued', count(stats.queued)],
  ];
  return (
    <section class="panel" aria-labelledby="key-stats-title">
      <h2 id="key-stats-title">
        Key <code>{stats.key}</code>
      </h2>
      <dl class="facts">
        <div class="wide">
          <dt>Scope</dt>
          <dd>
            {stats.scope} <small class="muted">({SCOPE_MEANING[stats.scope]})</small>
          </dd>
        </div>
        {summary.map(([term, value]) => (
          <div key={term}>
            <dt>{term}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      {stats.limits.length === 0 ? (
        <p class="muted">No limit is enforced on this key.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Limits of {stats.key}</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Unit</th>
                <th scope="col" class="num">
                  Limit
                </th>
                <th scope="col" class="num">
                  Used
                </th>
                <th scope="col" class="num">
                  Remaining
                </th>
                <th scope="col" class="num">
                  Reset in
                </th>
              </tr>
            </thead>
            <tbody>
              {stats.limits.map((l) => (
                <tr key={l.name}>
                  <th scope="row">{l.name}</th>
                  <td>{l.unit}</td>
                  <td class="num">{limitText(l.limit)}</td>
                  <td class="num">{count(l.used)}</td>
                  <td class="num">{l.limit === 0 ? 'unlimited' : count(l.remaining)}</td>
                  <td class="num">{resetIn(l.resetMs)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
