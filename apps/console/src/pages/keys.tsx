import { useState } from 'preact/hooks';
import { unclaimedIssues } from '../api/errors';
import { KeyStatsDocument } from '../api/generated';
import { ErrorBanner } from '../ui/error-banner';
import { TextField } from '../ui/controls';
import { useRequest } from '../ui/use-request';
import { KeyStatsView } from './keys/key-stats-view';
import { ResetKey, type KeyQuery } from './keys/reset-key';
import type { PageProps } from './page-props';

/** One key's counts on every limiter replica, and (with the admin token) a reset of them. */
export function KeysPage(props: PageProps) {
  const { api, canWrite } = props.session;
  const [key, setKey] = useState('');
  const [quota, setQuota] = useState('');
  const [query, setQuery] = useState<KeyQuery | undefined>(undefined);
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
