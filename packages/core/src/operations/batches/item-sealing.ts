import type { BodySealer } from '../../protections/sealed-body.js';
import type { ItemResult } from './batch-view.js';

/**
 * A batch item's request body and its answer are stored sealed (AES-256-GCM under the server secret,
 * the account and the item's request id), so the database holds neither prompt nor completion in
 * clear. Body and answer are sealed under different keys: one can never be opened as the other.
 */
export const itemSealing = {
  sealBody: (sealer: BodySealer, accountId: string, requestId: string, body: unknown) =>
    sealer.seal(accountId, `body:${requestId}`, JSON.stringify(body)),
  openBody: (sealer: BodySealer, accountId: string, requestId: string, sealed: string) =>
    sealer.open(accountId, `body:${requestId}`, sealed),
  sealResult: (sealer: BodySealer, accountId: string, requestId: string, result: ItemResult) =>
    sealer.seal(accountId, `result:${requestId}`, JSON.stringify(result)),
  openResult: async (
    sealer: BodySealer,
    accountId: string,
    requestId: string,
    sealed: string,
  ): Promise<ItemResult> => JSON.parse(await sealer.open(accountId, `result:${requestId}`, sealed)),
};
