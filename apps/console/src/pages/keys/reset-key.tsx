import { useState } from 'preact/hooks';
import type { AdminApi } from '../../api/client';
import { asConsoleError, type ConsoleError } from '../../api/errors';
import { ResetKeyDocument } from '../../api/generated';
import { ConfirmButton } from '../../ui/confirm-button';
import { ErrorBanner } from '../../ui/error-banner';

export interface KeyQuery {
  readonly key: string;
  readonly quota?: string;
}

/** Forgets a key's counts on every limiter, after asking; then says what the limiters did. */
export function ResetKey(props: { api: AdminApi; query: KeyQuery; onReset: () => void }) {
  const { key, quota } = props.query;
  const [status, setStatus] = useState('');
  const [error, setError] = useState<ConsoleError | undefined>(undefined);
  const reset = async () => {
    setStatus('');
    try {
      const { resetKey } = await props.api.request(ResetKeyDocument, { key, quota });
      setError(undefined);
      const replicas = `${resetKey.replicas} ${resetKey.replicas === 1 ? 'replica' : 'replicas'}`;
      setStatus(resetKey.reset ? `Reset on ${replicas}` : `No replica held counts for ${key}`);
      props.onReset();
    } catch (e) {
      setError(asConsoleError(e));
    }
  };
  return (
    <div class="reset-key">
      <ConfirmButton
        label="Reset key"
        question={`Reset key ${key} on every limiter?`}
        confirmLabel="Yes, reset"
        onConfirm={reset}
      />
      <p role="status" class="status-line">
        {status}
      </p>
      <ErrorBanner error={error} />
    </div>
  );
}
