import type { PagedList } from '../api/use-paged-list.js';

interface Props {
  list: PagedList<unknown>;
  /** Shown when the list loaded and has nothing. */
  emptyText: string;
  moreTestId: string;
}

/** Under a paged list: the empty text, "Loading…", or the Load more button. */
export function ListFooter({ list, emptyText, moreTestId }: Props) {
  return (
    <>
      {!list.loading && list.items.length === 0 && !list.error && <p class="muted">{emptyText}</p>}
      {list.loading && <p class="muted">Loading…</p>}
      {list.hasMore && !list.loading && (
        <button type="button" class="secondary" data-testid={moreTestId} onClick={list.loadMore}>
          Load more
        </button>
      )}
    </>
  );
}
