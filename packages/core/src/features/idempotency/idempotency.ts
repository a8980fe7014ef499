import type { AuthContext } from '../../auth/authenticate.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { GatewayDeps } from '../../gateway-deps.js';
import { StorageUnavailableError } from '../../storage/guard-storage.js';
import type { IdempotencyClaimResult } from '../../storage/metering-types.js';

/** A completed key is replayed for 24 hours. */
const IDEMPOTENCY_REPLAY_MS = 24 * 60 * 60_000;
/** An in-flight claim whose process died is released after about 5 minutes. */
const IDEMPOTENCY_IN_FLIGHT_MS = 5 * 60_000;

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
/** Response headers that belong to the stored answer (the request id is the original one). */
const REPLAYED_HEADERS = ['content-type', 'x-gateway-cost-usd'];

interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

interface IdempotentRun {
  run: () => Promise<Response>;
  /** Records a refusal of the idempotency layer itself (409, a malformed key). */
  onRefused: (error: GatewayError) => Promise<void>;
  /** Records a replay (nothing is charged; the body is the stored one). */
  onReplay: (originalRequestId: string) => Promise<void>;
}

/**
 * The spec's idempotency claim, per account and `Idempotency-Key` (non-streaming requests only):
 * claim atomically before any provider is contacted; a live claim → `409 request_in_flight` with
 * `Retry-After: 1`; a completed one → the stored body and original request id with
 * `X-Gateway-Idempotent-Replay: true`, nothing charged; a request that ends without a stored
 * response (any non-200) releases the claim at once; a 200 completes it for 24 hours.
 */
export async function withIdempotency(
  deps: GatewayDeps,
  auth: AuthContext,
  requestId: string,
  key: string,
  handlers: IdempotentRun,
): Promise<Response> {
  if (!KEY_PATTERN.test(key)) {
    const error = new GatewayError(
      'invalid_request',
      'The Idempotency-Key header must be 1 to 255 visible ASCII characters.',
    );
    await handlers.onRefused(error);
    throw error;
  }
  const accountId = auth.account.id;
  const lookupId = await deps.idempotencySealer.lookupId(accountId, key);
  let claim: IdempotencyClaimResult;
  try {
    claim = await deps.storage.claimIdempotencyKey({
      accountId,
      key: lookupId,
      requestId,
      now: deps.now(),
      inFlightTtlMs: IDEMPOTENCY_IN_FLIGHT_MS,
    });
  } catch (error) {
    if (error instanceof StorageUnavailableError) {
      // A claim that lands after its deadline would answer 409 to every retry for minutes.
      void error.late?.then((late) => {
        if ((late as IdempotencyClaimResult | undefined)?.state === 'claimed') {
          return release(deps, accountId, lookupId, requestId);
        }
      });
      await handlers.onRefused(error);
    }
    throw error;
  }
  if (claim.state === 'in_flight') {
    const error = new GatewayError(
      'request_in_flight',
      'A request with this Idempotency-Key is still in flight; retry in a second.',
      { 'Retry-After': '1' },
    );
    await handlers.onRefused(error);
    throw error;
  }
  if (claim.state === 'completed') {
    const stored = JSON.parse(
      await deps.idempotencySealer.open(accountId, key, claim.responseBody),
    ) as StoredResponse;
    await handlers.onReplay(claim.requestId);
    return new Response(stored.body, {
      status: stored.status,
      headers: {
        ...stored.headers,
        'X-Gateway-Request-Id': claim.requestId,
        'X-Gateway-Idempotent-Replay': 'true',
      },
    });
  }

  let response: Response;
  try {
    response = await handlers.run();
  } catch (error) {
    // With the storage failing, the answer does not wait on it again; the release lands once it answers.
    const released = release(deps, accountId, lookupId, requestId);
    if (!(error instanceof StorageUnavailableError)) await released;
    throw error;
  }
  if (response.status !== 200) {
    await release(deps, accountId, lookupId, requestId);
    return response;
  }
  const body = await response.text();
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  try {
    await deps.storage.completeIdempotencyKey({
      accountId,
      key: lookupId,
      requestId,
      responseStatus: response.status,
      responseBody: await deps.idempotencySealer.seal(
        accountId,
        key,
        JSON.stringify({ status: response.status, headers, body }),
      ),
      now: deps.now(),
      ttlMs: IDEMPOTENCY_REPLAY_MS,
    });
  } catch (error) {
    // The answer was served and charged; only the replay is lost, and the claim expires on its own.
    deps.logger.error(
      { requestId, err: { name: (error as Error)?.name } },
      'storing the idempotent response failed',
    );
  }
  return new Response(body, { status: response.status, headers: response.headers });
}

async function release(
  deps: GatewayDeps,
  accountId: string,
  lookupId: string,
  requestId: string,
): Promise<void> {
  await deps.storage.releaseIdempotencyKey(accountId, lookupId, requestId).catch((error: unknown) => {
    deps.logger.error(
      { requestId, err: { name: (error as Error)?.name } },
      'releasing the idempotency claim failed; it expires on its own',
    );
  });
}
