import { useEffect, useState } from 'preact/hooks';
import { asConsoleError, type ConsoleError } from './api/errors';
import { logIn, tokenlessAccess, type Session } from './session';
import { ErrorBanner } from './ui/error-banner';

/**
 * The read or the admin token, in a password field; nothing else is asked. `resume` is this tab's
 * earlier login that the admin could not check (out of reach): kept, and tried again on request.
 */
export function Login(props: {
  onLogIn: (session: Session) => void;
  resume?: { error: ConsoleError; retry: () => void } | undefined;
}) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<ConsoleError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [access, setAccess] = useState<'open' | 'reads-open' | undefined>(undefined);
  useEffect(() => {
    let current = true;
    void tokenlessAccess().then((a) => current && setAccess(a));
    return () => {
      current = false;
    };
  }, []);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      props.onLogIn(await logIn(token));
    } catch (e) {
      setError(asConsoleError(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="login">
      <form onSubmit={(e) => void submit(e)} aria-labelledby="login-title">
        <h1 id="login-title">ratelimit console</h1>
        <p>Log in with the admin token (to change quotas) or the read token (to watch).</p>
        {access === 'open' && (
          <p class="banner warning" role="note">
            This admin has no token configured (ADMIN_TOKEN, ADMIN_TOKENS, ADMIN_READ_TOKEN and
            ADMIN_READ_TOKENS are unset): anyone who reaches it can read and change quotas. Leave
            the token empty to log in.
          </p>
        )}
        {access === 'reads-open' && (
          <p class="banner warning" role="note">
            This admin has no read token configured: anyone who reaches it can read, without a
            token. Changes need the admin token.
          </p>
        )}
        {props.resume !== undefined && (
          <ErrorBanner error={props.resume.error}>
            <button type="button" onClick={props.resume.retry}>
              Try again
            </button>
          </ErrorBanner>
        )}
        <label for="token">Token</label>
        <input
          id="token"
          type="password"
          autoComplete="current-password"
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
          autoFocus
        />
        <button type="submit" disabled={busy}>
          Log in
        </button>
        <ErrorBanner error={error} />
      </form>
    </main>
  );
}
