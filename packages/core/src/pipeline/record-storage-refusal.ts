import type { GatewayDeps } from '../gateway-deps.js';
import { HoldNotConfirmed } from '../metering/reserve-credit.js';
import type { StorageUnavailableError } from '../storage/guard-storage.js';
import type { RequestRecord } from '../storage/metering-types.js';
import { closeRecord, exportRequestSpan, failRecord } from './request-log.js';

/**
 * A request refused `503 storage_unavailable` before anything went upstream. The answer does not
 * wait for its record (the storage is what failed): the observer and the span hear of it now, and
 * the record is written behind the answer, landing once the storage answers again. When the
 * refusal is a hold past its deadline, the hold may still land: then its settle writes the record
 * and releases it, nothing charged; without it the sweep closes it when it expires.
 */
export function recordStorageRefusal(
  deps: Pick<GatewayDeps, 'storage' | 'logger' | 'spans' | 'observers' | 'now'>,
  record: RequestRecord,
  error: StorageUnavailableError,
  spanOperation: string,
): void {
  failRecord(record, error, 'refused');
  closeRecord(record, deps.now());
  exportRequestSpan(deps, record, record.requestedModel ?? record.model ?? 'unknown', spanOperation);
  const write = async () => {
    const hold = error instanceof HoldNotConfirmed ? await error.hold : null;
    if (hold) await deps.storage.settleRequest({ reservationId: hold.id, record, charge: null });
    else await deps.storage.insertRequestRecord(record);
  };
  write().catch((writeError: unknown) => {
    deps.logger.error(
      { requestId: record.id, err: { name: (writeError as Error)?.name } },
      'writing the record of a request refused for storage failed',
    );
  });
}
