import { useEffect, useRef, useState } from 'preact/hooks';
import type { AdminApi } from '../../api/client';
import { StatsUpdatedDocument } from '../../api/generated';
import { LiveHistory } from '../../live/history';

/** connecting: no update yet, and not for long; then live while updates come, else reconnecting. */
export type LinkState = 'connecting' | 'live' | 'reconnecting';

/**
 * The admin pushes an update every second, also with no limiter running: this long without one
 * means the link is down, whatever the socket said.
 */
const SILENT_AFTER_MS = 4_000;
/** While silent, how often to start a new subscription (the socket itself retries with backoff). */
const RESUBSCRIBE_EVERY_MS = 5_000;

export interface LiveStats {
  readonly history: LiveHistory;
  readonly link: LinkState;
  /** Why the link is down, when the client said. */
  readonly why: string | undefined;
  /** Counts the updates taken, so that a render follows each. */
  readonly version: number;
}

/** Subscribes to statsUpdated for as long as the component lives; the history outlives outages. */
export function useLiveStats(api: AdminApi): LiveStats {
  const history = useRef(new LiveHistory()).current;
  const [version, setVersion] = useState(0);
  const [link, setLink] = useState<LinkState>('connecting');
  const [why, setWhy] = useState<string | undefined>(undefined);
  useEffect(() => {
    let lastHeardAt = Date.now();
    let subscribedAt = lastHeardAt;
    const subscribe = () =>
      api.subscribe(
        StatsUpdatedDocument,
        (data) => {
          lastHeardAt = Date.now();
          if (history.ingest(data.statsUpdated)) setVersion((v) => v + 1);
          setLink('live');
          setWhy(undefined);
        },
        (state, reason) => {
          // 'live' from the socket means connected, not yet an update: the next update says so.
          if (state === 'reconnecting') {
            setLink('reconnecting');
            setWhy(reason);
          }
        },
      );
    let unsubscribe = subscribe();
    const watchdog = setInterval(() => {
      const now = Date.now();
      if (now - lastHeardAt <= SILENT_AFTER_MS) return;
      setLink('reconnecting');
      // An admin that shuts down completes its subscriptions, and the socket's reconnection does
      // not renew a completed one (nor one that ended in an error): while silent, subscribe anew.
      if (now - subscribedAt >= RESUBSCRIBE_EVERY_MS) {
        unsubscribe();
        unsubscribe = subscribe();
        subscribedAt = now;
      }
    }, 1_000);
    return () => {
      clearInterval(watchdog);
      unsubscribe();
    };
  }, [api, history]);
  return { history, link, why, version };
}
