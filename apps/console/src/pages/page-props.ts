import type { Session } from '../session';

/** What every page gets: the session (its API and whether it may change anything). */
export interface PageProps {
  readonly session: Session;
}
