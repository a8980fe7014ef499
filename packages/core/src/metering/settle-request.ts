import type { RequestRecord } from '../storage/metering-types.js';
import type { Storage } from '../storage/types.js';
import type { GatewayLogger } from '../telemetry/gateway-logger.js';

/**
 * Settles a request once: in one storage transaction the hold is released, the charge (when
 * non-zero) becomes exactly one ledger entry, and the record is written. If that transaction
 * fails, nothing was charged and the failure is logged (ids only); the caller writes the record of
 * the failure it became and then calls {@link releaseHold}. Returns whether the settle landed.
 */
export async function settleRequest(
  storage: Storage,
  logger: GatewayLogger,
  input: { reservationId: string | null; record: RequestRecord; description: string },
): Promise<boolean> {
  const { record } = input;
  const charge =
    record.costMicros > 0
      ? { amountMicros: record.costMicros, description: input.description, keyId: record.keyId }
      : null;
  try {
    await storage.settleRequest({ reservationId: input.reservationId, record, charge });
    return true;
  } catch (error) {
    logger.error(
      {
        requestId: record.id,
        err: { name: (error as Error)?.name, code: (error as { code?: unknown })?.code },
      },
      'settle failed; nothing was charged',
    );
    return false;
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
