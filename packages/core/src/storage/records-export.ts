import type { RequestRecord, RequestStatus } from './metering-types.js';
import type { EpochMs } from './scalars.js';

/**
 * Where a page of request records stops: the last record of the previous page. Records sort by
 * `(createdAt, id)` descending, so records written in the same millisecond are never lost or
 * repeated between pages.
 */
export interface RecordCursor {
  createdAt: EpochMs;
  id: string;
}

/**
 * Which request records a page keeps; every field is optional and the ones given are ANDed. All
 * comparisons are exact and case-sensitive.
 */
export interface RequestRecordFilter {
  /** A record whose `model` or `requestedModel` is this id. */
  model?: string;
  status?: RequestStatus;
  keyId?: string;
  /** A record whose `metadata` holds exactly this pair (`name` follows the metadata key rules). */
  label?: { name: string; value: string };
}

/** One page of an account's ledger, newest first (`Entry` is `LedgerEntry`: see `Storage`). */
export interface LedgerPage<Entry> {
  /** At most `limit` entries, each with the balance right after it (`balanceAfterMicros`). */
  entries: Entry[];
  /** Whether older entries follow the last one. */
  hasMore: boolean;
}

/**
 * The paged reads behind `GET /v1/generations/export`, `GET /v1/generations` and `GET /v1/ledger`. Both are keyset
 * paginated and served by an index (`(account_id, created_at, id)` on `request_records`; the
 * account plus the insertion order on `ledger_entries`), so reading the N-th page costs what the
 * first one does and a caller streaming every page holds one page in memory.
 *
 * `Entry` is `LedgerEntry` (`Storage` extends `RecordsExportStorage<LedgerEntry>`); a parameter
 * only so that this file need not import `types.ts`, which imports it.
 */
export interface RecordsExportStorage<Entry> {
  /**
   * Up to `limit` request records of the account created at or after `since`, newest first
   * (`createdAt` descending, then `id` descending); with `before`, only the records that sort after
   * that cursor (pass the last record of the previous page). Records of every status, `in_progress`
   * included, unless `filter` narrows them (`since: 0` reads from the first record). A filter keeps
   * the same order and the same index: it only drops rows of the account's range, so a filter that
   * matches few records may scan many before it fills a page.
   */
  listRequestRecordsPage(
    accountId: string,
    options: { since: EpochMs; limit: number; before?: RecordCursor; filter?: RequestRecordFilter },
  ): Promise<RequestRecord[]>;

  /**
   * Up to `limit` ledger entries of the account, newest first in the order they were appended (the
   * balance chain's order, not `createdAt`, which entries of the same millisecond share); with
   * `after` (an entry id), only the entries appended before that one. `null` when `after` is not an
   * entry of this account.
   */
  listLedgerPage(
    accountId: string,
    options: { limit: number; after?: string },
  ): Promise<LedgerPage<Entry> | null>;
}
