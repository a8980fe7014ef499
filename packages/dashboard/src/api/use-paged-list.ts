import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { Page } from './api-types.js';
import { messageOf } from './use-load.js';

export interface PagedList<T> {
  items: T[];
  hasMore: boolean;
  loading: boolean;
  error: string | null;
  loadMore: () => void;
}

/**
 * A cursor-paged list (`{data, has_more}`, next page `after=<last id>`): the first page whenever
 * `deps` change, then one more page per `loadMore`. Pages of a superseded query are dropped.
 */
export function usePagedList<T extends { id: string }>(
  loadPage: (after: string | undefined) => Promise<Page<T>>,
  deps: readonly unknown[],
): PagedList<T> {
  const [items, setItems] = useState<T[]>([]);
  const [hasMore, setHasMore] = useState(false);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const query = useRef(0);
  const loader = useRef(loadPage);
  loader.current = loadPage;

  const fetchPage = useCallback((after: string | undefined, previous: T[]) => {
    const mine = query.current;
    setLoading(true);
    setError(null);
    loader.current(after).then(
      (page) => {
        if (mine !== query.current) return;
        setItems([...previous, ...page.data]);
        setHasMore(page.has_more);
        setLoading(false);
      },
      (e: unknown) => {
        if (mine !== query.current) return;
        setError(messageOf(e));
        setLoading(false);
      },
    );
  }, []);

  useEffect(() => {
    query.current += 1;
    setItems([]);
    setHasMore(false);
    fetchPage(undefined, []);
  }, deps);

  const loadMore = useCallback(() => {
    const last = items[items.length - 1];
    if (last) fetchPage(last.id, items);
  }, [items, fetchPage]);

  return { items, hasMore, loading, error, loadMore };
}
