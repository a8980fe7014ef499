import { GatewayError, internalError } from '../errors/gateway-error.js';
import { StorageUnavailableError } from '../storage/guard-storage.js';
import type { RequestRecord } from '../storage/metering-types.js';
import type { Storage } from '../storage/types.js';
import type { GatewayLogger } from '../telemetry/gateway-logger.js';

/**
 * Settles a request once: in one storage transaction the hold is released, the charge (when
 * non-zero) becomes exactly one ledger entry, and the record is written. If that transaction
 * fails, nothing was charged and the failure is logged (ids only); the caller writes the record of
 * the failure it became and then calls {@link releaseHold}. Returns `null` when the settle landed,
 * else the error the request answers with: `503 storage_unavailable` when the storage failed or
 * missed its deadline (a settle past its deadline may still land: then it is the one that counts,
 * and the failure's record and release that follow are refused or do nothing), else `500`.
 */
export async function settleRequest(
  storage: Storage,
  logger: GatewayLogger,
  input: { reservationId: string | null; record: RequestRecord; description: string },
): Promise<GatewayError | null> {
  const { record } = input;
  const charge =
    record.costMicros > 0
      ? { amountMicros: record.costMicros, description: input.description, keyId: record.keyId }
      : null;
  try {
    await storage.settleRequest({ reservationId: input.reservationId, record, charge });
    return null;
  } catch (error) {
    const cause = error instanceof StorageUnavailableError ? error.cause : error;
    const late = error instanceof StorageUnavailableError && error.late !== null;
    logger.error(
      {
        requestId: record.id,
        err: { name: (cause as Error)?.name, code: (cause as { code?: unknown })?.code },
      },
      late
        ? 'settle past its deadline: it lands or fails once storage answers'
        : 'settle failed; nothing was charged',
    );
    if (!(error instanceof StorageUnavailableError)) return internalError();
    return new GatewayError(
      'storage_unavailable',
      'The gateway could not settle this request: its storage failed. GET /v1/generation tells whether it was charged once storage answers again.',
      { 'Retry-After': '1' },
    );
  }
}

/**
 * Releases the hold of a request whose settle failed, once its record says so: the storage closes
 * a record still `in_progress` with the hold, so releasing first would close it before the failure
 * was written. A release that fails is logged; the hold then expires on its own.
 */
export async function releaseHold(
  storage: Storage,
  logger: GatewayLogger,
  reservationId: string,
  requestId: string,
): Promise<void> {
  await storage.releaseReservation(reservationId).catch((releaseError: unknown) => {
    logger.error(
      { requestId, err: { name: (releaseError as Error)?.name } },
      'releasing the hold failed; it expires on its own',
    );
  });
}
