import type { RequestRecord } from '../storage/metering-types.js';
import type { Storage } from '../storage/types.js';
import type { GatewayLogger } from '../telemetry/gateway-logger.js';

/**
 * Settles a request once: in one storage transaction the hold is released, the charge (when
 * non-zero) becomes exactly one ledger entry, and the record is written. If that transaction
 * fails, nothing was charged: the hold is released on its own and the failure is logged (ids
 * only). Returns whether the settle landed.
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
    if (input.reservationId) {
      await storage.releaseReservation(input.reservationId).catch((releaseError: unknown) => {
        logger.error(
          { requestId: record.id, err: { name: (releaseError as Error)?.name } },
          'releasing the hold failed; it expires on its own',
        );
      });
    }
    return false;
  }
}
