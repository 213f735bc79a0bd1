import { useCallback, useEffect, useState } from 'preact/hooks';
import { asConsoleError, ConsoleError } from './api/errors';
import { Login } from './login';
import { AuditPage } from './pages/audit';
import { ImportPage } from './pages/import';
import { KeysPage } from './pages/keys';
import { LivePage } from './pages/live';
import type { PageProps } from './pages/page-props';
import { ProvidersPage } from './pages/providers';
import { QuotasPage } from './pages/quotas';
import { PAGES, pageOf, type PagePath } from './routes';
import { logIn, logOut, savedToken, type Session } from './session';

const PAGE_VIEWS: Record<PagePath, (props: PageProps) => preact.JSX.Element> = {
  live: LivePage,
  quotas: QuotasPage,
  providers: ProvidersPage,
  keys: KeysPage,
  audit: AuditPage,
  import: ImportPage,
};

function useHashPage(): PagePath {
  const [page, setPage] = useState(pageOf(location.hash));
  useEffect(() => {
    const onChange = () => setPage(pageOf(location.hash));
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return page;
}

export function App() {
  const [session, setSession] = useState<Session | undefined>(undefined);
  // A reload keeps the tab's login: the saved token is checked again before anything is shown.
  const [resuming, setResuming] = useState(savedToken() !== undefined);
  const [resumeError, setResumeError] = useState<ConsoleError | undefined>(undefined);
  const page = useHashPage();
  const resume = useCallback(() => {
    const token = savedToken();
    if (token === undefined) return;
    setResuming(true);
    setResumeError(undefined);
    logIn(token)
      .then(setSession)
      .catch((e: unknown) => {
        // Only the admin's "unknown token" ends the login; an admin out of reach keeps it.
        const error = asConsoleError(e);
        if (error.code === 'UNAUTHENTICATED') logOut(undefined);
        else {
          const why = `Your login could not be checked (${error.message}); it is kept for this tab.`;
          setResumeError(new ConsoleError(why, error.code));
        }
      })
      .finally(() => setResuming(false));
  }, []);
  useEffect(resume, [resume]);
  useEffect(() => {
    const title = PAGES.find((p) => p.path === page)?.title ?? '';
    document.title = session === undefined ? 'ratelimit console' : `${title} · ratelimit console`;
  }, [page, session]);

  if (resuming) return <p class="loading">Loading…</p>;
  if (session === undefined) {
    const retry = resumeError === undefined ? undefined : { error: resumeError, retry: resume };
    return <Login onLogIn={setSession} resume={retry} />;
  }
  const View = PAGE_VIEWS[page];
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">ratelimit</span>
        <nav aria-label="Pages">
          {PAGES.map((p) => (
            <a
              key={p.path}
              href={`#/${p.path}`}
              aria-current={p.path === page ? 'page' : undefined}
            >
              {p.title}
            </a>
          ))}
        </nav>
        <span class="who">
          {session.canWrite ? 'admin' : 'read only'}
          {session.name !== null && ` (${session.name})`}
          <button
            type="button"
            onClick={() => {
              logOut(session);
              setSession(undefined);
            }}
          >
            Log out
          </button>
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        <View session={session} />
      </main>
    </>
  );
}
