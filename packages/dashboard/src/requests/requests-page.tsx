import { useMemo, useState } from 'preact/hooks';
import { useApi } from '../api/api-context.js';
import type { ApiKey, Generation, Page } from '../api/api-types.js';
import { buildQuery } from '../api/query-string.js';
import { useLoad } from '../api/use-load.js';
import { usePagedList } from '../api/use-paged-list.js';
import { ErrorBanner } from '../ui/error-banner.js';
import { ListFooter } from '../ui/list-footer.js';
import { NO_FILTERS, type RequestFilters, RequestFiltersForm } from './request-filters.js';
import { RequestsTable } from './requests-table.js';

const PAGE_SIZE = 50;

/** The account's requests, newest first, filtered, 50 at a time. */
export function RequestsPage() {
  const api = useApi();
  const keys = useLoad((client) => client.get<{ data: ApiKey[] }>('/v1/keys'), []);
  const [filters, setFilters] = useState<RequestFilters>(NO_FILTERS);
  const [formError, setFormError] = useState<string | null>(null);
  const list = usePagedList(
    (after) =>
      api.get<Page<Generation>>(
        `/v1/generations${buildQuery({
          limit: PAGE_SIZE,
          after,
          model: filters.model,
          status: filters.status,
          key_id: filters.keyId,
          label: filters.label,
        })}`,
      ),
    [filters],
  );
  const keyNames = useMemo(
    () => new Map((keys.data?.data ?? []).map((key) => [key.id, key.name])),
    [keys.data],
  );

  return (
    <section>
      <h1>Requests</h1>
      <RequestFiltersForm keys={keys.data?.data ?? []} onApply={setFilters} onInvalid={setFormError} />
      <ErrorBanner message={formError ?? list.error ?? keys.error} />
      <RequestsTable items={list.items} keyNames={keyNames} />
      <ListFooter list={list} emptyText="No requests match these filters." moreTestId="load-more" />
    </section>
  );
}
