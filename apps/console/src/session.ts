/**
 * Who is logged in: the token (kept in session storage, so it is gone with the tab) and what the
 * admin says it may do.
 */
import { AdminApi } from './api/client';
import { ConsoleError } from './api/errors';
import { ViewerDocument, type Credential } from './api/generated';

const STORAGE_KEY = 'ratelimit-console-token';

export interface Session {
  readonly api: AdminApi;
  readonly credential: Credential;
  /** The token's name, as the audit log records the changes made with it. */
  readonly name: string | null;
  /** False with a read token: the console then shows no control that changes anything. */
  readonly canWrite: boolean;
}

/** Asks the admin what `token` may do; refuses a token the admin does not know. */
export async function logIn(token: string): Promise<Session> {
  const api = new AdminApi(token.trim());
  try {
    const { viewer } = await api.request(ViewerDocument);
    if (viewer.credential === 'unknown') {
      throw new ConsoleError('the admin does not know this token', 'UNAUTHENTICATED');
    }
    sessionStorage.setItem(STORAGE_KEY, token.trim());
    return { api, credential: viewer.credential, name: viewer.name, canWrite: viewer.canWrite };
  } catch (error) {
    api.close();
    throw error;
  }
}

/** The token of this tab's earlier login, if any. */
export function savedToken(): string | undefined {
  return sessionStorage.getItem(STORAGE_KEY) ?? undefined;
}

export function logOut(session: Session | undefined): void {
  sessionStorage.removeItem(STORAGE_KEY);
  session?.api.close();
}

/**
 * What the admin lets a request without a token do, asked with `viewer` and no Authorization:
 * `open` when it has no token configured at all (reads and writes open to anyone), `reads-open`
 * when it has an admin token but no read token; undefined when it refuses a request without a
 * token (a read token is set) or cannot be reached. Nothing of any token is sent or shown.
 */
export async function tokenlessAccess(): Promise<'open' | 'reads-open' | undefined> {
  const api = new AdminApi('');
  try {
    const { viewer } = await api.request(ViewerDocument);
    if (viewer.credential !== 'none') return undefined;
    return viewer.canWrite ? 'open' : 'reads-open';
  } catch {
    return undefined;
  } finally {
    api.close();
  }
}
