import { useEffect, useState } from 'preact/hooks';
import { unclaimedIssues } from '../api/errors';
import { KeyStatsDocument } from '../api/generated';
import { keysQueryOf } from '../routes';
import { ErrorBanner } from '../ui/error-banner';
import { TextField } from '../ui/controls';
import { useRequest } from '../ui/use-request';
import { KeyStatsView } from './keys/key-stats-view';
import { ResetKey, type KeyQuery } from './keys/reset-key';
import type { PageProps } from './page-props';

/**
 * One key's counts on every limiter replica, and (with the admin token) a reset of them. An address
 * that names a key (`#/keys?quota=api&key=alice`, as the Live page links) looks it up at once.
 */
export function KeysPage(props: PageProps) {
  const { api, canWrite } = props.session;
  const linked = keysQueryOf(location.hash);
  const [key, setKey] = useState(linked?.key ?? '');
  const [quota, setQuota] = useState(linked?.quota ?? '');
  const [query, setQuery] = useState<KeyQuery | undefined>(linked);
  useEffect(() => {
    const onChange = () => {
      const named = keysQueryOf(location.hash);
      if (named === undefined) return;
      setKey(named.key);
      setQuota(named.quota ?? '');
      setQuery(named);
    };
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  const stats = useRequest(
    async () => (query === undefined ? undefined : api.request(KeyStatsDocument, query)),
    [api, query],
  );
  const issues = stats.error?.issues ?? [];
  const unplaced = unclaimedIssues(issues, ['key', 'quota']);
  // Issues shown at their fields need no banner as well.
  const placedAtFields = issues.length > 0 && unplaced.length === 0;
  const lookUp = (event: Event) => {
    event.preventDefault();
    const q = quota.trim();
    setQuery({ key, quota: q === '' ? undefined : q });
  };
  // The answer shown is for the key looked up, whatever the inputs hold now.
  const shown = stats.error === undefined ? stats.data?.keyStats : undefined;
  return (
    <>
      <h1>Keys</h1>
      <form class="row" onSubmit={lookUp} aria-label="Look up a key">
        <TextField label="Key" path="key" issues={issues} value={key} onChange={setKey} />
        <TextField
          label="Quota (optional)"
          path="quota"
          issues={issues}
          value={quota}
          onChange={setQuota}
        />
        <div class="field">
          <button type="submit" disabled={stats.loading && query !== undefined}>
            Look up
          </button>
        </div>
      </form>
      <ErrorBanner error={placedAtFields ? undefined : stats.error} issues={unplaced} />
      {query !== undefined && canWrite && (
        <ResetKey api={api} query={query} onReset={stats.reload} key={JSON.stringify(query)} />
      )}
      {shown !== undefined && <KeyStatsView stats={shown} />}
    </>
  );
}
