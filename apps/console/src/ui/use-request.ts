import { useCallback, useEffect, useState } from 'preact/hooks';
import { asConsoleError, type ConsoleError } from '../api/errors';

export interface Loaded<T> {
  readonly data: T | undefined;
  readonly error: ConsoleError | undefined;
  readonly loading: boolean;
  /** Loads again (after a change, say). */
  readonly reload: () => void;
}

/** Runs `load` now and on reload(); keeps the last data while a reload is under way. */
export function useRequest<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ConsoleError | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [round, setRound] = useState(0);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  useEffect(() => {
    let current = true;
    setLoading(true);
    load()
      .then((value) => {
        if (!current) return;
        setData(value);
        setError(undefined);
      })
      .catch((e: unknown) => current && setError(asConsoleError(e)))
      .finally(() => current && setLoading(false));
    return () => {
      current = false;
    };
    // The caller names in deps what load reads.
  }, [...deps, round]);
  return { data, error, loading, reload };
}
