import { useCallback, useEffect, useState } from 'preact/hooks';
import type { ApiClient } from './api-client.js';
import { useApi } from './api-context.js';

export interface Loaded<T> {
  data: T | null;
  error: string | null;
  loading: boolean;
  reload: () => void;
}

/**
 * Runs `load` with the session's API client when mounted and whenever `deps` change; the answer of
 * a superseded run is dropped, so a fast click on another range never shows the older data.
 */
export function useLoad<T>(load: (api: ApiClient) => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const api = useApi();
  const [state, setState] = useState<{ data: T | null; error: string | null; loading: boolean }>({
    data: null,
    error: null,
    loading: true,
  });
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    let current = true;
    setState((s) => ({ ...s, loading: true, error: null }));
    load(api).then(
      (data) => current && setState({ data, error: null, loading: false }),
      (error: unknown) => current && setState((s) => ({ ...s, error: messageOf(error), loading: false })),
    );
    return () => {
      current = false;
    };
  }, [api, generation, ...deps]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { ...state, reload };
}

/** The text to show for a thrown error. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
